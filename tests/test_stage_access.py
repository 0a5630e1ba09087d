"""Who can reach the stage screen, and so a finished session's identities (every round's AI alias, each child's age).

Found: the displaced juror's snapshot and ``/jury/<token>`` page carried the session's join code;
with it anyone connected as the stage (``{"code": CODE, "role": "stage"}``) or opened ``/stage/CODE`` after the finish
and read ``identities``, so a crowd worker could answer every round right.  The join code is public in the room:
the stage now opens only with its own link (the stage key) or the host's login.
"""

from __future__ import annotations

import json
import re

from sqlalchemy import select

from tests.support.apps import form_token, login
from tests.support.live import Role, client_id, make_session
from tests.support.review import play_session
from vtt.extensions import socketio
from vtt.juries.displaced import open_link
from vtt.models import VttSession


def boot_data(html: str) -> str:
    """Everything a page hands its scripts (the JSON data blocks), as text."""
    return " ".join(re.findall(r'<script type="application/json"[^>]*>(.*?)</script>', html, re.S))


def test_a_displaced_juror_cannot_reach_the_identities_of_the_session_they_judge(app, db_factory):
    """Everything a displaced juror receives (an open link's page, the page Start leads to, its data, the snapshot,
    the acks of a sheet line and a vote) carries no join code and no stage key, and every string in it, tried as the
    stage's code, as a socket's token and on ``/stage/<it>``, opens no stage."""
    finished = play_session(app, db_factory)
    with db_factory() as db:
        vtt_session = db.get(VttSession, finished.session_id)
        code = vtt_session.join_code
        link = open_link(db, vtt_session, None, None)
        db.commit()
        link_token = link.token
    client = app.test_client()
    opened = client.get(f"/jury/open/{link_token}").get_data(as_text=True)
    started = client.post(
        f"/jury/open/{link_token}", data={"csrf_token": form_token(client, f"/jury/open/{link_token}")}
    )
    assert started.status_code == 302, started.status_code
    token = started.headers["Location"].rsplit("/", 1)[1]
    page = client.get(f"/jury/{token}").get_data(as_text=True)
    displaced = Role(socketio, app, {"token": token})
    assert displaced.connected
    snapshot = displaced.last("snapshot")
    assert snapshot and snapshot["rounds"], snapshot
    first = snapshot["rounds"][0]
    question, alias = first["questions"][0]["id"], first["aliases"][0]
    acks = [
        displaced.send("sheet", {"id": client_id(), "question": question, "alias": alias, "human_likeness": 2}),
        displaced.send("vote", {"id": client_id(), "round": first["round"], "alias": alias}),
    ]
    assert all(ack["ok"] for ack in acks), acks
    received = opened + page + json.dumps([snapshot, *acks, *displaced.seen])
    assert code not in received, "the displaced juror was handed the join code"
    assert finished.stage_key not in received, "the displaced juror was handed the stage key"
    # every string they were handed (the pages' data, the snapshot, the acks), tried as what opens a stage
    handed = boot_data(opened) + boot_data(page) + json.dumps([snapshot, *acks])
    for candidate in set(re.findall(r"[A-Za-z0-9_-]{4,64}", handed)) | {code}:
        stage = Role(socketio, app, {"code": candidate[:16], "role": "stage"})
        if stage.connected:
            assert not stage.last("snapshot")["identities"], f"{candidate} opened the finished session's identities"
        someone = Role(socketio, app, {"token": candidate})
        if someone.connected:
            assert candidate == token, f"{candidate} is a link of someone else"
        assert client.get(f"/stage/{candidate}").status_code in (403, 404), candidate


def test_the_join_code_alone_opens_no_stage_in_any_phase(app, db_factory):
    """The join code is on the stage and in the join link: a stranger with it gets no stage, before or after."""
    finished = play_session(app, db_factory)
    with db_factory() as db:
        code = db.scalar(select(VttSession.join_code).where(VttSession.id == finished.session_id))
    assert not Role(socketio, app, {"code": code, "role": "stage"}).connected
    assert app.test_client().get(f"/stage/{code}").status_code == 403


def test_the_host_console_shows_the_stage_link_and_the_hosts_login_opens_the_stage(app, db_factory):
    """The console shows the stage's own link (with its key) and where to print it as a QR code; a browser signed
    in as the host opens the stage with the join code, and its socket connects as the stage with the login."""
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1)
    host = app.test_client()
    login(host)
    console = host.get(f"/host/sessions/{people.session_id}/live").get_data(as_text=True)
    assert f"/stage/{people.code}?key={people.stage_key}</code>" in console
    assert f"/host/sessions/{people.session_id}/join-cards.pdf" in console
    opened = host.get(f"/stage/{people.code}")
    assert opened.status_code == 200 and f'"key": "{people.stage_key}"' in opened.get_data(as_text=True)
    stage = Role(socketio, app, {"code": people.code, "role": "stage"}, flask_client=host)
    assert stage.connected and stage.last("snapshot")["role"] == "stage"
    assert stage.send("door", None)["ok"]  # the stage is given the open join's door code
    stranger = app.test_client()
    assert stranger.get(f"/stage/{people.code}").status_code == 403
    assert stranger.get(f"/stage/{people.code}?key={people.stage_key[:-1]}x").status_code == 403
    assert stranger.get(people.stage_path).status_code == 200
    refused = socketio.test_client(app, auth={"code": people.code, "role": "stage", "key": "guessed"})
    assert not refused.is_connected()
