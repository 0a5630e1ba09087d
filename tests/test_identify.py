"""The connect path's identification (vtt.realtime.identify), with no hub: a database connection, the secret key and
a stand-in for the writer's ``join``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from tests.support.live import make_session
from tests.support.review import play_session
from vtt.access.admission import stage_key
from vtt.db import make_reader_engine
from vtt.engine.actions import Refusal
from vtt.juries.displaced import create_jurors
from vtt.models import Juror, VttSession
from vtt.protocol.messages import Auth
from vtt.realtime.identify import Identity, identify

SECRET = "a secret of this test"


@pytest.fixture
def reader(database_url):
    engine = make_reader_engine(database_url)
    yield engine
    engine.dispose()


def no_join(_session_id: int, _args: dict[str, Any]) -> dict[str, Any]:
    raise AssertionError("no open join was asked for")


def who(reader, auth: dict[str, Any], is_host: bool = False, join=no_join) -> Identity:
    return identify(reader.connect, SECRET, Auth(**auth), is_host, "203.0.113.7", join)


def refusal(reader, auth: dict[str, Any], is_host: bool = False, join=no_join) -> str:
    with pytest.raises(Refusal) as refused:
        who(reader, auth, is_host, join)
    return refused.value.code


def test_a_token_names_its_juror_or_player_and_a_wrong_one_is_refused(reader, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=2)
    juror = who(reader, {"token": people.jurors["J2"]})
    assert (juror.role, juror.session_id, juror.label) == ("juror", people.session_id, "J2")
    name, token = next(iter(people.players.items()))
    player = who(reader, {"token": token})
    assert (player.role, player.actor_id, player.label) == ("player", people.player_ids[name], name)
    assert refusal(reader, {"token": "no-such-token"}) == "bad_token"


def test_a_displaced_juror_is_let_in_to_the_finished_session_until_removed(app, reader, db_factory):
    people = play_session(app, db_factory, votes={1: ["Agent", "Mina", None, "Agent"]}, per_round=1)
    with db_factory() as db:
        (made,) = create_jurors(db, db.get(VttSession, people.session_id), 1)
        db.commit()
        later = who(reader, {"token": made.token})
        assert (later.role, later.session_id, later.label) == ("displaced", people.session_id, made.label)
        db.get(Juror, later.actor_id).removed_at = datetime.now(UTC)
        db.commit()
    assert refusal(reader, {"token": made.token}) == "removed"


def test_a_code_opens_the_host_with_the_login_and_the_stage_with_its_key(reader, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1)
    assert refusal(reader, {"code": people.code, "role": "host"}) == "not_host"
    host = who(reader, {"code": people.code.lower(), "role": "host"}, is_host=True)
    assert (host.role, host.session_id, host.sees_door) == ("host", people.session_id, True)
    assert refusal(reader, {"code": people.code, "role": "stage", "key": "wrong"}) == "stage_key"
    key = stage_key(SECRET, people.session_id)
    stage = who(reader, {"code": people.code, "role": "stage", "key": key})
    assert (stage.role, stage.sees_door) == ("stage", True)
    assert refusal(reader, {"code": "NOPE99", "role": "host"}, is_host=True) == "bad_code"


def test_an_open_join_goes_through_join_and_its_refusal_reaches_the_connection(app, reader, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1, open_join=True)
    asked: list[tuple[int, dict[str, Any]]] = []

    def join(session_id: int, args: dict[str, Any]) -> dict[str, Any]:
        asked.append((session_id, args))
        return {"ok": True, "juror": 41, "label": "J9", "token": "t-41"}

    with app.app_context():  # the join rates are the app's (Flask-Limiter)
        juror = who(reader, {"code": people.code, "role": "juror", "nickname": "Ada"}, join=join)
        assert asked == [(people.session_id, {"nickname": "Ada", "door_ok": False})]
        assert juror == Identity("juror", people.session_id, 41, "J9", "t-41")

        def full(_session_id: int, _args: dict[str, Any]) -> dict[str, Any]:
            return {"ok": False, "error": {"code": "full", "message": "this session is full"}}

        assert refusal(reader, {"code": people.code, "role": "juror", "nickname": "Bo"}, join=full) == "full"
