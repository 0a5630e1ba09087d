"""What every ``vtt`` command group shares: settings, a database session factory, error output.

Heavy imports stay inside the functions so ``vtt serve`` can monkey-patch for gevent first.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click


def settings():
    from ..config import Settings

    return Settings.from_env()


def db_factory():
    from ..db import db_factory_from_env

    return db_factory_from_env()


def fail(error, consequence: str = "nothing was written", problems_out=None) -> None:
    """Print an input error, each kind of problem once (``vtt.problems.summarize``), and exit 1.

    ``problems_out``: also write every problem to this CSV file (file, row, field, value, message).
    """
    from ..problems import Problem, summarize, unique, write_problems_csv

    problems = unique(getattr(error, "problems", None) or [])
    if problems:
        click.echo(f"error: {len(problems):,} problem{'s' if len(problems) != 1 else ''}; {consequence}", err=True)
        located = all(isinstance(problem, Problem) for problem in problems)  # analysis' are lines already
        hint = f"all of them in {problems_out}" if problems_out else "--problems-out FILE lists them all"
        for line in summarize(problems, hint) if located else problems:
            click.echo(f"  {line}", err=True)
        if problems_out and located:
            write_problems_csv(problems, problems_out)
    else:
        click.echo(f"error: {error}", err=True)
    sys.exit(1)


def session_or_fail(db, code: str):
    """The session whose join code is ``code`` (any case, spaces around), else exit 1 saying so."""
    from ..results.session_rows import session_by_code

    session = session_by_code(db, code)
    if session is None:
        fail(f"no session with join code {code.strip().upper()!r} (`vtt session list` shows every session)")
    return session


def with_option(message: str, option: str | None) -> str:
    """A domain's message on the command line: after the option it concerns (the domain names no option)."""
    return f"{option}: {message}" if option else message


def model_call_options(*, concurrency: int, timeout: float):
    """The options of a command that calls a chat-completions model (``vtt grade suggest``, ``vtt jury ai``):
    the endpoint, the model and how to call it (``concurrency`` and ``timeout``: its settings' defaults; a test
    holds them equal)."""
    options = [
        click.option(
            "--judge",
            "spec",
            required=True,
            envvar="VTT_JUDGE_URL",
            show_envvar=True,
            help="The URL (http:// or https://) of an OpenAI-compatible chat-completions endpoint (vLLM, Ollama, "
            "llama.cpp, a local server); http:URL, the agents' spelling, works too.",
        ),
        click.option("--model", required=True, envvar="VTT_JUDGE_MODEL", show_envvar=True, help="The model it serves."),
        click.option("--temperature", type=float, default=0.0, show_default=True),
        click.option(
            "--concurrency",
            type=click.IntRange(1, 32),
            default=concurrency,
            show_default=True,
            help="Calls at once.",
        ),
        click.option(
            "--timeout",
            type=click.FloatRange(min=1),
            default=timeout,
            show_default=True,
            help="Seconds per call.",
        ),
        click.option("--max-tokens", type=click.IntRange(min=1), default=None, help="Cap on each reply's tokens."),
        click.option("--api-key", envvar=["VTT_JUDGE_API_KEY", "OPENAI_API_KEY"], show_envvar=True, default=None),
    ]

    def apply(command):
        for option in reversed(options):
            command = option(command)
        return command

    return apply


# The options of the commands that call a model (vtt jury ai, vtt grade suggest), by the setting a refusal names.
MODEL_OPTIONS = {
    "endpoint": "--judge",
    "model": "--model",
    "timeout": "--timeout",
    "concurrency": "--concurrency",
    "frames": "--frames",
    "dimensions": "--dimensions",
}


def redact(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def cli_base_url(given: str | None = None) -> str:
    """What links printed by the command line start with: ``given`` (--url, --base-url), VTT_BASE_URL,
    the address of the server running on this instance folder, else http://127.0.0.1:5000."""
    from ..serving.record import served_base_url
    from ..sessions.links import choose_base_url

    return choose_base_url(given, settings().base_url or served_base_url())


def warn_missing_glyphs(written) -> None:
    """Name the characters the PDFs' font could not draw (``written.missing_characters``), on stderr."""
    missing = getattr(written, "missing_characters", ())
    if missing:
        shown = ", ".join(f"U+{ord(ch):04X} {ch}" for ch in missing[:20]) + (" ..." if len(missing) > 20 else "")
        click.echo(
            f"warning: the PDFs' font cannot show {len(missing)} character(s), printed as blanks or boxes "
            f"(the CSVs keep them; each PDF's cover lists them): {shown}",
            err=True,
        )


# --- options that several commands share ------------------------------------------------------------


def out_dir_option(help: str, required: bool = False):
    """``--out DIR``: the folder a command writes its files into."""
    import click

    return click.option(
        "--out", "out_dir", required=required, type=click.Path(file_okay=False, path_type=Path), help=help
    )


def language_option(help: str = "The PDFs' language (the CSVs are the same in both)."):
    """``--lang en|ko``: the language of the PDFs a command draws."""
    import click

    return click.option(
        "--lang", "language", type=click.Choice(["en", "ko"]), default="en", show_default=True, help=help
    )


def pass_rule_options(command):
    """``--pass-rule``, ``--alpha`` and ``--threshold``: a session's pass rule, as `vtt analyze` and `vtt plan` take
    it (the function receives ``pass_rule``, ``alpha`` and ``threshold_pct``)."""
    import click

    for option in reversed(
        [
            click.option(
                "--pass-rule",
                type=click.Choice(["human-tie", "chance", "threshold"]),
                default="human-tie",
                show_default=True,
            ),
            click.option(
                "--alpha",
                default=0.05,
                show_default=True,
                type=click.FloatRange(0, 1, min_open=True, max_open=True),
                help="Significance level of the chance rule.",
            ),
            click.option(
                "--threshold",
                "threshold_pct",
                default=70.0,
                show_default=True,
                type=click.FloatRange(0, 100),
                help="Detection % at or below which the AI passes (threshold rule).",
            ),
        ]
    ):
        command = option(command)
    return command


class ProgressBar:
    """A run's progress bar on stderr, drawn once the run says how many steps it has (``started``), one step per
    ``progress``; none with --json. ``label`` may say ``{total}``.  ``with ProgressBar(label, as_json) as bar:
    run(started=bar.started, progress=bar.progress)``."""

    def __init__(self, label: str, quiet: bool):
        self.label, self.quiet = label, quiet
        self.bar = None

    def started(self, total: int) -> None:
        if not self.quiet:
            self.bar = click.progressbar(length=total, label=self.label.format(total=total), file=sys.stderr)
            self.bar.__enter__()

    def progress(self, _step: object = None) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *_exc: object) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
