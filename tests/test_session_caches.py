"""A long-lived process keeps nothing of a session it no longer serves (docs/design.md, "Memory over months").

Found: one process serving 30 short sessions one after another grew about 96 KB per session with no plateau: the
hub's snapshot states, judged rounds and presence messages and the writer's states were kept for every session
ever served, and on SQLite a session whose deadline the ticker closed with nobody connected stayed claimed.
"""

from __future__ import annotations

from tests.support.apps import login
from tests.support.live import TO_JUDGING, Role, make_session
from tests.support.review import play_session
from tests.support.waiting import wait_until
from vtt.extensions import socketio
from vtt.juries.displaced import create_jurors
from vtt.models import VttSession
from vtt.realtime import ownership as ownership_module


def holding(hub, session_id: int) -> list[str]:
    """The names of the process's per-session caches that hold something of ``session_id``."""
    return sorted(name for name, sessions in hub.held_sessions().items() if session_id in sessions)


def settled(hub) -> bool:
    """No presence message is still to be sent (each goes out a second after the change that called for it)."""
    return not hub.held_sessions()["presence.due"]


def test_a_finished_session_leaves_nothing_once_its_connections_are_gone(backend, monkeypatch):
    """Every cache keeps a session while a connection of it is here, and lets it go once the session is over and
    its last connection (a displaced juror's, after the live ones) has left; another session still served keeps
    its entries."""
    app, db_factory = backend
    monkeypatch.setattr(ownership_module, "GIVE_UP_AFTER_SECONDS", 0.0)
    hub = app.extensions["vtt.hub"]
    people = play_session(app, db_factory, votes={1: ["Agent", "Mina", None, "Agent"]}, per_round=1)
    with db_factory() as db:
        (made,) = create_jurors(db, db.get(VttSession, people.session_id), 1)
        db.commit()
    later = Role(socketio, app, {"token": made.token})  # a displaced juror judges the finished session
    assert later.last("snapshot")["jury"] == "displaced"
    assert "snapshots.judged_rounds" in holding(hub, people.session_id)

    running = make_session(db_factory, rounds=1, per_round=1, jurors=1, name="Still running")
    juror = Role(socketio, app, {"token": running.jurors["J1"]})
    assert juror.last("snapshot")["status"]["phase"] == "draft"

    later.client.disconnect()
    wait_until(lambda: settled(hub), message="the presence messages sent")
    hub.housekeep()
    left = holding(hub, people.session_id)
    assert left == [], f"still held: {left}"
    assert {"connections", "snapshots.read_states", "claims.sessions", "socketio.rooms"} <= set(
        holding(hub, running.session_id)
    )


def test_a_deadline_closed_with_nobody_connected_leaves_nothing_once_done(backend, monkeypatch):
    """The ticker claims a session whose deadline it closes with nobody connected; nothing gave that claim up again
    (on SQLite, or on PostgreSQL without Redis, no housekeeping ran)."""
    app, db_factory = backend
    client = app.test_client()
    monkeypatch.setattr(ownership_module, "GIVE_UP_AFTER_SECONDS", 0.0)
    hub = app.extensions["vtt.hub"]
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1, answer_seconds=1)
    login(client)
    host = Role(socketio, app, {"code": people.code, "role": "host"}, flask_client=client)
    for move in TO_JUDGING[:4]:  # answering opens, with its deadline
        host.host(move)
    host.client.disconnect()  # the host's laptop sleeps; the deadline closes answering by itself
    with db_factory() as db:
        wait_until(
            lambda: db.get(VttSession, people.session_id, populate_existing=True).phase_deadline_at is None,
            timeout=15,
            message="the deadline closed with nobody connected",
        )
    wait_until(lambda: settled(hub) and not hub.held_sessions()["writer.pending_ticks"], message="the tick done")
    hub.housekeep()
    left = holding(hub, people.session_id)
    assert left == [], f"still held: {left}"
