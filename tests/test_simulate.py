"""``vtt simulate``: bots play whole sessions on a real gevent server; the server's record is read back."""

from __future__ import annotations

import asyncio
import json
import time

import pandas as pd
from sqlalchemy import func, select

from tests.support.apps import host_api_token
from tests.support.live import make_session
from tests.support.served import ServedApp
from vtt.bots.behaviour import Habits
from vtt.bots.simulate import Run
from vtt.models import Answer, Event, Phase, SheetEntry, Vote, VttSession
from vtt.sessions.simulation import cast_of, recorded


def scalar(db_factory, query):
    with db_factory() as db:
        return db.scalar(query)


def simulate_json(run, *args: str) -> dict:
    result = run("simulate", *args, "--json")
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_simulate_new_plays_a_whole_session_and_the_record_matches(run, migrated_database_url, tmp_path):
    backend_url = migrated_database_url
    from vtt.db import make_db_factory, make_engine

    with ServedApp({"DATABASE_URL": backend_url}) as served:
        figures = simulate_json(
            run,
            "--url",
            served.url,
            "--new",
            "--jurors",
            "20",
            "--drive",
            "--pace",
            "0.1",
            "--seed",
            "3",
            "--timeout",
            "60",
            "--report",
            str(tmp_path / "report"),
        )
    assert "Traceback" not in served.output, served.output
    assert (figures["jurors"], figures["rounds"], figures["phase"], figures["errors"]) == (20, 2, "finished", 0)
    for kind in ("votes", "sheets", "answers"):
        assert figures[f"{kind}_acked"] == figures[f"{kind}_recorded"] > 0, (kind, figures)
    # 20 jurors x 2 rounds voted (a few changed their minds); 5 players x 6 questions answered (a few twice).
    assert 40 <= figures["votes_recorded"] <= 60 and 30 <= figures["answers_recorded"] <= 36
    # Sheet messages: at least one per juror and question, each with every line typed since the last save.
    assert 20 * 6 <= figures["sheets_recorded"]
    ack = figures["ack_ms"]
    assert 0 < ack["p50"] <= ack["p95"] <= ack["p99"] <= ack["max"]

    engine = make_engine(backend_url)
    try:
        factory = make_db_factory(engine)
        sid = scalar(factory, select(VttSession.id).where(VttSession.join_code == figures["session"]))
        assert scalar(factory, select(VttSession.phase).where(VttSession.id == sid)) is Phase.FINISHED
        # Rows: one vote per juror and round (changes overwrite), one answer per player and question.
        voters = select(func.count()).select_from(
            select(Vote.juror_id, Vote.round).where(Vote.session_id == sid).distinct().subquery()
        )
        assert scalar(factory, select(func.count()).select_from(Vote).where(Vote.session_id == sid)) == 40
        assert scalar(factory, voters) == 40
        assert scalar(factory, select(func.count()).select_from(Answer).where(Answer.session_id == sid)) == 30
        lines = scalar(factory, select(func.count()).select_from(SheetEntry).where(SheetEntry.session_id == sid))
        assert figures["sheets_recorded"] < lines and lines >= 20 * 30 * 0.5  # most answers noted
    finally:
        engine.dispose()
    report = tmp_path / "report"
    assert {"profiles.pdf", "tallies.pdf", "report.pdf"} <= {p.name for p in report.iterdir()}
    rounds = pd.read_csv(report / "rounds.csv")
    assert rounds["round"].tolist() == [1, 2]
    assert (rounds["voters"] + rounds["abstentions"]).tolist() == [20, 20]  # a juror may abstain


def test_bots_seated_in_an_existing_session_survive_reloads_and_dropped_connections(database_url, db_factory, capsys):
    people = make_session(db_factory, rounds=2, per_round=2, jurors=8)
    with db_factory() as db:
        cast = cast_of(db, people.code.lower())
    assert (cast.code, cast.jurors, len(cast.seats), cast.rounds) == (people.code, 8, 11, 2)
    habits = Habits(pace=0.1, refresh=0.5, drop=0.5, change_vote=0.5)
    with ServedApp({"DATABASE_URL": database_url}) as served:
        simulation = Run(
            served.url, cast, seed=5, habits=habits, host_token=host_api_token(), timeout=120, progress=True
        )
        ledger = asyncio.run(simulation.play())
    bar = capsys.readouterr().err.replace("\r", "\n").strip().splitlines()[-1]
    assert "2/2" in bar and "round 2/2 finished" in bar and f"{ledger.acked['votes']} votes" in bar, bar
    assert "Traceback" not in served.output, served.output
    assert not ledger.errors and not ledger.refused, ledger.examples
    assert ledger.refreshes > 0 and ledger.reconnects > 0
    with db_factory() as db:
        server = recorded(db, people.session_id, simulation.run)
        changed = db.scalar(
            select(func.count()).select_from(Event).where(Event.session_id == people.session_id, Event.kind == "vote")
        )
    assert server["phase"] == "finished"
    assert server["counts"] == {
        "votes": ledger.acked["votes"],
        "sheets": ledger.acked["sheets"],
        "answers": ledger.acked["answers"],
    }
    assert changed > 16  # some jurors changed their vote: every change is in the event log
    assert count_rows(db_factory, Vote, people.session_id) == 16


def count_rows(db_factory, model, session_id: int) -> int:
    return scalar(db_factory, select(func.count()).select_from(model).where(model.session_id == session_id))


def test_simulate_refuses_bad_arguments_with_one_line(run, database_url):
    for args, message in [
        (["--url", "http://127.0.0.1:9"], "give exactly one of --session CODE and --new"),
        (["--url", "http://127.0.0.1:9", "--new"], "--new needs --jurors N"),
        (["--url", "http://127.0.0.1:9", "--session", "NOPE42"], "no session has the join code 'NOPE42'"),
    ]:
        result = run("simulate", *args)
        assert result.exit_code == 1 and message in result.output, result.output


def test_a_host_token_the_server_refuses_stops_the_run(run, database_url, monkeypatch):
    people_url = database_url
    with ServedApp({"DATABASE_URL": people_url}) as served:
        monkeypatch.setenv("VTT_HOST_PASSWORD", "not the server's")
        result = run("simulate", "--url", served.url, "--new", "--jurors", "2", "--drive", "--timeout", "30")
    assert result.exit_code == 1
    assert "the server refused the host bot: sign in as the host first" in result.output


def test_a_driven_simulation_survives_a_server_killed_and_restarted(database_url, db_factory):
    """kill -9 mid-session, a new server on the same port: the host bot comes back (its token is in the auth,
    not a cookie the engine.io client drops after the first connect) and the run finishes with every
    acknowledged action recorded."""
    people = make_session(db_factory, rounds=2, per_round=2, jurors=6)
    with db_factory() as db:
        cast = cast_of(db, people.code)
    first = ServedApp({"DATABASE_URL": database_url}).__enter__()
    simulation = Run(first.url, cast, seed=3, habits=Habits(pace=0.1), host_token=host_api_token(), timeout=150)
    restarted: list[ServedApp] = []

    def answers_recorded() -> int:
        return count_rows(db_factory, Answer, people.session_id)

    async def scenario():
        playing = asyncio.create_task(simulation.play())
        deadline = time.monotonic() + 60
        while await asyncio.to_thread(answers_recorded) < 3:  # mid round 1
            assert time.monotonic() < deadline and not playing.done(), "the run did not start"
            await asyncio.sleep(0.2)
        first.process.kill()  # SIGKILL: no clean shutdown
        await asyncio.to_thread(first.process.wait)
        second = ServedApp({"DATABASE_URL": database_url})
        second.port, second.url = first.port, first.url
        restarted.append(await asyncio.to_thread(second.__enter__))
        return await playing

    try:
        ledger = asyncio.run(scenario())
    finally:
        for served in [first, *restarted]:
            if served.process.poll() is None:
                served.__exit__(None, None, None)
    assert restarted, "the server was not restarted"
    with db_factory() as db:
        server = recorded(db, people.session_id, simulation.run)
    assert server["phase"] == "finished", (server, ledger.examples)
    assert server["counts"] == {
        "votes": ledger.acked["votes"],
        "sheets": ledger.acked["sheets"],
        "answers": ledger.acked["answers"],
    }
    assert ledger.acked["votes"] > 0 and not ledger.errors, ledger.examples
    assert "Traceback" not in restarted[0].output, restarted[0].output
