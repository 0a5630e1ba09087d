"""Hypothesis fuzz of the connect auth: any auth is refused, or lets in only who it names, and a refused connect
writes nothing.  The values are in ``tests/support/fuzz.py``."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

from tests.support.fuzz import (
    FUZZ,
    JSON,
    KEYS,
    WEIRD_VALUES,
    changed,
    table_counts,
)
from tests.support.live import Role, client_id, make_session
from vtt.extensions import socketio

# --- 3. the connect auth ---------------------------------------------------------------------------------------

SERVER_LOGGERS = ("vtt", "socketio", "engineio", "flask_socketio", "werkzeug")


def server_errors(caplog) -> list[str]:
    return [
        f"{record.name}: {record.getMessage()}"
        for record in caplog.records
        if record.levelno >= logging.ERROR and record.name.startswith(SERVER_LOGGERS)
    ]


@pytest.fixture
def open_session(db_factory):
    return make_session(db_factory, rounds=1, per_round=1, jurors=1, open_join=True, name=client_id("auth"))


@settings(FUZZ, max_examples=150)
@given(data=st.data())
def test_any_connect_auth_is_refused_or_lets_in_only_who_it_names(app, host, db_factory, open_session, caplog, data):
    caplog.set_level(logging.WARNING)
    people = open_session
    real = {
        "token": st.sampled_from([*people.players.values(), *people.jurors.values()]),
        "code": st.sampled_from([people.code, people.code.lower(), f" {people.code} "]),
        "role": st.sampled_from(["host", "stage", "juror", "player", "HOST", ""]),
        "nickname": st.sampled_from(["Kim", "K" * 30, "K" * 31, "", " ", "\x00", "K\ud800"]),
        "host_token": st.sampled_from(["x", "x" * 64, "x" * 65]),
        "door": st.sampled_from(["0000", "x" * 9]),
        "key": st.sampled_from(["x", "x" * 65]),
    }
    shaped_auth = st.fixed_dictionaries(
        {}, optional={key: st.one_of(value, WEIRD_VALUES) for key, value in real.items()}
    )
    auth = data.draw(st.one_of(st.none(), JSON, shaped_auth, st.dictionaries(KEYS, JSON, max_size=4)), label="auth")
    before = table_counts(db_factory)
    with_cookie = data.draw(st.booleans(), label="host cookie")
    caplog.clear()
    role = Role(socketio, app, auth, flask_client=host if with_cookie else None)
    note(f"auth {auth!r} -> connected {role.connected}")
    assert not server_errors(caplog), server_errors(caplog)
    if not role.connected:
        after = table_counts(db_factory)
        assert after == before, f"a refused connect wrote {changed(before, after)}"
        return
    # let in: only a real token, or the real code with a role it may take
    assert isinstance(auth, dict)
    if "token" in auth:
        assert auth["token"] in (*people.players.values(), *people.jurors.values())
    else:
        assert auth.get("code", "").strip().upper() == people.code
        assert auth.get("role") in ("stage", "juror") or (auth.get("role") == "host" and with_cookie)
    snapshot = role.last("snapshot")
    assert isinstance(snapshot, dict) and snapshot.get("role") in ("player", "juror", "stage", "host"), snapshot
    role.client.disconnect()
