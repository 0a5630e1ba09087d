"""A device check before the event: a player's or juror's page reports what its device did (the test clip's
sound, a spoken player's microphone, the clock, the transport, a round trip) with the `device_check` action, and
the host alone sees each person's readiness (the browser side is tests/test_device_check_browser.py)."""

from __future__ import annotations

import json

import av
import pytest
from sqlalchemy import select

from tests.support.apps import login, threaded_app
from tests.support.engine import AI, H1, H2, HOST, J1, J2, Run, assert_blind, make_state
from tests.support.live import Role, client_id, connect_all, identity_leaks, make_session
from vtt.engine import audiences, readiness
from vtt.engine.actions import Actor
from vtt.engine.state import SaveDeviceCheck
from vtt.extensions import socketio
from vtt.media.test_clip import TEST_CLIPS
from vtt.models import Event, Juror, Player

FINE = {
    "sound": "heard",
    "clock_offset_ms": 40,
    "round_trip_ms": 35,
    "transport": "websocket",
    "rendition": "phone",
    "duration_ms": 14200,
}
SPOKEN = [
    {"name": "Mina", "kind": "human", "age": 6, "answer_modes": ["spoken"]},
    {"name": "Grace", "kind": "human", "age": 31},
    {"name": "Agent", "kind": "ai"},
]


def spoken_state():
    state = make_state()
    state.players[H1].answer_modes = ["text", "spoken"]
    state.juror_ids = {"J1": J1, "J2": J2}
    return state


# --- the engine -------------------------------------------------------------------------------------------------


def test_a_check_reaches_the_host_alone_with_its_problems_named():
    run = Run(spoken_state())
    state = run.state
    outcome = run.do(Actor("juror", J1), "device_check", **FINE)[-1]
    assert [(m.audience, m.event) for m in outcome.messages] == [("host", "readiness")]
    assert outcome.messages[0].payload == {
        "role": "juror",
        "juror": "J1",
        **FINE,
        "microphone": None,
        "at": "2024-05-01T12:00:01Z",
        "problems": [],
    }
    assert outcome.reply["problems"] == []
    assert [e for e in outcome.effects if isinstance(e, SaveDeviceCheck)][0].person_id == J1

    # a spoken player's phone that heard nothing, could not record, on long-polling, slow and a minute off
    bad = {**FINE, "sound": "not_heard", "microphone": "failed", "transport": "polling", "round_trip_ms": 900}
    outcome = run.do(Actor("player", H1), "device_check", **{**bad, "clock_offset_ms": -61_000})[-1]
    assert outcome.messages[0].payload["problems"] == [
        "no_sound",
        "recording_failed",
        "clock_off",
        "polling_only",
        "slow_round_trip",
    ]
    # the limits: a second off and three quarters of a second's round trip are still fine
    edge = {**FINE, "clock_offset_ms": readiness.CLOCK_OFF_MS, "round_trip_ms": readiness.SLOW_ROUND_TRIP_MS}
    assert run.do(Actor("player", H2), "device_check", **edge)[-1].reply["problems"] == []
    assert run.do(Actor("player", H1), "device_check", **{**FINE, "microphone": "denied"})[-1].reply["problems"] == [
        "microphone_blocked"
    ]

    # recorded and played back, and the child did not hear it: the page now asks (found: it never did, and a silent
    # take was sent as "ok")
    assert run.do(Actor("player", H1), "device_check", **{**FINE, "microphone": "not_heard"})[-1].reply["problems"] == [
        "playback_not_heard"
    ]
    assert run.do(Actor("player", H1), "device_check", **{**FINE, "microphone": "denied"})[-1].reply["problems"] == [
        "microphone_blocked"
    ]

    # the host's snapshot: players by id, jurors by label, the latest check of each; nobody else's snapshot has it
    shown = audiences.host_snapshot(state, [])["readiness"]
    assert set(shown["players"]) == {str(H1), str(H2)} and set(shown["jurors"]) == {"J1"}
    assert shown["players"][str(H1)]["microphone"] == "denied"
    for snapshot, audience in (
        (audiences.stage_snapshot(state), "stage"),
        (audiences.juror_snapshot(state, "J1", [], []), "juror"),
    ):
        assert_blind(audience, "snapshot", snapshot, state.players, snapshot=True)
        assert "readiness" not in json.dumps(snapshot)
    assert "readiness" not in json.dumps(audiences.player_snapshot(state, H1))
    run.assert_all_blind()
    with pytest.raises(AssertionError):  # the checker itself catches a check in a jury payload
        assert_blind("juror", "status", {"readiness": {"jurors": {}}}, state.players)


def test_the_engine_refuses_a_check_that_does_not_fit():
    run = Run(spoken_state())
    run.refuse(HOST, "device_check", "not_allowed", **FINE)
    run.refuse(Actor("stage"), "device_check", "not_allowed", **FINE)
    run.refuse(Actor("player", AI), "device_check", "not_human", **FINE)
    run.refuse(Actor("player", H1), "device_check", "bad_field", **FINE)  # a spoken player's says the microphone
    run.refuse(Actor("player", H2), "device_check", "not_spoken", **{**FINE, "microphone": "ok"})
    run.refuse(Actor("juror", J1), "device_check", "not_spoken", **{**FINE, "microphone": "ok"})
    for field, value in (
        ("sound", "loud"),
        ("transport", "carrier pigeon"),
        ("rendition", "4k"),
        ("round_trip_ms", -1),
        ("clock_offset_ms", 10**12),
        ("clock_offset_ms", None),
        ("clock_offset_ms", True),
        ("duration_ms", 1.5),
    ):
        run.refuse(Actor("juror", J1), "device_check", "invalid", **{**FINE, field: value})
    run.do(HOST, "remove_juror", juror="J2")
    run.refuse(Actor("juror", J2), "device_check", "removed", **FINE)
    run.do(HOST, "finish", force=True)
    run.refuse(Actor("juror", J1), "device_check", "finished", **FINE)


# --- over the socket --------------------------------------------------------------------------------------------


@pytest.mark.each_database
def test_a_juror_s_check_reaches_the_host_and_no_other_juror_nor_the_stage(app, client, db_factory, database_url):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=2, players=SPOKEN)
    host, stage, players, jurors = connect_all(app, client, people)
    mina = people.player_ids["Mina"]
    assert host.last("snapshot")["readiness"] == {"players": {}, "jurors": {}}

    check = {"id": "check-1", **FINE, "transport": "polling"}
    reply = jurors["J1"].send("device_check", check)
    assert reply["ok"] and reply["problems"] == ["polling_only"], reply
    assert jurors["J1"].send("device_check", check)["duplicate"]  # a resend changes nothing
    seen = host.last("readiness")
    assert (seen["role"], seen["juror"], seen["problems"]) == ("juror", "J1", ["polling_only"])
    assert players["Mina"].send("device_check", {"id": client_id(), **FINE, "microphone": "none"})["ok"]
    assert host.last("readiness")["player"] == mina
    assert host.fresh_snapshot()["readiness"]["players"][str(mina)]["problems"] == ["no_microphone"]
    for bad in ({"sound": "heard"}, {**FINE, "sound": "deafening"}, {**FINE, "round_trip_ms": "fast"}):
        assert jurors["J2"].send("device_check", {"id": client_id(), **bad})["error"]["code"] == "invalid"
    assert players["Agent"].send("device_check", {"id": client_id(), **FINE})["error"]["code"] == "not_human"

    for role in (stage, jurors["J2"], players["Grace"]):
        role.received()
        role.seen.append({"name": "snapshot", "args": [role.fresh_snapshot()]})
        for message in role.seen:
            assert message["name"] != "readiness", message
            payload = message["args"][0] if message["args"] else None
            assert "polling" not in json.dumps(payload) and "readiness" not in json.dumps(payload), message
            if role is not players["Grace"]:
                assert not identity_leaks(payload, people), message
    with db_factory() as db:
        logged = db.scalars(select(Event).where(Event.kind == "device_check")).all()
        assert len(logged) == 2
        assert db.scalar(select(Juror.device_check).where(Juror.label == "J1"))["transport"] == "polling"
        assert db.get(Player, mina).device_check["microphone"] == "none"
    for role in [host, stage, *players.values(), *jurors.values()]:
        role.client.disconnect()
    app.extensions["vtt.hub"].stop()

    # a restarted server still shows the host each person's readiness
    restarted = threaded_app(database_url)
    try:
        host_client = restarted.test_client()
        login(host_client)
        again = Role(socketio, restarted, {"code": people.code, "role": "host"}, flask_client=host_client)
        kept = again.last("snapshot")["readiness"]
        assert kept["jurors"]["J1"]["problems"] == ["polling_only"] and str(mina) in kept["players"]
    finally:
        restarted.extensions["vtt.hub"].stop()


# --- the test clip ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("rendition", sorted(TEST_CLIPS))
def test_the_test_clip_is_a_short_clip_with_a_tone(rendition):
    """Both renditions play a few seconds with sound, the phone's lighter than the main one."""
    path = TEST_CLIPS[rendition]
    with av.open(str(path)) as clip:
        assert {s.type for s in clip.streams} == {"video", "audio"}
        assert 2.0 <= clip.duration / 1_000_000 <= 3.5
        video = clip.streams.video[0]
        width = video.codec_context.width
    assert path.stat().st_size < 120_000
    assert (width <= 320) if rendition == "phone" else (width > 320)
