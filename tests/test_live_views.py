"""The live pages' server side: links checked, joins made only on a press and rate-limited, clips served with
byte ranges, and the host told who is connected."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from tests.support.apps import form_token
from tests.support.live import Role, connect_all, make_session
from tests.support.waiting import wait_until
from vtt.extensions import socketio
from vtt.models import Juror


def jurors_of(db_factory, session_id: int) -> list[str]:
    with db_factory() as db:
        return list(db.scalars(select(Juror.label).where(Juror.session_id == session_id).order_by(Juror.id)))


@pytest.mark.each_database
def test_each_page_opens_only_with_a_valid_link(client, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1)
    assert client.get(f"/jury/{people.jurors['J1']}").status_code == 200
    assert client.get(f"/play/{people.players['Mina']}").status_code == 200
    assert client.get(f"/stage/{people.code.lower()}?key={people.stage_key}").status_code == 200
    assert client.get(f"/stage/{people.code}").status_code == 403  # the join code alone opens no stage
    for bad in ("/jury/nope", "/play/nope", "/stage/ZZZZZZ", "/join/ZZZZZZ"):
        assert client.get(bad).status_code == 404, bad
    assert "This juror link is not valid" in client.get("/jury/nope").get_data(as_text=True)
    page = client.get(f"/jury/{people.jurors['J1']}").get_data(as_text=True)
    for name in ("Mina", "Grace", "Agent"):  # blinding starts with the page itself
        assert name not in page
    assert client.get(f"/host/sessions/{people.session_id}/live").status_code == 302  # host only
    svg = client.get(f"/stage/{people.code}/join-qr.svg")
    assert svg.mimetype == "image/svg+xml" and b"<svg" in svg.data


def test_a_join_link_creates_a_juror_only_when_the_person_presses_join(client, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=0, open_join=True)
    assert client.get(f"/join/{people.code}").status_code == 200  # a preview fetch
    assert jurors_of(db_factory, people.session_id) == []
    token = form_token(client, f"/join/{people.code}")
    empty = client.post(f"/join/{people.code}", data={"csrf_token": token, "nickname": "  "})
    assert empty.status_code == 400 and "Enter a nickname." in empty.get_data(as_text=True)
    joined = client.post(f"/join/{people.code}", data={"csrf_token": token, "nickname": "Kim"})
    assert joined.status_code == 302 and joined.headers["Location"].startswith("/jury/")
    assert jurors_of(db_factory, people.session_id) == ["Kim"]
    assert client.get(joined.headers["Location"]).status_code == 200


def test_open_joins_are_rate_limited_and_refused_when_closed(client, db_factory):
    closed = make_session(db_factory, rounds=1, per_round=1, jurors=0, name="Closed")
    assert "does not take open joins" in client.get(f"/join/{closed.code}").get_data(as_text=True)
    people = make_session(db_factory, rounds=1, per_round=1, jurors=0, open_join=True)
    token = form_token(client, f"/join/{people.code}")
    codes = [
        client.post(f"/join/{people.code}", data={"csrf_token": token, "nickname": f"n{i}"}).status_code
        for i in range(22)
    ]
    assert codes[:20] == [302] * 20 and codes[20:] == [429, 429]
    assert len(jurors_of(db_factory, people.session_id)) == 20


def test_clips_are_served_from_the_media_folder_with_byte_ranges(app, client, tmp_path):
    folder = tmp_path / "media"
    (folder / "clips").mkdir(parents=True)
    (folder / "clips" / "ep01.mp4").write_bytes(bytes(range(256)) * 4)
    app.config["MEDIA_DIR"] = str(folder)
    part = client.get("/media/clips/ep01.mp4", headers={"Range": "bytes=10-19"})
    assert part.status_code == 206 and part.data == bytes(range(10, 20))
    assert client.get("/media/../secret").status_code == 404
    assert client.get("/media/clips/missing.mp4").status_code == 404


def test_the_host_is_told_who_is_connected(app, client, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=2)
    host, stage, players, jurors = connect_all(app, client, people)

    def presence_with(labels: list[str]) -> dict | None:
        """The host's latest presence message once it names exactly these jurors (it comes at most once a second)."""
        seen = host.last("presence")
        return seen if seen and seen["juror_labels"] == labels else None

    seen = wait_until(lambda: presence_with(["J1", "J2"]), message="a presence message naming both jurors")
    assert seen["players"] == sorted(people.player_ids.values())
    assert (seen["jurors"], seen["stage"], seen["hosts"]) == (2, 1, 1)
    jurors["J2"].client.disconnect()
    assert wait_until(lambda: presence_with(["J1"]), message="a presence message without J2")["jurors"] == 1
    for role in [stage, *players.values(), jurors["J1"]]:  # host only
        assert role.last("presence") is None
    assert host.last("snapshot")["connected"]["hosts"] == 1
    assert Role(socketio, app, {"token": people.jurors["J2"]}).connected
