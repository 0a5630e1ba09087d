"""A live session's room over the Socket.IO protocol for tests/test_session_model.py: the host, the players and the
jurors connected to an app on one database; a restart (a new app and hub over the same database, everyone
reconnecting); two actions held so that they land in one writer batch; a displaced jury and an AI jury afterwards.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from typing import Any

from sqlalchemy import select

from tests.support.apps import login, threaded_app
from tests.support.judge import FakeJudge
from tests.support.live import People, Role, client_id, make_session
from tests.support.session_model import PlacedQuestion, SessionModel
from tests.support.waiting import wait_until
from vtt.extensions import socketio
from vtt.juries.ai import JurySettings, judge_session
from vtt.juries.displaced import JuryError, create_jurors
from vtt.models import RoundAlias, SessionQuestion, VttSession

AI_MODEL = "model-check-7b"
_sessions = itertools.count(1)
DISPLACED_JURORS = 2


def ai_pick(number: int, aliases: list[str]) -> str:
    """The fake AI juror's pick in a round, from what it is shown (the model applies the same rule)."""
    return sorted(aliases)[(number - 1) % len(aliases)]


def round_document(body: dict) -> dict:
    """The round an AI juror's request shows: the JSON document between its <round_data> tags."""
    text = body["messages"][1]["content"]
    text = text if isinstance(text, str) else text[0]["text"]
    return json.loads(text.split("<round_data>")[1].split("</round_data>")[0])


class Room:
    """The session's people connected to one app; ``restart`` replaces the app as a new process would."""

    def __init__(self, database_url: str, factory, *, rounds: int, per_round: int, jurors: int):
        self.database_url = database_url
        self.factory = factory
        self.people: People = make_session(
            factory, rounds=rounds, per_round=per_round, jurors=jurors, name=f"Model check {next(_sessions)}"
        )
        self.removed: set[str] = set()
        self.app = threaded_app(database_url)
        self._connect()

    # --- the people -------------------------------------------------------------------------------------------

    def _connect(self) -> None:
        people = self.people
        http = self.app.test_client()
        login(http)
        self.host = Role(socketio, self.app, {"code": people.code, "role": "host"}, flask_client=http)
        self.second_host = Role(socketio, self.app, {"code": people.code, "role": "host"}, flask_client=http)
        self.players = {name: Role(socketio, self.app, {"token": token}) for name, token in people.players.items()}
        self.jurors = {
            label: Role(socketio, self.app, {"token": token})
            for label, token in people.jurors.items()
            if label not in self.removed
        }

    def restart(self) -> None:
        """Every page disconnects, the process goes away, a new one serves the same database, everyone comes back."""
        for role in self._roles():
            if role.connected:
                role.client.disconnect()
        self.app.extensions["vtt.hub"].stop()
        self.app = threaded_app(self.database_url)
        self._connect()

    def _roles(self) -> list[Role]:
        return [self.host, self.second_host, *self.players.values(), *self.jurors.values()]

    def close(self) -> None:
        for role in self._roles():
            if role.connected:
                role.client.disconnect()
        self.app.extensions["vtt.hub"].stop()

    def host_action(self, action: str, **args: Any) -> dict[str, Any]:
        return self.host.send("host", {"id": client_id("h"), "action": action, **args})

    def moves(self) -> list[str]:
        return self.host.moves()

    # --- the design and the deal, as the model takes them ---------------------------------------------------

    def model(self) -> SessionModel:
        with self.factory() as db:
            placed = db.scalars(
                select(SessionQuestion)
                .where(SessionQuestion.session_id == self.people.session_id)
                .order_by(SessionQuestion.round, SessionQuestion.position)
            ).all()
            questions = [
                PlacedQuestion(
                    sq.id, sq.question.qid, sq.round, sq.position, sq.question.type.value, sq.question.answer_index
                )
                for sq in placed
            ]
            rounds = db.get(VttSession, self.people.session_id).rounds
        players = {pid: name for name, pid in self.people.player_ids.items()}
        ai = {self.people.player_ids[name] for name in self.people.ai_names}
        return SessionModel(players, ai, questions, rounds, sorted(self.people.jurors))

    def deal(self, number: int) -> dict[str, int]:
        """The round's aliases as the product dealt them (random: the model takes the deal as given)."""
        with self.factory() as db:
            rows = db.scalars(
                select(RoundAlias).where(RoundAlias.session_id == self.people.session_id, RoundAlias.round == number)
            ).all()
            return {row.alias: row.player_id for row in rows}

    # --- a vote and a removal in one writer batch -------------------------------------------------------------

    def in_one_batch(self, sends: list[Callable[[], dict[str, Any]]]) -> list[dict[str, Any]]:
        """``sends`` queued, in order, behind a batch the writer is held in, so that they are decided and written
        together in the next one (what a vote and the host's removal 0-2 ms apart do under load)."""
        writer = self.app.extensions["vtt.hub"].writer
        entered, gate = threading.Event(), threading.Event()
        apply = writer.apply

        def held(batch):
            writer.apply = apply
            entered.set()
            gate.wait(10)
            apply(batch)

        writer.apply = held
        blocker = {"id": client_id("h"), "action": "remove_juror", "juror": "nobody"}  # refused: changes nothing
        threads = [threading.Thread(target=self.second_host.send, args=("host", blocker))]
        threads[0].start()
        assert entered.wait(10), "the writer never took the held batch"
        replies: list[dict[str, Any]] = [{}] * len(sends)
        for index, send in enumerate(sends):

            def run(index=index, send=send):
                replies[index] = send()

            threads.append(threading.Thread(target=run))
            threads[-1].start()
            wait_until(
                lambda count=index + 1: writer.actions.queued() >= count, timeout=10, message="the action to be queued"
            )
        gate.set()
        for thread in threads:
            thread.join(20)
        return replies

    # --- the other juries, once the session has finished ----------------------------------------------------

    def displaced_jury(self) -> tuple[list[int] | None, dict[str, dict[int, str | None]]]:
        """Two displaced jurors judge every round they are given: D001 names the first alias, D002 abstains in odd
        rounds and names the last alias in even ones.  (the rounds given, or None when the product refused to make
        the jurors; label -> round -> alias)."""
        with self.factory() as db:
            try:
                made = create_jurors(db, db.get(VttSession, self.people.session_id), DISPLACED_JURORS)
                db.commit()
            except JuryError:
                return None, {}
        given, cast = None, {}
        for index, juror in enumerate(made):
            role = Role(socketio, self.app, {"token": juror.token})
            cards = role.last("snapshot")["rounds"]
            given = [card["round"] for card in cards]
            cast[juror.label] = {}
            for card in cards:
                number, aliases = card["round"], sorted(card["aliases"])
                alias = aliases[0] if index == 0 else (aliases[-1] if number % 2 == 0 else None)
                reply = role.send("vote", {"id": client_id("d"), "round": number, "alias": alias, "confidence": 3})
                assert reply["ok"], reply
                cast[juror.label][number] = alias
            role.client.disconnect()
        return given, cast

    def ai_jury(self) -> tuple[list[int] | None, str | None]:
        """The AI jury of :data:`AI_MODEL` against a local fake; (the rounds it was asked, or None when the product
        refused the run; the AI juror's label)."""

        def respond(body: dict) -> str:
            document = round_document(body)
            alias = ai_pick(document["round"], document["aliases"])
            return json.dumps({"alias": alias, "confidence": 4, "reason": "model check"})

        with FakeJudge(respond=respond) as judge:
            try:
                summary = judge_session(
                    self.factory, self.people.session_id, JurySettings.from_spec(f"http:{judge.url}", AI_MODEL)
                )
            except JuryError:
                return None, None
            asked = sorted(round_document(body)["round"] for body in judge.requests)
        assert summary.read == len(asked) and summary.failed == 0, summary
        return asked, summary.juror
