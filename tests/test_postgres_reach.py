"""Every HTTP route, socket event and engine action is reached on PostgreSQL by some test of the run.

The feature tests that run on each database (``each_database``, ``backend``, ``migrated_database_url``) are counted
as they run (tests/support/postgres_reach.py); this test runs last (tests/conftest.py puts it there) and lists what
none of them reached.  Under CI=true (``make test``) it always judges; elsewhere a partial run (some test files, -k,
-m) skips it, since what it did not run was not reached.
"""

from __future__ import annotations

import pytest

from tests.support import postgres_reach
from tests.support.live import client_id, connect_all, make_session
from tests.support.machine import IN_CI
from tests.support.postgres_reach import REACHED, ROUTES, WHOLE_RUN, unreached


@pytest.mark.each_database
def test_the_host_extends_answering_redacts_an_answer_and_checks_the_clips(app, host, db_factory):
    """The host's moves and the console's request that no feature test of both databases made: ``extend`` moves the
    answering deadline, ``edit_answer`` redacts a player's answer after answering closed, and the clip preflight
    lists each question's clip."""
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1, answer_seconds=60)
    console, stage, players, jurors = connect_all(app, host, people)
    for move in ("open_lobby", "start_round", "show_question", "open_answering"):
        console.host(move)
    before = console.last("status")["deadline"]
    console.host("extend", seconds=30)
    assert console.last("status")["deadline"] > before
    question = players["Grace"].last("question")
    said = {"choice": 0} if question["type"] == "mcq" else {"text": "a dog"}
    assert players["Grace"].send("answer", {"id": client_id(), "question": question["id"], **said})["ok"]
    console.host("close_answering")
    grace = people.player_ids["Grace"]
    console.host("edit_answer", player=grace, redact=True)
    assert console.last("answer")["player"]["id"] == grace and console.last("answer")["redacted"] is True
    clips = host.get(f"/host/sessions/{people.session_id}/clips")
    assert clips.status_code == 200 and [c["question"] for c in clips.get_json()["clips"]] == [question["id"]]
    for role in (console, stage, *players.values(), *jurors.values()):
        role.client.disconnect()


def test_only_an_app_on_postgresql_is_counted_and_what_it_did_not_reach_is_listed(app, client, monkeypatch):
    """The counter itself: this app is on SQLite, so its requests and actions count for nothing; a route or action
    that no test reached is listed."""
    monkeypatch.setattr(postgres_reach, "REACHED", {"route": set(), "event": set(), "action": set()})
    assert client.get("/healthz").status_code == 200 and client.get("/host/login").status_code == 200
    assert postgres_reach.REACHED == {"route": set(), "event": set(), "action": set()}
    missing = unreached()
    assert {"GET /healthz", "GET /host/login", "POST /play/<token>/recording"} <= set(missing["route"])
    assert {"vote", "host", "connect"} <= set(missing["event"]) and {"vote", "join", "transcribed"} <= set(
        missing["action"]
    )


@pytest.mark.postgres
def test_every_route_socket_event_and_action_was_reached_on_postgresql(request):
    whole_run = request.config.stash.get(WHOLE_RUN, False)
    if not whole_run and not IN_CI:
        pytest.skip("a partial run: only the whole suite reaches every route, event and action")
    request.getfixturevalue("postgres_url")  # no PostgreSQL: a failure when CI=true, else a skip saying so
    assert ROUTES, "no app was made in this run"
    missing = {kind: names for kind, names in unreached().items() if names}
    listed = "\n".join(f"  {kind}: {', '.join(names)}" for kind, names in missing.items())
    reached = ", ".join(f"{len(names)} {kind}s" for kind, names in REACHED.items())
    assert not missing, f"no test reached these on PostgreSQL (it reached {reached}):\n{listed}"
