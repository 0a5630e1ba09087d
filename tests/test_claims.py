"""The timers' claim: one process runs the deadlines, another takes over when it dies (PostgreSQL required when
CI=true)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from tests.support.apps import threaded_app
from tests.support.live import make_session
from tests.support.waiting import wait_until
from vtt.db import make_db_factory, make_engine, upgrade
from vtt.engine.actions import Actor
from vtt.models import Event, VttSession
from vtt.realtime.claims import Claims

HOST = Actor("host")


def counting_ticks(hubs) -> list[int]:
    """How often each hub's ticker has ticked from now on (each tick asks its timers' claim once)."""
    ticks = [0] * len(hubs)
    for number, hub in enumerate(hubs):
        claim = hub.writer.claims

        def held(number=number, held=claim.held) -> bool:
            ticks[number] += 1
            return held()

        claim.held = held
    return ticks


def test_on_sqlite_the_one_process_always_runs_the_timers(database_url):
    claim = Claims(database_url)
    assert claim.held() is True
    assert claim.holds is True
    claim.release()


@pytest.mark.postgres
def test_one_claim_holds_the_timers_and_another_takes_them_when_its_connection_closes(postgres_url):
    first, second = Claims(postgres_url), Claims(postgres_url)
    try:
        assert [first.held(), second.held()] == [True, False]
        assert [first.held(), second.held()] == [True, False]  # the holder keeps it; the other still tries
        first.release()  # its connection closes, as a process's does when it dies
        assert first.holds is False
        assert second.held() is True
        assert first.held() is False
    finally:
        first.release()
        second.release()


@pytest.mark.postgres
def test_a_deadline_is_acted_on_once_by_two_processes_on_one_database(postgres_url):
    upgrade(postgres_url)
    engine = make_engine(postgres_url)
    factory = make_db_factory(engine)
    people = make_session(factory, rounds=1, per_round=1)
    apps = [threaded_app(postgres_url) for _ in range(2)]
    hubs = [app.extensions["vtt.hub"] for app in apps]
    try:
        for move in ("open_lobby", "start_round", "show_question"):
            assert hubs[0].act(people.session_id, HOST, move, {})["ok"]
        hubs[1].writer  # noqa: B018 - both processes' writers, and so their tickers, run
        ticks = counting_ticks(hubs)
        wait_until(lambda: sum(hub.holds_timers for hub in hubs) == 1, timeout=5, message="one hub holding the timers")
        assert hubs[1].act(people.session_id, HOST, "open_answering", {"seconds": 1})["ok"]

        def phase() -> str:
            with factory() as db:
                return db.get(VttSession, people.session_id).phase.value

        wait_until(lambda: phase() == "answers_closed", timeout=5, message="answering to close at its deadline")
        past = list(ticks)
        wait_until(
            lambda: all(now >= then + 4 for now, then in zip(ticks, past)),
            message="every ticker to tick several times past the deadline",
        )
        with factory() as db:
            deadlines = db.scalars(
                select(Event.payload).where(Event.session_id == people.session_id, Event.kind == "deadline")
            ).all()
        assert deadlines == [{"phase": "answering"}]
        assert sum(hub.holds_timers for hub in hubs) == 1
    finally:
        for hub in hubs:
            hub.stop()
        engine.dispose()
