"""The ``vtt`` command: serve, db, questions, demo, analyze.

Heavy imports stay inside the commands so ``vtt serve`` can monkey-patch for gevent first.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click

from .tools import fail, login_banner, redact, db_factory, settings, warn_missing_glyphs
from .media import media as media_group
from .session import session as session_group

FORMAT_CHOICES = ["auto", "csv", "json", "dramaqa", "tvqa", "cinepile", "moviecore"]


class _Commands(click.Group):
    """Turns a missing or unreachable database into one line instead of a traceback."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except Exception as error:
            message = _environment_problem(error)
            if message is None:
                raise
            raise click.ClickException(message) from error


def _environment_problem(error: Exception) -> str | None:
    from alembic.util.exc import CommandError
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError, OperationalError, ProgrammingError

    url = redact(settings().database_url)
    if isinstance(error, (ArgumentError, NoSuchModuleError)):
        return f"DATABASE_URL is not a usable database URL ({url}): {error}"
    if isinstance(error, OperationalError | ProgrammingError):
        reason = str(error.orig).strip().splitlines()[0] if error.orig else str(error)
        if "no such table" in reason or ("relation" in reason and "does not exist" in reason):
            return f"the database at {url} has no vtt tables yet: run `vtt db upgrade` ({reason})"
        return f"cannot use the database at {url}: {reason}"
    if isinstance(error, CommandError):
        return f"migration: {error}"
    return None


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """vtt: run a live Video Turing Test and report CogME profiles and vote tallies."""


# --- serve --------------------------------------------------------------------------------------

@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on (0.0.0.0 for a LAN).")
@click.option("--port", default=5000, show_default=True, type=click.IntRange(1, 65535))
@click.option("--audit-log", type=click.Path(dir_okay=False),
              help="Append every message the server sends to clients to this file, one JSON line each "
                   "(default: VTT_AUDIT_LOG).")
def serve(host: str, port: int, audit_log: str | None) -> None:
    """Serve the app with gevent (websockets included)."""
    import gevent
    from gevent import monkey

    monkey.patch_all()
    # Every greenlet would otherwise record the stack that spawned it: ~7 % of a loaded server's CPU.
    gevent.config.track_greenlet_tree = False
    from ..serving.server import serve as run_server

    run_server(host, port, audit_log)


# --- db -----------------------------------------------------------------------------------------

@main.group()
def db() -> None:
    """Database schema (Alembic migrations)."""


@db.command("upgrade")
@click.argument("revision", default="head")
def db_upgrade(revision: str) -> None:
    """Apply migrations up to REVISION (default: the newest)."""
    from ..db import current_revision, upgrade

    url = settings().database_url
    upgrade(url, revision)
    click.echo(f"database at revision {current_revision(url)} ({redact(url)})")


@db.command("downgrade")
@click.argument("revision")
def db_downgrade(revision: str) -> None:
    """Revert migrations down to REVISION ("base" empties the database)."""
    from ..db import current_revision, downgrade

    url = settings().database_url
    downgrade(url, revision)
    click.echo(f"database at revision {current_revision(url) or 'base'}")


@db.command("current")
def db_current() -> None:
    """Print the database's revision."""
    from ..db import current_revision

    click.echo(current_revision(settings().database_url) or "base (empty)")


# --- questions ----------------------------------------------------------------------------------

@main.group()
def questions() -> None:
    """Question banks: import, check, build a session set."""


def _read(file: Path, fmt: str, strict: bool, allow_missing_keys: bool = False):
    """Read a bank file (on a terminal with a progress bar, gone before any verdict); print its quirks."""
    import sys

    from ..banks import read_bank

    options = {"strict": strict, "allow_missing_keys": allow_missing_keys}
    if not sys.stderr.isatty():  # a log or a pipe gets no progress text at all
        result = read_bank(file, fmt, **options)
    else:
        from tqdm import tqdm

        with tqdm(total=_lines_in(file), unit=" questions", desc=f"reading {file.name}", leave=False,
                  file=sys.stderr, dynamic_ncols=True, mininterval=0.2) as bar:
            result = read_bank(file, fmt, progress=lambda done: bar.update(done - bar.n), **options)
    _print_quirks(result.warnings)
    return result


def _unkeyed_line(result) -> str:
    count = len(result.unkeyed)
    if not count:
        return ""
    return (f"; {count:,} without a key (their answers are graded by hand or left out of accuracy)")


def _print_quirks(warnings) -> None:
    from ..problems import summarize, unique

    warnings = unique(warnings)
    if warnings:
        count = len(warnings)
        click.echo(f"warning: {count:,} known quirk{'s' if count != 1 else ''} of published files, imported as "
                   f"noted (--strict refuses them):", err=True)
        for line in summarize(warnings, "--strict lists them as problems"):
            click.echo(f"  {line}", err=True)


def _lines_in(file: Path) -> int | None:
    """About how many items a line-based file holds (the bar's total); None for a JSON document."""
    if file.suffix.lower() == ".json":
        return None
    with file.open("rb") as handle:
        return max(sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b"")), 1)


def _print_balance(records) -> None:
    from analysis.composition import composition

    from ..banks import records_frame
    from ..banks.summary import balance_lines

    for line in balance_lines(composition(records_frame(records))):
        click.echo(line)


problems_out_option = click.option(
    "--problems-out", type=click.Path(dir_okay=False, path_type=Path),
    help="Write every problem to this CSV (file, row, field, value, message); the terminal shows each kind once.")
missing_keys_option = click.option(
    "--allow-missing-keys", is_flag=True,
    help="Take questions without a key (a benchmark's test split): their answers are graded by hand or left out "
         "of accuracy.")
strict_option = click.option(
    "--strict", is_flag=True, help="Refuse the known quirks of published files (NaN or zero-length spans, options "
                                   "with stray whitespace, integer qids, a question text twice) instead of warning.")


@questions.command("check")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(FORMAT_CHOICES), default="auto", show_default=True)
@problems_out_option
@strict_option
@missing_keys_option
def questions_check(file: Path, fmt: str, problems_out: Path | None, strict: bool, allow_missing_keys: bool) -> None:
    """Validate FILE and print its CogME balance; writes nothing (but --problems-out)."""
    from ..problems import InputError

    try:
        result = _read(file, fmt, strict, allow_missing_keys)
    except InputError as error:
        fail(error, "the file is not valid", problems_out)
    click.echo(f"{file.name}: {len(result.records)} questions, format {result.format}, no problems"
               + _unkeyed_line(result))
    _print_balance(result.records)


@questions.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(FORMAT_CHOICES), default="auto", show_default=True)
@click.option("--bank", "bank_name", help="Bank to add the questions to (default: the file's name).")
@problems_out_option
@strict_option
@missing_keys_option
def questions_import(file: Path, fmt: str, bank_name: str | None, problems_out: Path | None, strict: bool,
                     allow_missing_keys: bool) -> None:
    """Import FILE into a question bank: every question or none."""
    from ..banks import import_bank
    from ..db import transaction
    from ..problems import InputError

    bank_name = bank_name or file.stem
    try:
        result = _read(file, fmt, strict, allow_missing_keys)
        with transaction(db_factory()) as db:
            import_bank(db, result, bank_name)
    except InputError as error:
        fail(error, "nothing was imported", problems_out)
    click.echo(f"imported {len(result.records)} questions ({result.format}) into bank {bank_name!r}; "
               f"{len(result.untagged)} without CogME tags" + _unkeyed_line(result))
    _print_balance(result.records)


@questions.command("tag")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--bank", "bank_name", required=True, help="The bank whose questions to tag.")
def questions_tag(file: Path, bank_name: str) -> None:
    """Set CogME tags from a CSV qid,targets,contents,thinking (replaces those questions' tags)."""
    from ..banks import bank_by_name
    from ..banks.readers import read_tag_file
    from ..banks.store import apply_tags
    from ..db import transaction
    from ..problems import InputError

    try:
        tags = read_tag_file(file)
        with transaction(db_factory()) as db:
            bank = bank_by_name(db, bank_name)
            if bank is None:
                fail(f"no question bank named {bank_name!r}")
            count = apply_tags(db, bank, tags, file.name)
    except InputError as error:
        fail(error, "no tag was changed")
    click.echo(f"tagged {count} questions in bank {bank_name!r}")


@questions.command("build")
@click.option("--bank", "bank_name", required=True, help="The bank to pick from.")
@click.option("--count", default=30, show_default=True, type=click.IntRange(min=1))
@click.option("--rounds", default=5, show_default=True, type=click.IntRange(min=1))
@click.option("--mcq", type=click.IntRange(min=0), help="Exactly this many multiple-choice questions (rest open).")
@click.option("--shot", type=click.IntRange(min=0), help="Exactly this many shot clips (rest scene).")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the set as a native CSV with its round column.")
def questions_build(bank_name: str, count: int, rounds: int, mcq: int | None, shot: int | None, seed: int,
                    out: Path | None) -> None:
    """Pick a CogME-balanced set from a bank and deal it into rounds."""
    from analysis.builder import build_set

    from ..banks import bank_by_name, bank_records, records_frame
    from ..banks.writers import write_native_csv

    with db_factory()() as db:
        bank = bank_by_name(db, bank_name)
        if bank is None:
            fail(f"no question bank named {bank_name!r}")
        records = {r.qid: r for r in bank_records(db, bank)}
    try:
        built = build_set(records_frame(list(records.values())), count, rounds, mcq=mcq, shot=shot, seed=seed)
    except ValueError as error:
        fail(error)
    chosen = built.questions
    click.echo(f"{len(chosen)} questions from {bank_name!r} in {rounds} rounds (seed {seed})")
    for note in built.notes:
        click.echo(f"note: {note}")
    for row in chosen.itertuples():
        tags = records[row.qid].tags.as_text()
        click.echo(f"  round {row.round} #{row.position:<2} {row.qid:<12} {row.type:<4} {row.clip or '-':<5} "
                   f"{tags['targets']} | {tags['contents']} | {tags['thinking']}")
    click.echo(f"{'element':<14}{'bank':>7}{'bank %':>8}{'set':>6}{'set %':>8}")
    for row in built.comparison().itertuples():
        click.echo(f"{row.element:<14}{row.bank:>7}{row.bank_pct:>8.1f}{row.set:>6}{row.set_pct:>8.1f}")
    if out:
        write_native_csv([replace(records[row.qid], round=int(row.round)) for row in chosen.itertuples()], out)
        click.echo(f"wrote {out}")


@questions.command("list")
def questions_list() -> None:
    """List the banks and their sizes."""
    from sqlalchemy import func, select

    from ..models import Question, QuestionBank

    from ..models import QuestionType

    unkeyed = ((Question.type == QuestionType.MCQ) & Question.answer_index.is_(None)) | (
        (Question.type == QuestionType.OPEN) & (Question.reference_answer == ""))
    with db_factory()() as db:
        rows = db.execute(select(QuestionBank.name, func.count(Question.id),
                                      func.count(Question.id).filter(unkeyed)).outerjoin(Question)
                               .group_by(QuestionBank.id).order_by(QuestionBank.name)).all()
    if not rows:
        click.echo("no banks yet")
    for name, count, without_key in rows:
        click.echo(f"{name}\t{count}" + (f"\t({without_key} without a key)" if without_key else ""))


# --- demo ---------------------------------------------------------------------------------------

@main.group()
def demo() -> None:
    """The demo question bank and session."""


@demo.command("load")
def demo_load() -> None:
    """Load the demo bank and session, and make its clips in the media folder (a second run changes nothing)."""
    from ..db import transaction
    from ..sessions.demo import load_demo
    from ..sessions.demo.clips import ensure_demo_clips

    with transaction(db_factory()) as db:
        for line in load_demo(db):
            click.echo(line)
    click.echo(ensure_demo_clips(settings().media_dir))


@main.command("host-login")
@click.option("--host", help="The host the server listens on (as given to serve); 0.0.0.0 prints this machine's "
                             "LAN address. Default: the running server's (see below), else 127.0.0.1.")
@click.option("--port", type=click.IntRange(1, 65535),
              help="The port the server listens on. Default: the running server's, else 5000.")
@click.option("--url", help="Print this address instead (e.g. behind a proxy); VTT_BASE_URL does the same.")
def host_login(host: str | None, port: int | None, url: str | None) -> None:
    """Print where and how the host signs in.

    The address, in order: --url, VTT_BASE_URL, --host/--port, the server serving this instance folder now
    (`vtt serve` and run.py note where in instance/serving.json), else http://127.0.0.1:5000.
    """
    from .tools import cli_base_url
    from ..serving.netaddr import LOOPBACK, base_url

    if url or settings().base_url or (host is None and port is None):
        click.echo(login_banner(cli_base_url(url)))
    else:
        click.echo(login_banner(base_url(host or LOOPBACK, port or 5000)))


@main.command("host-token")
def host_token_command() -> None:
    """Print the host's API token: host control for a script over Socket.IO, without the login form.

    A client connects with auth {"code": CODE, "role": "host", "host_token": TOKEN} (docs/protocol.md).  The
    token is derived from this installation's secret key and host password: every process of the installation
    accepts it, and changing the host password (VTT_HOST_PASSWORD or instance/host_password) revokes it.
    """
    from ..access.host_token import host_token

    click.echo(host_token(settings().secret_key, settings().host_password))


# --- analyze ------------------------------------------------------------------------------------

@main.command()
@click.option("--questions", "questions_file", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Question bank file in any importable format (an optional round column groups votes).")
@click.option("--answers", "answers_file", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="CSV player,qid,answer[,correct][,kind], or one model's predictions: JSON qid -> option, JSONL/CSV "
                   "rows of qid + prediction, or MovieCORE prediction JSON (see --player).")
@click.option("--player", "player_name", help="The player of a predictions file (default: the file's name).")
@click.option("--votes", "votes_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="CSV round,juror,vote[,confidence][,slot][,group][,expert][,age_band][,sex]; an empty vote abstains.")
@click.option("--format", "fmt", type=click.Choice(FORMAT_CHOICES), default="auto", show_default=True,
              help="Format of the questions file.")
@click.option("--method", type=click.Choice(["uniform", "cogsci2024", "frontiers2022"]), default="cogsci2024",
              show_default=True, help="CogME scoring method.")
@click.option("--pass-rule", type=click.Choice(["human-tie", "chance", "threshold"]), default="human-tie",
              show_default=True)
@click.option("--alpha", default=0.05, show_default=True, type=click.FloatRange(0, 1, min_open=True, max_open=True),
              help="Significance level of the chance rule.")
@click.option("--threshold", default=70.0, show_default=True, type=click.FloatRange(0, 100),
              help="Detection % at or below which the AI passes (threshold rule).")
@click.option("--ai", "ai_names", multiple=True, help="A player who is an AI (repeat for several).")
@click.option("--sheet", "sheet_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="CSV juror,qid,player,looks_like_ai of the judgment sheets: adds exposure.csv and an exposure "
                   "table to the PDFs (with --out).")
@click.option("--title", default="Video Turing Test report", show_default=True)
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write profiles.pdf, tallies.pdf, report.pdf and a CSV per table here.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with every figure to stdout.")
@click.option("--lang", "language", type=click.Choice(["en", "ko"]), default="en", show_default=True,
              help="The PDFs' language (with --out; the CSVs are the same in both).")
def analyze(questions_file: Path, answers_file: Path, player_name: str | None, votes_file: Path | None, fmt: str,
            method: str, pass_rule: str, alpha: float, threshold: float, ai_names: tuple[str, ...],
            sheet_file: Path | None, title: str, out_dir: Path | None, as_json: bool, language: str) -> None:
    """CogME profiles and vote statistics from files (e.g. a model's predictions on a tagged benchmark)."""
    import json

    from analysis.cogme import profiles as cogme_profiles
    from analysis.inputs import InputError as FileError
    from analysis.inputs import read_sheet, read_votes
    from analysis.predictions import PredictionsError
    from analysis.results import analysis_json
    from analysis.votes import exposure, vote_stats

    from ..banks import records_frame
    from ..problems import InputError

    try:
        # A test split's questions may lack keys: answers to them then need a correct column (0/1).
        questions = records_frame(_read(questions_file, fmt, strict=False, allow_missing_keys=True).records)
        answers = _answers(answers_file, questions, ai_names, player_name)
        players = answers.drop_duplicates("player")[["player", "kind"]].rename(columns={"player": "name"})
        if (votes_file or sheet_file) and not (players["kind"] == "ai").any():
            needs = " and the ".join(what for what, file in (("votes", votes_file), ("judgment sheet", sheet_file))
                                     if file)
            fail(f"no AI player in {answers_file.name}, and the {needs} need one (detection is the share naming "
                  "the AI): name the AI with --ai NAME or a kind column (human/ai) in the answers file")
        votes = read_votes(votes_file, players) if votes_file else None
        sheet = read_sheet(sheet_file, questions, players) if sheet_file else None
    except (InputError, FileError, PredictionsError) as error:
        fail(error)
    result = cogme_profiles(questions, answers, method)
    stats = vote_stats(votes, players, pass_rule, alpha, threshold) if votes is not None else None
    if out_dir:
        from analysis.report import write_reports
        from analysis.report_text import report_language, t

        with report_language(language):
            info = _analysis_info(questions, questions_file, answers_file, votes_file, sheet_file)
            title = t(title)  # the default title in the PDFs' language; one of the user's own stays as given
        written = write_reports(out_dir, language=language, questions=questions, answers=answers, profiles=result,
                                stats=stats, title=title, session_info=info,
                                exposure=exposure(sheet, players, answers) if sheet is not None else None)
        click.echo(f"wrote {len(written)} files to {out_dir}: {', '.join(sorted(written))}", err=as_json)
        warn_missing_glyphs(written)
    if as_json:
        click.echo(json.dumps(analysis_json(result, stats), ensure_ascii=False, allow_nan=False))
    elif not out_dir:
        _print_analysis(analysis_json(result, stats))


def _answers(path: Path, questions, ai_names: tuple[str, ...], player: str | None):
    """An answers CSV, or a predictions file (with what it holds beyond the set, and its coverage, on stderr)."""
    from analysis.inputs import check_answers, read_answers
    from analysis.predictions import coverage, is_predictions_file, read_predictions, split_unknown

    if not is_predictions_file(path):
        if player:
            fail(f"--player names the player of a predictions file; {path.name} has a player column")
        return read_answers(path, questions, ai_names)
    table, unknown = split_unknown(read_predictions(path, player), set(questions["qid"].astype(str)))
    if unknown:
        shown = ", ".join(map(repr, unknown[:10])) + (", ..." if len(unknown) > 10 else "")
        click.echo(f"warning: {len(unknown):,} prediction{'s' if len(unknown) != 1 else ''} in {path.name} name "
                   f"questions not in the {len(questions):,}-question set, left out: {shown}", err=True)
    answers = check_answers(table.reset_index(drop=True), path, questions, ai_names)
    for line in coverage(answers, len(questions)):
        click.echo(line, err=True)
    return answers


def _analysis_info(frame, questions: Path, answers: Path, votes: Path | None,
                   sheet: Path | None = None) -> dict[str, str]:
    from analysis.report_text import t

    from .reports import unkeyed_info

    info = {t("Questions"): questions.name, t("Answers"): answers.name}
    if votes:
        info[t("Votes")] = votes.name
    if sheet:
        info[t("Judgment sheet")] = sheet.name
    return {**info, **unkeyed_info(frame)}


def _print_analysis(summary: dict) -> None:
    def pct(value) -> str:
        return "n/a" if value is None else f"{value:.1f}%"

    click.echo(f"CogME profiles (method {summary['method']})")
    for player in summary["players"]:
        sd = "n/a" if player["element_sd"] is None else f"{player['element_sd']:.2f}"
        click.echo(f"  {player['name']} ({player['kind']}): {player['correct']}/{player['questions']} correct, "
                   f"accuracy {pct(player['accuracy_pct'])}, element SD {sd}")
    if summary["rounds"]:
        click.echo(f"Votes (pass rule {summary['pass_rule']})")
        for row in summary["rounds"]:
            passed = {True: "AI passed", False: "AI detected", None: "no votes"}[row["ai_passed"]]
            click.echo(f"  round {row['round']}: {row['votes']} votes, {row['abstentions']} abstentions, "
                       f"detection {pct(row['detection_pct'])}, {passed}")
        judged = [row for row in summary["rounds"] if row["ai_passed"] is not None]
        silent = len(summary["rounds"]) - len(judged)
        silent_text = f" ({silent} round{'s' if silent != 1 else ''} without votes)" if silent else ""
        click.echo(f"  AI passed {sum(row['ai_passed'] for row in judged)} of {len(judged)} rounds{silent_text}, "
                   f"mean detection {pct(summary['mean_detection_pct'])}")


main.add_command(session_group)
main.add_command(media_group)


# --- report, export (a live session's data) ---------------------------------------------------

from .reports import export, report  # noqa: E402

main.add_command(report)
main.add_command(export)

from .simulate import simulate  # noqa: E402

main.add_command(simulate)

from .agent import agent  # noqa: E402

main.add_command(agent)


if __name__ == "__main__":
    main()
