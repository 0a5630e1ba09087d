"""``vtt session``: create a session from a design file, list the sessions, show one with its links.

Imports only from :mod:`vtt.cli.tools` and below (never from :mod:`vtt.cli.main`, which registers this group).
Heavy imports stay inside the commands so ``vtt serve`` can monkey-patch for gevent first.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from .tools import db_factory, fail, session_or_fail, settings

SHORT_HASH = 12  # hex characters of the design hash in text output


def _base_url(given: str | None) -> str:
    from .tools import cli_base_url

    if given and not re.match(r"^https?://[^/\s]+", given):
        raise click.BadParameter(f"{given!r} is not an http:// or https:// address", param_hint="--base-url")
    return cli_base_url(given)


base_url_option = click.option(
    "--base-url",
    help="What the links start with (default: VTT_BASE_URL, else the address of the server running "
    "on this instance folder, noted by `vtt serve` in instance/serving.json, else "
    "http://127.0.0.1:5000).",
)


@click.group()
def session() -> None:
    """Sessions: create one from a design file, list them, show one with everyone's link."""


def _jurors_from_option(value: str) -> list[dict[str, Any]]:
    from ..problems import InputError, Problem
    from ..sessions.create import numbered_jurors, read_jurors_csv

    if re.fullmatch(r"[0-9]+", value.strip()):
        try:
            return numbered_jurors(int(value))
        except InputError as error:  # the domain names its input "jurors": here it is the option
            raise InputError([replace(problem, file="--jurors") for problem in error.problems]) from None
    path = Path(value)
    if not path.is_file():
        raise InputError(
            [Problem("--jurors", None, None, f"{value!r} is neither a number of jurors nor an existing CSV file")]
        )
    return read_jurors_csv(path)


@session.command("create")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--jurors",
    "jurors_option",
    metavar="N|FILE.csv",
    help="N: N jurors labelled J01..JN; FILE.csv: columns label,age_band,sex,expert[,group] (expert: "
    "yes/no/true/false/1/0 or empty). Either replaces the design's own jurors list.",
)
@click.option("--name", help="Use this session name instead of the design's (the name is part of the hashed design).")
@base_url_option
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print one JSON object: code, name, seed, design hash, links, each player's and juror's token.",
)
def session_create(
    file: Path, jurors_option: str | None, name: str | None, base_url: str | None, as_json: bool
) -> None:
    """Create a session from the JSON design FILE (as vtt/sessions/demo/session.json) and print everyone's link.

    The design (with the jurors given by --jurors, if any) is stored with the session and its sha256 recorded:
    the session's frozen, pre-registered design. A design without a seed gets one drawn at random, recorded too.
    A design with any problem is refused whole, with every problem listed.
    """
    from ..db import transaction
    from ..problems import InputError, load_json
    from ..sessions.create import SessionConfig, create_session
    from ..sessions.links import person_links

    base = _base_url(base_url)
    problems = []
    jurors = None
    if jurors_option is not None:
        try:
            jurors = _jurors_from_option(jurors_option)
        except InputError as error:
            problems += error.problems
    try:
        data = load_json(file)
    except InputError as error:
        fail(InputError(problems + error.problems))
    if isinstance(data, dict):
        if name is not None:
            data["name"] = name
        if jurors_option is not None:
            data.pop("jurors", None)  # replaced: the file's own list is neither checked nor kept
            if jurors is not None:
                data["jurors"] = jurors
    try:
        config = SessionConfig.from_dict(data, source=file.name)
    except InputError as error:
        problems += error.problems
    if problems:
        fail(InputError(problems), "no session was created")
    from ..media.check import check_clips
    from ..media.preflight import preflight_lines, session_refs

    try:
        with transaction(db_factory()) as db:
            created = create_session(db, config, actor="cli")
            summary = _summary(created, person_links(created, base, settings().secret_key))
            clips = [ref for _where, ref in session_refs(db, created.id)]
    except InputError as error:
        fail(error, "no session was created")
    # created all the same: a clip can be fixed before the session starts, and the console checks it again
    summary["clip_warnings"] = preflight_lines(summary["name"], check_clips(settings().media_dir, clips))
    if as_json:
        click.echo(json.dumps(summary, ensure_ascii=False))
        return
    seed_source = "from the design" if config.seed is not None else "drawn at random, recorded"
    click.echo(f"created session {summary['name']!r}")
    click.echo(f"join code:   {summary['code']}")
    click.echo(f"seed:        {summary['seed']} ({seed_source})")
    click.echo(
        f"design hash: {summary['design_hash'][:SHORT_HASH]} (sha256; `vtt session show "
        f"{summary['code']}` prints it whole)"
    )
    if summary["clip_warnings"]:
        click.echo("warning: not every clip is ready (`vtt media check --bank NAME` checks the bank again):", err=True)
        for line in summary["clip_warnings"]:
            click.echo(f"  {line}", err=True)
    _print_links(summary)


def _width(text: str) -> int:
    """Columns a text takes in a terminal: East Asian wide characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - _width(text))


def _summary(vtt, links: dict[str, Any]) -> dict[str, Any]:
    return {"code": vtt.join_code, "name": vtt.name, "seed": vtt.seed, "design_hash": vtt.design_hash, **links}


def _print_links(summary: dict[str, Any], facets: dict[str, str] | None = None) -> None:
    click.echo(f"stage screen: {summary['stage_url']}")
    click.echo(f"open join:    {summary['join_url'] or 'off (only the jurors below)'}")
    players = summary["players"]
    click.echo(f"players ({len(players)}):")
    width = max((_width(p["label"]) for p in players), default=0)
    for player in players:
        modes = player["answer_modes"]
        answers_by = f"  ({', '.join(modes)})" if modes != ["text"] else ""  # a young child's: the host needs it
        click.echo(f"  {_pad(player['label'], width)}  {player['kind']:<5}  {player['url']}{answers_by}")
    jurors = summary["jurors"]
    click.echo(f"jurors ({len(jurors)}):" if jurors else "jurors: none yet")
    width = max((_width(j["label"]) for j in jurors), default=0)
    for juror in jurors:
        about = (facets or {}).get(juror["label"], "")
        click.echo(f"  {_pad(juror['label'], width)}  {juror['url']}" + (f"  ({about})" if about else ""))


@session.command("list")
def session_list() -> None:
    """One line per session: code, name, phase, rounds, players, jurors (the live jury's), displaced and AI jurors
    (who judged it afterwards), created (UTC); jurors the host removed are not counted."""
    from sqlalchemy import func, select

    from ..kinds import Jury
    from ..models import Juror, Player, VttSession

    players = (
        select(func.count(Player.id)).where(Player.session_id == VttSession.id).correlate(VttSession).scalar_subquery()
    )

    def jurors(jury: Jury):
        return (
            select(func.count(Juror.id))
            .where(Juror.session_id == VttSession.id, Juror.jury == jury, Juror.removed_at.is_(None))
            .correlate(VttSession)
            .scalar_subquery()
        )

    with db_factory()() as db:
        rows = db.execute(
            select(
                VttSession.join_code,
                VttSession.name,
                VttSession.phase,
                VttSession.rounds,
                players,
                jurors(Jury.LIVE),
                jurors(Jury.DISPLACED),
                jurors(Jury.AI),
                VttSession.created_at,
            ).order_by(VttSession.created_at, VttSession.id)
        ).all()
    if not rows:
        click.echo("no sessions yet (`vtt session create FILE` makes one)")
        return
    table = [("code", "name", "phase", "rounds", "players", "jurors", "displaced", "ai_jurors", "created")]
    table += [
        (code, name, str(phase), *(str(count) for count in counts), created.strftime("%Y-%m-%d %H:%M UTC"))
        for code, name, phase, *counts, created in rows
    ]
    widths = [max(_width(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        click.echo(
            "  ".join(
                cell.rjust(w) if 3 <= i <= 7 else _pad(cell, w) for i, (cell, w) in enumerate(zip(row, widths))
            ).rstrip()
        )


@session.command("show")
@click.argument("code")
@base_url_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (the state, everyone's token and link).")
def session_show(code: str, base_url: str | None, as_json: bool) -> None:
    """A session's state, design hash, players and jurors with their links (CODE: the join code)."""

    from ..sessions.links import person_links

    base = _base_url(base_url)
    with db_factory()() as db:
        vtt = session_or_fail(db, code)
        summary = _summary(vtt, person_links(vtt, base, settings().secret_key))
        state = {
            "phase": str(vtt.phase),
            "status": str(vtt.status),
            "current_round": vtt.current_round,
            "current_position": vtt.current_position,
            "state_version": vtt.state_version,
            "created_at": vtt.created_at.isoformat(),
        }
        facets = {j.label: _facets(j) for j in vtt.jurors}
        about = {
            "bank": vtt.bank.name if vtt.bank else None,
            "rounds": vtt.rounds,
            "questions_per_round": vtt.questions_per_round,
        }
    if as_json:
        click.echo(json.dumps({**summary, **state, **about}, ensure_ascii=False))
        return
    if state["current_round"] is None:
        where = "not started"
    elif state["current_position"] is None:
        where = f"round {state['current_round']}, no question yet"
    else:
        where = f"round {state['current_round']}, question {state['current_position']}"
    click.echo(f"session {summary['name']!r}  join code {summary['code']}")
    click.echo(f"phase:         {state['phase']} ({where}); state version {state['state_version']}")
    click.echo(
        f"design:        {about['rounds']} rounds x {about['questions_per_round']} questions "
        f"from bank {about['bank']!r}"
    )
    click.echo(f"seed:          {summary['seed']}")
    click.echo(f"design hash:   {summary['design_hash'] or '(none recorded)'}")
    click.echo(f"created:       {state['created_at']}")
    _print_links(summary, facets)


def _facets(juror) -> str:
    expert = {True: "AI expert", False: "not an AI expert", None: None}[juror.expert]
    return ", ".join(
        part for part in (juror.age_band, juror.sex, expert, juror.juror_group and f"group {juror.juror_group}") if part
    )


@session.command("delete-recordings")
@click.argument("code")
@click.option("--yes", is_flag=True, help="Do not ask: delete them (for scripts).")
def session_delete_recordings(code: str, yes: bool) -> None:
    """Delete every recording of spoken answers of the session CODE (consent withdrawn, or the data plan's end).

    The audio files go, with whatever else the server wrote of them (unacknowledged uploads, exports being built);
    each take's row stays with its deletion time (recordings.csv says a take existed), and confirmed transcripts
    stay as answers. A running session is refused: finish it first.
    """

    from ..db import transaction
    from ..recordings import RecordingProblem, delete_all

    config = settings().flask_config()
    folder = Path(config["RECORDINGS_DIR"])
    wanted = code.strip().upper()
    with transaction(db_factory()) as db:
        vtt = session_or_fail(db, code)
        if not yes:
            click.confirm(f"Delete every recording of {vtt.name} ({wanted})? This cannot be undone.", abort=True)
        try:
            count = delete_all(db, folder, vtt, "cli", Path(config["EXPORTS_DIR"]))
        except RecordingProblem as problem:
            fail(problem.message)
    click.echo(f"deleted {count} recordings of {wanted} from {folder}")
