"""``vtt simulate``: bots play a session on a running server, and the server's record is checked.

Registered on the ``vtt`` group by ``vtt/cli/main.py``; imports ``vtt.cli.tools`` and lower modules only.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from pathlib import Path

import click

from .tools import db_factory, fail, settings


@click.command("simulate")
@click.option(
    "--url",
    required=True,
    help="The running server, e.g. http://127.0.0.1:5000 (it must serve the "
    "configured database: the bots' session is made or read there).",
)
@click.option("--session", "code", metavar="CODE", help="Seat bots in every player and juror place of this session.")
@click.option(
    "--new",
    "new",
    is_flag=True,
    help="Create a session on the demo bank with bot players, a bot AI and --jurors bot jurors.",
)
@click.option("--jurors", type=click.IntRange(1, 20000), help="Bot jurors of a --new session.")
@click.option(
    "--players",
    type=click.IntRange(1, 6),
    default=4,
    show_default=True,
    help="Human bot players of a --new session (one bot AI plays too).",
)
@click.option("--rounds", type=click.IntRange(1, 5), default=2, show_default=True, help="Rounds of a --new session.")
@click.option(
    "--questions",
    type=click.IntRange(1, 6),
    default=3,
    show_default=True,
    help="Questions per round of a --new session.",
)
@click.option(
    "--seed", type=int, default=1, show_default=True, help="Seeds every bot's choices (and a --new session's shuffles)."
)
@click.option(
    "--pace",
    type=click.FloatRange(0.01, 100),
    default=1.0,
    show_default=True,
    help="Multiplies the bots' think times (0.1: fast; 3: like people).",
)
@click.option(
    "--drive",
    is_flag=True,
    help="A host bot drives the session (with the host's API token, see vtt host-token); "
    "otherwise the bots wait for a person at the host console.",
)
@click.option(
    "--timeout", type=click.FloatRange(1), default=1800, show_default=True, help="Seconds the whole session may take."
)
@click.option(
    "--report",
    "report_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Once the session has finished, write its report here (as `vtt report CODE --out DIR`).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON object with the figures (anything else goes to stderr)."
)
@click.pass_context
def simulate(
    ctx: click.Context,
    url: str,
    code: str | None,
    new: bool,
    jurors: int | None,
    players: int,
    rounds: int,
    questions: int,
    seed: int,
    pace: float,
    drive: bool,
    timeout: float,
    report_dir: Path | None,
    as_json: bool,
) -> None:
    """Bots play a whole session over the real Socket.IO protocol on the server at --url.

    Jurors write judgment-sheet lines (sometimes a draft first) and vote; players answer within
    the time limit; some jurors reload or lose the network for a moment.  Afterwards the server's
    event log is read back: recorded == acknowledged for votes, sheet lines and answers, or exit 1.
    """
    from ..access.host_token import host_token
    from ..bots.behaviour import Habits
    from ..bots.simulate import Run, summary
    from ..db import transaction
    from ..sessions.simulation import cast_of, create_simulation, recorded

    if new == bool(code):
        fail("give exactly one of --session CODE and --new")
    if new and not jurors:
        fail("--new needs --jurors N")
    url = url.rstrip("/")
    factory = db_factory()
    try:
        with transaction(factory) as db:
            cast = create_simulation(db, jurors, players, seed, rounds, questions) if new else cast_of(db, code)
    except (LookupError, ValueError) as error:
        fail(error)
    run = Run(
        url,
        cast,
        seed=seed,
        habits=Habits(pace=pace),
        timeout=timeout,
        host_token=host_token(settings().secret_key, settings().host_password) if drive else None,
        progress=sys.stderr.isatty() and not as_json,
    )
    if not as_json:
        click.echo(
            f"session {cast.code}: {cast.jurors} jurors, {len(cast.seats) - cast.jurors} players, "
            f"{cast.rounds} rounds; {'the host bot drives' if drive else 'waiting for the host'}",
            err=True,
        )
    try:
        asyncio.run(run.play())
    except RuntimeError as error:  # the server refused the host's token
        fail(error, "the bots did not play")
    with factory() as db:
        figures = summary(run, recorded(db, cast.session_id, run.run))
    if report_dir is not None and figures["phase"] == "finished":
        from .reports import report

        with contextlib.redirect_stdout(sys.stderr if as_json else sys.stdout):
            ctx.invoke(report, code=cast.code, out_dir=report_dir, title=None)
    elif report_dir is not None:
        click.echo(f"no report: the session is at {figures['phase']}, not finished", err=True)
    if as_json:
        click.echo(json.dumps(figures))
    else:
        _print(figures)
    kinds = ("votes", "sheets", "answers")
    if figures["errors"] or any(figures[f"{k}_acked"] != figures[f"{k}_recorded"] for k in kinds):
        sys.exit(1)


def _print(figures: dict) -> None:
    ack = figures["ack_ms"]
    click.echo(f"session {figures['session']}: {figures['phase']}")
    for kind in ("answers", "sheets", "votes"):
        same = "OK" if figures[f"{kind}_acked"] == figures[f"{kind}_recorded"] else "MISMATCH"
        click.echo(f"  {kind}: {figures[f'{kind}_acked']} acknowledged, {figures[f'{kind}_recorded']} recorded {same}")
    click.echo(f"  ack: p50 {ack['p50']} ms, p95 {ack['p95']} ms, p99 {ack['p99']} ms, max {ack['max']} ms")
    click.echo(
        f"  {figures['refreshes']} page reloads, {figures['reconnects']} dropped connections; "
        f"{figures['refused']} refusals, {figures['errors']} errors"
    )
    for problem in figures["problems"]:
        click.echo(f"  {problem}")
