"""``vtt jury``: juries beside the live one, judging a finished session's rounds."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .tools import ProgressBar, cli_base_url, db_factory, fail, settings

CUT_SHORT_HELP = (
    "Offer a round cut short too (begun, but stopped before its vote opened: the live jury never judged it); it is "
    "labelled cut short and never pooled with the whole rounds.  [default: offered to no other jury]"
)


@click.group()
def jury() -> None:
    """Juries beside the live one: jurors who judge a finished session's rounds after it (their votes never
    change the live jury's tallies and verdicts). docs/juries.md."""


def _rounds(value: str | None) -> list[int] | None:
    if not value:
        return None
    try:
        return [int(part) for part in value.split(",") if part.strip()]
    except ValueError:
        fail(f"--rounds: {value!r} is not a comma-separated list of round numbers")


@jury.command("ai")
@click.argument("code")
@click.option(
    "--judge",
    "spec",
    required=True,
    envvar="VTT_JUDGE_URL",
    show_envvar=True,
    help="http:URL of an OpenAI-compatible chat-completions endpoint (vLLM, Ollama, llama.cpp, a local server).",
)
@click.option("--model", required=True, envvar="VTT_JUDGE_MODEL", show_envvar=True, help="The model it serves.")
@click.option("--rounds", "rounds", default=None, help="Comma-separated rounds.  [default: every judgeable round]")
@click.option("--cut-short", is_flag=True, help=CUT_SHORT_HELP)
@click.option(
    "--frames",
    type=click.IntRange(0, 32),
    default=0,
    show_default=True,
    help="Frames of each question's clip sent as images (a vision model); 0: the text only.",
)
@click.option("--temperature", type=float, default=0.0, show_default=True)
@click.option("--concurrency", type=click.IntRange(1, 32), default=2, show_default=True, help="Calls at once.")
@click.option("--timeout", type=click.FloatRange(min=1), default=120.0, show_default=True, help="Seconds per call.")
@click.option("--max-tokens", type=click.IntRange(min=1), default=None, help="Cap on each reply's tokens.")
@click.option("--api-key", envvar=["VTT_JUDGE_API_KEY", "OPENAI_API_KEY"], show_envvar=True, default=None)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with the run's figures.")
def jury_ai(
    code: str,
    spec: str,
    model: str,
    rounds: str | None,
    frames: int,
    temperature: float,
    concurrency: int,
    timeout: float,
    max_tokens: int | None,
    api_key: str | None,
    as_json: bool,
    cut_short: bool,
) -> None:
    """Ask a model to judge the finished session CODE (join code) as a juror: one call per round, with what the
    live jury saw of it (questions and answers under aliases; with --frames, frames of the clips), naming the alias
    it takes for the AI.

    Its votes are those of an AI juror named after the model, kept apart from the live jury's, with each reply's
    provenance. A second run asks only the rounds not yet read with the same prompt; another model is another
    juror."""
    from ..juries.ai import JuryError, JurySettings, judge_session
    from ..results.session_rows import session_by_code

    try:
        run_settings = JurySettings.from_spec(
            spec,
            model,
            temperature=temperature,
            api_key=api_key,
            timeout=timeout,
            concurrency=concurrency,
            frames=frames,
            media_dir=settings().media_dir,
            max_tokens=max_tokens,
        )
    except JuryError as error:
        fail(error)
    chosen = _rounds(rounds)
    factory = db_factory()
    with factory() as db:
        session = session_by_code(db, code)
        if session is None:
            fail(f"no session with join code {code.strip().upper()!r} (`vtt session list` shows every session)")
        session_id = session.id
    with ProgressBar(f"{model}: {{total}} rounds to judge", as_json) as bar:
        try:
            summary = judge_session(
                factory,
                session_id,
                run_settings,
                chosen,
                cut_short=cut_short,
                started=bar.started,
                progress=bar.progress,
            )
        except JuryError as error:
            fail(error)
    if as_json:
        click.echo(json.dumps(summary.as_dict()))
    else:
        click.echo(
            f"{summary.juror} ({summary.model}), rounds {', '.join(map(str, summary.rounds))}: "
            f"{summary.asked} asked, {summary.read} read, {summary.unread} unread (no alias named: asked again next "
            f"run), {summary.failed} failed, {summary.skipped} skipped (judged before with this prompt); "
            f"{summary.votes} votes, {summary.named_ai} of them name an AI player"
        )
        for problem in summary.problems:
            click.echo(f"  {problem}", err=True)
    if summary.stopped:
        fail(f"the run stopped: {summary.stopped} (what was read is kept: run again to go on)")


@jury.command("displaced")
@click.argument("code")
@click.option("--jurors", "count", type=click.IntRange(1), default=None, help="How many jurors to make, each a link.")
@click.option(
    "--open",
    "open_cap",
    type=click.IntRange(0),
    default=None,
    metavar="CAP",
    help="Make one open link instead: each arrival gets a juror of their own, up to CAP (0: no cap).",
)
@click.option("--rounds", default=None, help="The rounds each juror judges, e.g. 1,3 (default: every round).")
@click.option("--attention", is_flag=True, help="Add an instructed-response line (an attention check).")
@click.option("--cut-short", is_flag=True, help=CUT_SHORT_HELP)
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path), help="Write the links as CSV.")
@click.option("--base-url", help="What the links start with (default: VTT_BASE_URL, else the running server's).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object: jurors [{label, token, url}].")
def displaced(
    code: str,
    count: int | None,
    open_cap: int | None,
    rounds: str | None,
    attention: bool,
    cut_short: bool,
    csv_path: Path | None,
    base_url: str | None,
    as_json: bool,
) -> None:
    """Make a displaced jury for the finished session CODE: N jurors with their links, or an open link."""
    from sqlalchemy import select

    from ..juries.displaced import JuryError, create_jurors, links_csv, open_link
    from ..models import VttSession

    if (count is None) == (open_cap is None):
        raise click.UsageError("give either --jurors N or --open CAP")
    base = cli_base_url(base_url)
    with db_factory()() as db:
        vtt_session = db.scalar(select(VttSession).where(VttSession.join_code == code.strip().upper()))
        if vtt_session is None:
            fail(click.ClickException(f"no session has the code {code!r}"))
        try:
            if count is not None:
                made = create_jurors(db, vtt_session, count, rounds, attention, cut_short)
                db.commit()
            else:
                link = open_link(db, vtt_session, open_cap or None, rounds, attention, cut_short)
                db.commit()
        except JuryError as error:
            db.rollback()
            fail(click.ClickException(error.message))
    if open_cap is not None:
        url = f"{base}/jury/open/{link.token}"
        if as_json:
            click.echo(json.dumps({"open_url": url, "cap": link.cap, "rounds": link.rounds}))
        else:
            cap = f"up to {link.cap:,} jurors" if link.cap else "no cap"
            click.echo(f"Open displaced link for session {vtt_session.join_code} ({cap}):\n  {url}")
        return
    if csv_path is not None:
        csv_path.write_text(links_csv(made, base), encoding="utf-8")
    if as_json:
        listed = [{"label": j.label, "token": j.token, "url": f"{base}/jury/{j.token}"} for j in made]
        click.echo(json.dumps({"session": vtt_session.join_code, "jurors": listed}, ensure_ascii=False))
        return
    click.echo(f"{len(made):,} displaced juror(s) for session {vtt_session.join_code}:")
    for juror in made:
        click.echo(f"  {juror.label}  {base}/jury/{juror.token}")
    if csv_path is not None:
        click.echo(f"Links written to {csv_path}")
