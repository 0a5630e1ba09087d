"""The live side reads a session in one picture of the database, however the writer commits in between.

A snapshot is several statements (the session row, then its rounds, answers, votes ...).  On PostgreSQL under
READ COMMITTED each statement saw the latest commit, so a commit landing between them gave a snapshot that mixed
two versions: a player bot told the previous round's ``playing`` saw no question until answering closed (seen in
about 1 run in 4 of a two-process session on PostgreSQL, never on SQLite).
"""

from __future__ import annotations

from sqlalchemy import update

from tests.live_helpers import make_session
from vtt.engine.rules import HOST, Action
from vtt.models import VttSession
from vtt.persistence.store import current_version, load_state


def test_a_read_sees_one_version_while_the_writer_commits(backend):
    app, factory = backend
    people = make_session(factory, rounds=1, per_round=1, jurors=2)
    hub = app.extensions["vtt.hub"]
    reply = hub.writer.submit(people.session_id, Action(HOST, "open_lobby", {}, "open"))
    assert reply["ok"], reply

    with hub.reader() as db:
        version = current_version(db, people.session_id)  # the read's first statement: its picture starts here
        moved = hub.writer.submit(people.session_id, Action(HOST, "start_round", {}, "start"))
        assert moved["ok"] and moved["state_version"] > version, moved
        with factory() as other, other.begin():  # and a change to a row the state is read from
            other.execute(update(VttSession).where(VttSession.id == people.session_id).values(name="Renamed"))
        state = load_state(db, people.session_id)
        assert state.state_version == version
        assert state.phase.value == "lobby" and state.round is None
        assert state.name == "Live test"

    with hub.reader() as db:  # a new read sees the new picture
        state = load_state(db, people.session_id)
        assert state.state_version == moved["state_version"] and state.phase.value == "round"
        assert state.name == "Renamed"
