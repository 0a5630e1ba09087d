"""``vtt jury``: juries beside the live one, judging a finished session's rounds."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .tools import (
    MODEL_OPTIONS,
    ProgressBar,
    cli_base_url,
    db_factory,
    fail,
    model_call_options,
    session_or_fail,
    settings,
    with_option,
)

CUT_SHORT_HELP = (
    "Offer a round cut short too (begun, but stopped before its vote opened: the live jury never judged it); it is "
    "labelled cut short and never pooled with the whole rounds.  [default: offered to no other jury]"
)


# The options a refusal of vtt.juries concerns (by its code), named here: the domain's messages name no option.
REFUSAL_OPTIONS = {
    "bad_rounds": "--rounds",
    "cut_short": "--rounds",
    "bad_complete_url": "--complete-url",
    "bad_params": "--participant-param, --study-param, --session-param",
    "bad_count": "--jurors",
    "bad_cap": "--open",
    **{f"bad_{setting}": option for setting, option in MODEL_OPTIONS.items()},
}


def refusal_text(error) -> str:
    """A :class:`vtt.juries.rounds.JuryError` on the command line: after the option it concerns, and naming
    ``--cut-short`` when it would offer a round cut short."""
    text = with_option(error.message, REFUSAL_OPTIONS.get(error.code))
    if error.cut_short:
        text += f"; --cut-short offers round {', '.join(map(str, error.cut_short))}"
    return text


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
@model_call_options(concurrency=2, timeout=120.0)  # JurySettings' defaults
@click.option("--rounds", "rounds", default=None, help="Comma-separated rounds.  [default: every judgeable round]")
@click.option("--cut-short", is_flag=True, help=CUT_SHORT_HELP)
@click.option(
    "--frames",
    type=click.IntRange(0, 32),
    default=0,
    show_default=True,
    help="Frames of each question's clip sent as images (a vision model); 0: the text only.",
)
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
        fail(refusal_text(error))
    chosen = _rounds(rounds)
    factory = db_factory()
    with factory() as db:
        session_id = session_or_fail(db, code).id
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
            fail(refusal_text(error))
    if as_json:
        click.echo(json.dumps(summary.as_dict()))
    else:
        busy = f", {summary.busy} left to another run asking them now" if summary.busy else ""
        click.echo(
            f"{summary.juror} ({summary.model}), rounds {', '.join(map(str, summary.rounds))}: "
            f"{summary.asked} asked, {summary.read} read, {summary.unread} unread (no alias named: asked again next "
            f"run), {summary.failed} failed, {summary.skipped} skipped (judged before with this prompt){busy}; "
            f"{summary.votes} votes, {summary.named_ai} of them name an AI player"
        )
        for problem in summary.problems:
            click.echo(f"  {problem}", err=True)
    if summary.stopped:
        fail(f"the run stopped: {summary.stopped} (what was read is kept: run again to go on)")
    if summary.nothing_read:
        fail(f"{summary.nothing_read} (run again once the endpoint answers)")


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
@click.option(
    "--complete-url",
    default=None,
    metavar="URL",
    help="Where the end of the task sends each juror, with their completion code in place of {code} "
    "(e.g. 'https://app.prolific.com/submissions/complete?cc={code}').",
)
@click.option(
    "--participant-param",
    default="PROLIFIC_PID",
    show_default=True,
    help="With --open: the query parameter that carries the crowd platform's participant id ('': not read).",
)
@click.option("--study-param", default="STUDY_ID", show_default=True, help="With --open: the study id's ('': none).")
@click.option(
    "--session-param", default="SESSION_ID", show_default=True, help="With --open: the platform session id's."
)
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
    complete_url: str | None,
    participant_param: str,
    study_param: str,
    session_param: str,
    cut_short: bool,
    csv_path: Path | None,
    base_url: str | None,
    as_json: bool,
) -> None:
    """Make a displaced jury for the finished session CODE: N jurors with their links, or an open link (for a crowd
    platform: one juror per participant, found again by the platform's participant id or the browser)."""

    from ..juries.displaced import JuryError, create_jurors, links_csv, open_link
    from ..juries.displaced_crowd import IdParams

    if (count is None) == (open_cap is None):
        raise click.UsageError("give either --jurors N or --open CAP")
    ids = IdParams(participant_param, study_param, session_param)
    base = cli_base_url(base_url)
    with db_factory()() as db:
        vtt_session = session_or_fail(db, code)
        try:
            if count is not None:
                made = create_jurors(
                    db, vtt_session, count, rounds, attention, cut_short=cut_short, complete_url=complete_url
                )
                db.commit()
            else:
                link = open_link(
                    db,
                    vtt_session,
                    open_cap or None,
                    rounds,
                    attention,
                    cut_short=cut_short,
                    ids=ids,
                    complete_url=complete_url,
                )
                db.commit()
                ids = IdParams(link.participant_param, link.study_param, link.session_param)
        except JuryError as error:
            db.rollback()
            fail(click.ClickException(refusal_text(error)))
    if open_cap is not None:
        _print_open_link(f"{base}/jury/open/{link.token}", vtt_session.join_code, link, ids, as_json)
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


def _print_open_link(url: str, session_code: str, link, ids, as_json: bool) -> None:
    if as_json:
        shown = {"open_url": url, "cap": link.cap, "rounds": link.rounds, "complete_url": link.complete_url}
        click.echo(json.dumps({**shown, "participant_params": ids.as_dict()}))
        return
    cap = f"up to {link.cap:,} jurors" if link.cap else "no cap"
    click.echo(f"Open displaced link for session {session_code} ({cap}):\n  {url}")
    read = [f"{what} id from {name}" for what, name in ids.as_dict().items() if name]
    click.echo(f"Reads the {', '.join(read)} on the link." if read else "Reads no participant id from the link.")
    if link.complete_url:
        click.echo(f"The end of the task sends each juror to {link.complete_url} (their code in place of {{code}}).")
