"""Open join cannot stuff the vote: join rates per address and per session, the stage's door code, a cap, the host
removing a juror or replacing a link; and a person's accepted actions reach every one of their connections."""

from __future__ import annotations

import re

import pytest
import socketio as python_socketio
from sqlalchemy import func, select

from tests.support.apps import login
from tests.support.live import TO_JUDGING, Role, client_id, make_session
from tests.support.served import ServedApp
from tests.support.waiting import wait_until, wait_until_async
from vtt.access.admission import DOOR_SECONDS, door_code, door_valid, stage_key
from vtt.config import Settings
from vtt.extensions import socketio
from vtt.models import Event, Juror, Player, Vote
from vtt.persistence.counted import counted


def secret() -> str:
    return Settings.from_env().secret_key


def host_of(app, client, people) -> Role:
    login(client)
    return Role(socketio, app, {"code": people.code, "role": "host"}, flask_client=client)


def told_before_closing(role: Role, event: str):
    """What ``role`` was sent as ``event`` before the server closed its connection (the test client's queue)."""
    sent = [m["args"][0] for m in role.seen + role.client.queue if m["name"] == event]
    return sent[-1] if sent else None


def joiner(app, people, nickname: str, **extra) -> Role:
    return Role(socketio, app, {"code": people.code, "role": "juror", "nickname": nickname, **extra})


def test_the_door_code_changes_every_window_and_the_last_one_still_works():
    key, session = "k" * 32, 7
    start = 1_000 * DOOR_SECONDS
    now = door_code(key, session, start + 1)
    assert re.fullmatch(r"\d{4}", now) and now == door_code(key, session, start + DOOR_SECONDS - 1)
    later = door_code(key, session, start + DOOR_SECONDS)
    assert door_valid(now, key, session, start + DOOR_SECONDS + 5)  # scanned just before it changed
    two_later = door_code(key, session, start + 2 * DOOR_SECONDS)
    assert not door_valid(now, key, session, start + 2 * DOOR_SECONDS + 5) or now in (later, two_later)
    assert not door_valid("", key, session, start) and not door_valid("12345", key, session, start)
    # other sessions' and other installations' codes differ (over many windows: 4 digits may coincide once)
    windows = [start + n * DOOR_SECONDS for n in range(20)]
    assert [door_code(key, session, t) for t in windows] != [door_code(key, session + 1, t) for t in windows]
    assert [door_code(key, session, t) for t in windows] != [door_code("another", session, t) for t in windows]


def test_socket_joins_are_limited_per_address_unless_the_door_code_is_given(app, client, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=0, open_join=True)
    joined = [joiner(app, people, f"n{i}").connected for i in range(21)]
    assert joined == [True] * 20 + [False]  # the HTTP join's limit, over the socket too
    door = door_code(secret(), people.session_id)
    assert all(joiner(app, people, f"hall{i}", door=door).connected for i in range(10))  # a hall behind one NAT
    with db_factory() as db:
        assert db.scalar(select(func.count()).select_from(Juror).where(Juror.juror_group == "open")) == 30


@pytest.mark.each_database
def test_a_session_that_needs_the_door_code_and_a_cap(app, client, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=0, open_join=True)
    host = host_of(app, client, people)
    host.host("set_open_join", open=True, door=True, cap=3)
    status = host.fresh_snapshot()["status"]
    assert status["join_door"] is True and host.fresh_snapshot()["open_join_cap"] == 3
    assert not joiner(app, people, "no door").connected
    assert not joiner(
        app, people, "wrong door", door="0000" if door_code(secret(), people.session_id) != "0000" else "1111"
    ).connected
    door = door_code(secret(), people.session_id)
    assert [joiner(app, people, f"in{i}", door=door).connected for i in range(4)] == [True, True, True, False]
    host.host("set_open_join", open=True, cap=0)  # no cap; the door rule stays
    assert joiner(app, people, "after", door=door).connected and not joiner(app, people, "after2").connected
    # the host heard each join as it happened
    host.received()
    joins = [m["args"][0] for m in host.seen if m["name"] == "juror"]
    assert [j["label"] for j in joins] == ["in0", "in1", "in2", "after"] and all(j["open"] for j in joins)


@pytest.mark.each_database
def test_only_the_host_and_the_stage_see_the_door_code(app, client, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1, open_join=True)
    host = host_of(app, client, people)
    door = host.send("door", None)
    assert door["ok"] and door["door"] == door_code(secret(), people.session_id) and door["changes_at"].endswith("Z")
    keyed = Role(socketio, app, {"code": people.code, "role": "stage", "key": stage_key(secret(), people.session_id)})
    assert keyed.send("door", None)["door"] == door["door"]
    assert Role(socketio, app, {"token": people.jurors["J1"]}).send("door", None)["error"]["code"] == "not_allowed"
    for unkeyed in ({"code": people.code, "role": "stage"}, {"code": people.code, "role": "stage", "key": "guessed"}):
        assert not Role(socketio, app, unkeyed).connected  # no stage at all without its key (tests/test_stage_access)
    # the stage page opened with the key connects with it; the QR code carries the door code it is given
    page = client.get(f"/stage/{people.code}?key={stage_key(secret(), people.session_id)}").get_data(as_text=True)
    assert f'"key": "{stage_key(secret(), people.session_id)}"' in page
    assert app.test_client().get(f"/stage/{people.code}?key=guessed").status_code == 403
    svg = client.get(f"/stage/{people.code}/join-qr.svg?door={door['door']}")
    assert svg.status_code == 200 and svg.mimetype == "image/svg+xml"


@pytest.mark.each_database
def test_the_join_page_asks_for_the_door_code_and_takes_it_from_the_qr_link(app, client, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=0, open_join=True)
    host = host_of(app, client, people)
    host.host("set_open_join", open=True, door=True)
    client.post("/host/logout", data={})
    door = door_code(secret(), people.session_id)
    page = client.get(f"/join/{people.code}?door={door}").get_data(as_text=True)
    assert 'name="door"' in page and f'value="{door}"' in page
    token = re.search(r'name="csrf_token" value="([^"]+)"', page)
    data = {"nickname": "Kim", **({"csrf_token": token.group(1)} if token else {})}
    refused = client.post(f"/join/{people.code}", data=data)
    assert refused.status_code == 400 and "door code shown on the stage screen" in refused.get_data(as_text=True)
    assert client.post(f"/join/{people.code}", data={**data, "door": door}).status_code == 302


def test_the_host_removes_a_juror_whose_votes_leave_the_tally(app, client, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=2, open_join=True)
    host = host_of(app, client, people)
    stranger = joiner(app, people, "stranger")
    honest = Role(socketio, app, {"token": people.jurors["J1"]})
    for move in (*TO_JUDGING, "open_vote"):
        host.host(move)
    alias = honest.fresh_snapshot()["round"]["aliases"][0]
    for juror in (stranger, honest):
        assert juror.send("vote", {"id": client_id(), "round": 1, "alias": alias})["ok"]
    assert host.fresh_snapshot()["votes"] == {"round": 1, "voted": 2, "jurors": 3}
    old_token = stranger.last("snapshot")["me"]["token"]

    host.host("remove_juror", juror="stranger")
    assert host.fresh_snapshot()["votes"] == {"round": 1, "voted": 1, "jurors": 2}
    assert [row for row in host.fresh_snapshot()["jurors"] if row["label"] == "stranger"][0]["removed"] is True
    assert not stranger.connected and told_before_closing(stranger, "link_revoked") == {"reason": "remove_juror"}
    assert not Role(socketio, app, {"token": old_token}).connected
    assert (
        host.send("host", {"id": client_id(), "action": "remove_juror", "juror": "stranger"})["error"]["code"]
        == "already_removed"
    )
    assert (
        host.send("host", {"id": client_id(), "action": "remove_juror", "juror": "nobody"})["error"]["code"]
        == "unknown_juror"
    )
    host.host("close_vote")
    tally = host.fresh_snapshot()["rounds"][0]["tally"]
    assert tally["cast"] == 1 and tally["voters"] == 1
    with db_factory() as db:  # the row stays (the record of what the stranger did) and counts nowhere
        assert db.scalar(select(func.count()).select_from(Vote)) == 2
        assert db.scalar(counted(Vote, func.count())) == 1
        logged = db.scalar(select(Event.payload).where(Event.kind == "votes_removed"))
        assert [vote["alias"] for vote in logged["votes"]] == [alias]


@pytest.mark.each_database
def test_a_new_link_replaces_the_old_one_and_closes_its_pages(app, client, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1)
    host = host_of(app, client, people)
    mina = Role(socketio, app, {"token": people.players["Mina"]})
    assert mina.connected
    page = client.get(f"/host/sessions/{people.session_id}")
    assert page.status_code == 200 and "New link" in page.get_data(as_text=True)
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.get_data(as_text=True))
    form = {"player": str(people.player_ids["Mina"]), **({"csrf_token": token.group(1)} if token else {})}
    done = client.post(f"/host/sessions/{people.session_id}/new-link", data=form)
    assert done.status_code == 302
    with db_factory() as db:
        fresh = db.scalar(select(Player.token).where(Player.id == people.player_ids["Mina"]))
    assert fresh != people.players["Mina"]
    assert not mina.connected and told_before_closing(mina, "link_revoked") == {"reason": "new_link"}
    assert not Role(socketio, app, {"token": people.players["Mina"]}).connected
    assert Role(socketio, app, {"token": fresh}).connected
    reply = host.send("host", {"id": client_id(), "action": "new_link", "juror": "J1"})
    assert reply["ok"] and reply["token"] and "disconnect" not in reply
    assert Role(socketio, app, {"token": reply["token"]}).connected
    assert not Role(socketio, app, {"token": people.jurors["J1"]}).connected


def test_the_same_juror_in_two_tabs_sees_every_change_in_both(app, client, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1)
    host = host_of(app, client, people)
    tab1 = Role(socketio, app, {"token": people.jurors["J1"]})
    tab2 = Role(socketio, app, {"token": people.jurors["J1"]})
    for move in (*TO_JUDGING, "open_vote"):
        host.host(move)
    snapshot = tab1.fresh_snapshot()
    first, second = snapshot["round"]["aliases"][:2]
    question = snapshot["revealed"][0]["question"]
    assert tab1.send("vote", {"id": client_id(), "round": 1, "alias": first, "reason": "first"})["ok"]
    assert tab2.send("vote", {"id": client_id(), "round": 1, "alias": second, "reason": "changed"})["ok"]
    assert tab2.send(
        "sheet",
        {
            "id": client_id(),
            "lines": [{"question": question, "alias": first, "note": "from tab 2", "human_likeness": 2}],
        },
    )["ok"]
    mine = [m["args"][0] for m in tab1.received() if m["name"] == "mine"]
    assert [(m["action"], m.get("alias")) for m in mine] == [("vote", first), ("vote", second), ("sheet", None)]
    assert mine[1]["reason"] == "changed" and mine[2]["lines"][0]["note"] == "from tab 2"
    # nobody else hears it
    stage = Role(socketio, app, people.stage_auth)
    assert tab2.send("vote", {"id": client_id(), "round": 1, "alias": first})["ok"]
    assert not [m for m in stage.received() if m["name"] == "mine"]


def test_refusals_reach_a_client_as_socket_io_clients_read_them(database_url, db_factory):
    """connect_error carries {message, data: {code, message}}: python-socketio gets the object, socket.io-client
    (JavaScript) err.message and err.data."""
    people = make_session(db_factory, rounds=1, per_round=1, jurors=0, open_join=True)
    refusals = {}
    with ServedApp({"DATABASE_URL": database_url}) as served:
        for name, auth in {
            "bad_token": {"token": "nope"},
            "invalid": {"code": people.code, "role": "juror", "nickname": "n", "door": "9" * 9},
            "not_host": {"code": people.code, "role": "host"},
        }.items():
            sio = python_socketio.Client(reconnection=False)
            got = []
            sio.on("connect_error", lambda data, got=got: got.append(data))
            try:
                sio.connect(served.url, auth=auth, transports=["websocket"], wait_timeout=10)
            except python_socketio.exceptions.ConnectionError:
                pass
            try:
                refusals[name] = wait_until(lambda got=got: got, timeout=15, message=f"the {name} refusal")[0]
            finally:
                sio.disconnect()
    assert refusals["bad_token"] == {
        "message": "this link is not valid (no player or juror has that token)",
        "data": {"code": "bad_token", "message": "this link is not valid (no player or juror has that token)"},
    }
    assert refusals["not_host"]["data"]["code"] == "not_host"
    assert refusals["invalid"]["data"]["code"] == "invalid" and "door" in refusals["invalid"]["message"]


def test_a_protocol_client_whose_link_is_revoked_stops_and_says_why(database_url, db_factory, monkeypatch):
    """The bots' and `vtt agent`'s connection: on ``link_revoked`` it closes for good (no reconnecting with a dead
    token) and says why; the bot's play ends."""
    import asyncio
    import secrets

    from vtt.access.host_token import host_token
    from vtt.client.connection import Connection, Ledger

    secret, password = secrets.token_hex(16), "host password for the test"
    monkeypatch.setenv("SECRET_KEY", secret)
    monkeypatch.setenv("VTT_HOST_PASSWORD", password)
    people = make_session(db_factory, rounds=1, per_round=1, jurors=2)

    async def play(url: str) -> tuple[dict | None, bool]:
        juror = Connection(url, {"token": people.jurors["J1"]}, Ledger(), "j1")
        host = Connection(
            url, {"code": people.code, "role": "host", "host_token": host_token(secret, password)}, Ledger(), "host"
        )
        await juror.open()
        await host.open()
        try:
            assert (await host.send("host", {"action": "remove_juror", "juror": "J1"}))["ok"]
            await wait_until_async(
                lambda: juror.view.revoked and juror.closed,
                interval=0.1,
                message="the revoked juror's connection to close",
            )
            return juror.last_error, juror.closed
        finally:
            await host.close()
            await juror.close()

    with ServedApp({"DATABASE_URL": database_url}) as served:
        last_error, closed = asyncio.run(play(served.url))
    assert closed and last_error["code"] == "link_revoked", last_error
