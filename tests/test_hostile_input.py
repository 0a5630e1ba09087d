"""One client's bad input fails alone: text the database cannot keep, frames that cannot be read, a batch
with a poisoned action in it."""

from __future__ import annotations

import json
import re
import time
import urllib.request

import pytest
from sqlalchemy import func, select

from tests.support.live import TO_JUDGING, Role, client_id, connect_all, make_session
from tests.support.served import ServedApp
from vtt.db import KeptDb, make_writer_engine
from vtt.engine.actions import Action, Actor
from vtt.extensions import socketio
from vtt.models import Vote
from vtt.persistence.batch import StateCache, Submission, run_batch
from vtt.protocol.text import first_unstorable, unstorable

LONE_SURROGATE = "\ud800"


def test_text_the_database_cannot_keep_is_named():
    assert unstorable("한국어, emoji 😀 and tabs\t") is None
    assert "lone surrogate" in unstorable(f"a{LONE_SURROGATE}b")
    assert unstorable("a\x00b") == "contains a NUL character"
    assert (
        first_unstorable({"lines": [{"note": "fine"}, {"note": "x\x00"}]})
        == "field 'lines.1.note' contains a NUL character"
    )
    problem = first_unstorable({f"key{LONE_SURROGATE}": 1})
    assert problem.startswith("field 'key\\ud800'") and problem.encode("utf-8")  # the reply itself can be sent
    deep: list = []
    for _ in range(40):
        deep = [deep]
    assert "nested more than 16 levels" in first_unstorable({"provenance": {"settings": {"x": deep}}})


def _voting_session(app, client, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=12)
    host, _stage, _players, jurors = connect_all(app, client, people)
    for move in (*TO_JUDGING, "open_vote"):
        host.host(move)
    aliases = jurors["J1"].fresh_snapshot()["round"]["aliases"]
    return people, jurors, aliases


def test_unstorable_text_over_the_socket_is_refused_alone(app, client, db_factory):
    people, jurors, aliases = _voting_session(app, client, db_factory)
    poisoned = [
        {"id": LONE_SURROGATE, "round": 1, "alias": aliases[0]},
        {"id": client_id(), "round": 1, "alias": aliases[0], "reason": f"because{LONE_SURROGATE}"},
        {"id": "with\x00nul", "round": 1, "alias": aliases[0]},
        {"id": client_id(), "round": 1, "alias": aliases[0], "reason": "a\x00b", "confidence": 9},  # slow path
    ]
    for message in poisoned:
        reply = jurors["J1"].send("vote", message)
        assert reply["ok"] is False and reply["error"]["code"] == "invalid", reply
        assert "surrogate" in reply["error"]["message"] or "NUL" in reply["error"]["message"]
    note = jurors["J1"].send(
        "sheet", {"id": client_id(), "question": 1, "alias": aliases[0], "note": f"x{LONE_SURROGATE}"}
    )
    assert note["error"]["code"] == "invalid" and "'note'" in note["error"]["message"]
    # an open join with such a nickname is refused with the reason, and writes no juror
    refused = Role(socketio, app, {"code": people.code, "role": "juror", "nickname": f"K{LONE_SURROGATE}"})
    assert not refused.connected
    honest = jurors["J2"].send("vote", {"id": client_id(), "round": 1, "alias": aliases[1]})
    assert honest["ok"], honest
    with db_factory() as db:
        assert db.scalar(select(func.count()).select_from(Vote)) == 1


def test_an_action_the_database_refuses_fails_alone_and_the_rest_of_its_batch_commits(
    app, client, db_factory, database_url
):
    people, jurors, aliases = _voting_session(app, client, db_factory)
    juror_ids = {label: jurors[label].fresh_snapshot()["me"].get("id") for label in jurors}
    with db_factory() as db:
        from vtt.models import Juror

        ids = dict(db.execute(select(Juror.label, Juror.id).where(Juror.session_id == people.session_id)).all())
    assert juror_ids  # the jurors are connected; their ids come from the database
    labels = sorted(ids)[:9]

    def vote(label: str, key: str) -> Submission:
        return Submission(
            people.session_id,
            Action(
                Actor("juror", ids[label]),
                "vote",
                {"round": 1, "slot": 1, "alias": aliases[0], "confidence": None, "reason": None},
                key,
            ),
        )

    # a key no validation let through reaches the batch: the database's driver cannot encode it
    batch = [vote(label, f"honest-{label}") for label in labels[:4]]
    batch.append(vote(labels[4], f"poison{LONE_SURROGATE}"))
    batch += [vote(label, f"honest-{label}") for label in labels[5:]]
    writer = KeptDb(make_writer_engine(database_url))
    try:
        result = run_batch(writer, batch, StateCache(), time.sleep)
    finally:
        writer.close()
        writer.engine.dispose()
    replies = [submission.reply for submission in batch]
    assert [reply["ok"] for reply in replies] == [True] * 4 + [False] + [True] * 4
    assert replies[4]["error"]["code"] == "server_error"
    with db_factory() as db:
        voters = set(db.scalars(select(Vote.juror_id)))
    assert voters == {ids[label] for label in labels if label != labels[4]}
    # the jury's vote count went out once per committed half, never for the poisoned action
    assert result.messages and all(message.payload["state_version"] > 0 for message in result.messages)


class Polling:
    """A bare engine.io polling connection: sends any text as a Socket.IO frame, reads the frames back."""

    def __init__(self, url: str):
        self.url = url
        opened = self._http("/socket.io/?EIO=4&transport=polling")
        self.path = f"/socket.io/?EIO=4&transport=polling&sid={json.loads(opened[1:])['sid']}"
        self.pending: list[str] = []

    def _http(self, path: str, body: str | None = None) -> str:
        request = urllib.request.Request(
            self.url + path,
            data=None if body is None else body.encode(),
            method="GET" if body is None else "POST",
            headers={"Content-Type": "text/plain;charset=UTF-8"},
        )
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.read().decode()

    def send(self, frame: str) -> None:
        self._http(self.path, frame)

    def next_starting(self, prefix: str) -> str:
        """The next engine.io packet that starts with ``prefix`` (others are skipped)."""
        while True:
            while self.pending:
                packet = self.pending.pop(0)
                if packet.startswith(prefix):
                    return packet[len(prefix) :]
            self.pending = self._http(self.path).split("\x1e")


@pytest.mark.timeout(120)
def test_frames_that_cannot_be_read_get_a_refusal_and_no_traceback(database_url, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1)
    frames = {
        "deep": '421["vote",' + "[" * 100_000 + "]" * 100_000 + "]",
        "digits": '422["vote",{"id":"x","round":' + "9" * 10_000 + ',"alias":null}]',
        "json": '423["vote",{"id":',
        "type": '496["vote"]',  # no such packet type
        "binary": '451-5["vote",{"_placeholder":true,"num":0}]',
    }
    with ServedApp({"DATABASE_URL": database_url}) as served:
        juror = Polling(served.url)
        juror.send("40" + json.dumps({"token": people.jurors["J1"]}))
        juror.next_starting("40")
        replies = {}
        for name, frame in frames.items():
            juror.send(frame)
            ack = {"type": "6", "binary": "5"}.get(name, frame[2])
            replies[name] = json.loads(juror.next_starting("43" + ack))[0]
        juror.send('424["clock"]')  # the connection is still there and still answers
        assert json.loads(juror.next_starting("434"))[0]["ok"] is True
        juror.send('45["vote",{"id":')  # one that asks for no answer: the connection is closed
        juror.next_starting("41")
        stranger = Polling(served.url)
        stranger.send('40{"token":')
        refused = json.loads(stranger.next_starting("44"))
    assert replies["deep"]["error"] == {
        "code": "malformed",
        "message": "this message cannot be read: its JSON is nested too deeply",
    }
    assert replies["digits"]["error"]["message"].endswith("a number in it is too large")
    assert "not valid JSON" in replies["json"]["error"]["message"]
    assert replies["type"]["error"]["message"].endswith("packet type 9 is not accepted from clients")
    assert replies["binary"]["error"]["message"].endswith("packet type 5 is not accepted from clients")
    assert refused["data"]["code"] == "invalid" and "cannot be read" in refused["message"]
    assert "Traceback" not in served.output, served.output
    assert served.output.count("could not be read") >= 4


def test_a_form_field_with_a_nul_is_refused_before_any_view_writes(client, db_factory):
    """PostgreSQL refuses NUL in text; every form is refused at the door instead of failing half-way."""
    people = make_session(db_factory, rounds=1, per_round=1, jurors=0, open_join=True)
    token = re.search(r'name="csrf_token" value="([^"]+)"', client.get(f"/join/{people.code}").get_data(as_text=True))
    refused = client.post(f"/join/{people.code}", data={"nickname": "Kim\x00", "csrf_token": token.group(1)})
    assert refused.status_code == 400 and "contains a NUL character" in refused.get_data(as_text=True)
    assert client.get(f"/join/{people.code}?door=12\x0034").status_code == 400
    with db_factory() as db:
        from vtt.models import Juror

        assert db.scalar(select(func.count()).select_from(Juror)) == 0
    assert (
        client.post(f"/join/{people.code}", data={"nickname": "Kim", "csrf_token": token.group(1)}).status_code == 302
    )
