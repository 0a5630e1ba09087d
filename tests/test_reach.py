"""Every HTTP route of the app and every socket role, tried with each credential in each phase, reach exactly what
``vtt.access.reach.REACH`` says (the table docs/security.md prints).

The routes are read from ``app.url_map``: a new route must be placed in a group below or the walk fails, and a new
host route that forgot ``host_required`` is reached without the login, which the table does not allow.  Every
string in a route (a code, a token, a file name) is tried with the credential's string, every id with the session's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from flask import url_for
from sqlalchemy import select

from tests.support.apps import login
from tests.support.live import People, Role, make_session
from tests.support.review import VOTES, play_session
from vtt.access.host_token import host_token
from vtt.access.reach import CREDENTIALS, PHASES, REACH, REACHES, markdown_table
from vtt.extensions import socketio
from vtt.models import Juror, Jury, JuryLink, VttSession

ROOT = Path(__file__).resolve().parents[1]

# Routes anyone may open (no credential's reach): the login form, static files, clips, the health check.
PUBLIC = {"index", "health.healthz", "static", "auth.login", "auth.logout", "live.media"}
# The other routes outside /host/, by what they are the page of.
GROUPS = {
    "live.player_page": "player",
    "spoken.upload": "player",
    "live.juror_page": "jury page",  # a live juror's or a displaced juror's: told apart by the page's script
    "displaced.open_link_page": "open link",
    "displaced.completion": "judge",  # the way back to the crowd platform: the displaced juror's own task's end
    "live.join": "join page",
    "live.join_qr": "join page",
    "live.stage": "stage",
}
REFUSED = {401, 403, 404, 405, 409, 410, 429}


@dataclass
class Credential:
    strings: list[str]  # tried in every string slot of every route, and as a socket's token and code
    login: bool = False  # the host's login cookie
    query: dict[str, str] = field(default_factory=dict)  # added to every request (the stage link's key)
    auths: list[dict[str, Any]] = field(default_factory=list)  # socket auths beyond those the strings make


@dataclass
class Scene:
    people: People
    displaced: str
    open_link: str
    open_link_id: int
    credentials: dict[str, Credential]


def scene(app, db_factory, phase: str) -> Scene:
    """A session in ``phase`` (open join allowed, per-round reveal), a displaced juror and an open link of it."""
    name = f"Reach {phase}"
    if phase == "before":
        people = make_session(db_factory, open_join=True, name=name)
    else:  # during: round 1 played and its identities revealed, round 2 of 2 started
        votes = {1: VOTES[1]} if phase == "during" else VOTES
        finish = phase == "after"
        people = play_session(app, db_factory, votes, designed_rounds=2, finish=finish, open_join=True, name=name)
    if phase != "after":
        client = app.test_client()
        login(client)
        host = Role(socketio, app, {"code": people.code, "role": "host"}, flask_client=client)
        for move in ("open_lobby",) if phase == "before" else ("reveal_identities", "start_round"):
            host.host(move)
        host.client.disconnect()
    with db_factory() as db:
        db.add(Juror(session_id=people.session_id, label="D001", token=f"later-{phase}", jury=Jury.DISPLACED))
        link = JuryLink(session_id=people.session_id, token=f"open-{phase}", attention_check=False)
        db.add(link)
        db.commit()
        link_id = link.id
    secret, password = app.config["SECRET_KEY"], app.config["HOST_PASSWORD"]
    token = host_token(secret, password)
    code = people.code
    credentials = {
        "host login": Credential([code], login=True),
        "host token": Credential(
            [token], auths=[{"code": code, "role": role, "host_token": token} for role in ("host", "stage")]
        ),
        "player link": Credential([people.players["Mina"]]),
        "juror link": Credential([people.jurors["J1"]]),
        "displaced link": Credential([f"later-{phase}"]),
        "open link": Credential([f"open-{phase}"]),
        "join code": Credential([code]),
        "stage link": Credential(
            [code], query={"key": people.stage_key}, auths=[{"code": code, "role": "stage", "key": people.stage_key}]
        ),
    }
    return Scene(people, f"later-{phase}", f"open-{phase}", link_id, credentials)


def group_of(rule) -> str | None:
    if rule.endpoint in PUBLIC:
        return None
    if rule.rule.startswith("/host/"):
        return "host pages"
    assert rule.endpoint in GROUPS, f"{rule.rule} ({rule.endpoint}) is in no group of tests/test_reach.py: place it"
    return GROUPS[rule.endpoint]


def path_of(app, rule, people: People, link_id: int, value: str, query: dict[str, str]) -> str:
    ids = {"session_id": people.session_id, "player_id": people.player_ids["Mina"], "link_id": link_id}
    values = {
        argument: ids.get(argument, 1) if converter == "int" else value
        for converter, argument in re.findall(r"<(?:(\w+):)?(\w+)>", rule.rule)
    }
    with app.test_request_context():
        return url_for(rule.endpoint, **values, **query)


def reached_by_answer(group: str, method: str, response) -> str | None:
    """What one answer of a route of ``group`` shows was reached (None: refused)."""
    location = response.headers.get("Location", "")
    if response.status_code in REFUSED or "/host/login" in location:
        return None
    if group == "jury page":
        page = response.get_data(as_text=True)
        return "juror" if "js/jury.js" in page else "judge" if "js/displaced.js" in page else None
    if group == "join page" and method == "POST" and "/jury/" in location:
        return "join"
    return group


def http_reach(app, scene_: Scene, credential: Credential) -> set[str]:
    reached: set[str] = set()
    app.config["WTF_CSRF_ENABLED"] = False  # a form's token is not a credential: the walk reaches past it
    try:
        for rule in app.url_map.iter_rules():
            group = group_of(rule)
            if group is None:
                continue
            for method in sorted(rule.methods & {"GET", "POST"}):
                for value in credential.strings:
                    client = app.test_client()
                    if credential.login:
                        login(client)
                    path = path_of(app, rule, scene_.people, scene_.open_link_id, value, credential.query)
                    data = {"nickname": "probe"} if rule.endpoint == "live.join" else {}
                    item = reached_by_answer(group, method, client.open(path, method=method, data=data))
                    if item:
                        reached.add(item)
    finally:
        app.config["WTF_CSRF_ENABLED"] = True
    return reached


def socket_reach(app, credential: Credential) -> set[str]:
    reached: set[str] = set()
    auths = list(credential.auths)
    for value in credential.strings:
        auths += [{"token": value}, {"code": value, "role": "host"}, {"code": value, "role": "stage"}]
        auths.append({"code": value, "role": "juror", "nickname": "probe"})
    for auth in auths:
        client = None
        if credential.login:
            client = app.test_client()
            login(client)
        role = Role(socketio, app, auth, flask_client=client)
        if not role.connected:
            continue
        snapshot = role.last("snapshot")
        role.client.disconnect()
        kind = snapshot["role"]
        if kind == "host":
            reached |= {"host socket", "identities"}
        elif kind == "juror" and snapshot.get("jury") == "displaced":
            reached.add("judge")
        else:
            reached.add({"stage": "stage", "player": "player"}.get(kind) or ("join" if "nickname" in auth else kind))
        if snapshot.get("identities"):
            reached.add("identities")
    return reached


@pytest.mark.parametrize("phase", PHASES)
def test_each_credential_reaches_what_the_table_says_and_nothing_more(app, db_factory, phase):
    """Found: the join code alone opened the stage, and after the finish its identities (which a
    displaced juror, handed the code, used to answer every round)."""
    made = scene(app, db_factory, phase)
    with db_factory() as db:
        finished = db.scalar(select(VttSession.phase).where(VttSession.id == made.people.session_id)).value
    assert (finished == "finished") == (phase == "after")
    seen = {}
    # the host's login last: its forms (closing the open link...) would change what the others find
    for name in sorted(CREDENTIALS, key=lambda credential: credential == "host login"):
        credential = made.credentials[name]
        reached = http_reach(app, made, credential) | socket_reach(app, credential)
        if "host pages" in reached:
            reached = reached - {"host pages", "host socket"} | {"host"}
        assert reached <= set(REACHES), reached
        seen[name] = reached
    expected = {name: set(REACH[name][phase]) for name in CREDENTIALS}
    assert seen == expected


def test_the_table_of_the_docs_is_the_one_the_walk_asserts():
    text = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    assert markdown_table() in text, (
        "docs/security.md: paste vtt.access.reach.markdown_table() under 'Who can reach what'"
    )
