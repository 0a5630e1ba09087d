"""Helpers for the ``vtt agent`` tests: a small bank and session, a test clip, the agent process, a host driver."""

from __future__ import annotations

import csv
import os
import secrets
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select

from tests.support.apps import host_api_token
from tests.support.paths import ROOT
from tests.support.waiting import wait_until_async
from vtt.banks.fields import NATIVE_COLUMNS as BANK_COLUMNS
from vtt.client.connection import Connection, Ledger
from vtt.db import transaction
from vtt.models import Answer, Event, Juror, Player, PlayerKind, Question, SessionQuestion

CLIP = "test/colours.mp4"  # under the served media folder
COLOURS = ((255, 0, 0), (0, 255, 0), (0, 0, 255))  # one second each, then white
TAGS = ("shot", "Character;Object*", "Identity", "Recall", "background memory")
BANK = [  # qid, question, type, choices, key, start, end, round
    ("c01", "What colour fills the screen first?", "mcq", "Red|Green|Blue|White", "0", 0.0, 3.0, 1),
    ("c02", "What happens to the colours?", "open", "", "They change from red to green to blue.", 0.0, 3.0, 1),
    ("c03", "Which colour comes second?", "mcq", "Red|Green|Blue|White", "1", 0.0, 3.0, 1),
    ("c04", "What colour is last?", "mcq", "Red|Green|Blue|White", "2", 0.0, 3.0, 2),
    ("c05", "Describe the last second.", "open", "", "It is white.", 3.0, 4.0, 2),
    ("c06", "How many colours are there?", "mcq", "1|2|3|4", "3", 0.0, 4.0, 2),
]


@dataclass
class Sitting:
    """A session made for an agent test."""

    session_id: int
    code: str
    agent_token: str
    agent_id: int
    human_id: int
    questions: dict[int, dict[str, Any]] = field(default_factory=dict)  # session question id -> qid, type, ...

    def by_round(self, number: int) -> list[dict[str, Any]]:
        return sorted((q for q in self.questions.values() if q["round"] == number), key=lambda q: q["position"])


def make_sitting(factory, tmp_path: Path, *, rounds: int = 1, answer_seconds: int = 60) -> Sitting:
    """A session of ``rounds`` x 3 questions (mcq, open, mcq in round 1) on a test clip: a human, an AI, a juror."""
    from vtt.banks import bank_by_name, import_bank, read_bank
    from vtt.sessions.create import SessionConfig, create_session

    bank_file = tmp_path / "agent_bank.csv"
    with bank_file.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(BANK_COLUMNS)
        for qid, text, kind, choices, key, start, end, number in BANK:
            writer.writerow([qid, text, kind, choices, key, CLIP, start, end, *TAGS, number])
    with transaction(factory) as db:
        if bank_by_name(db, "Agent test bank") is None:
            import_bank(db, read_bank(bank_file), "Agent test bank")
        config = SessionConfig.from_dict(
            {
                "name": f"Agent test {secrets.token_hex(2)}",
                "bank": "Agent test bank",
                "rounds": rounds,
                "questions_per_round": 3,
                "seed": 11,
                "reveal_policy": "per-round",
                "answer_seconds": answer_seconds,
                "players": [{"name": "Mina", "kind": "human", "age": 10}, {"name": "Robo", "kind": "ai"}],
            }
        )
        created = create_session(db, config)
        db.add(Juror(session_id=created.id, label="J1", token=secrets.token_urlsafe(12)))
        db.flush()
        players = {p.name: p for p in db.scalars(select(Player).where(Player.session_id == created.id))}
        sitting = Sitting(created.id, created.join_code, players["Robo"].token, players["Robo"].id, players["Mina"].id)
        rows = db.execute(
            select(
                SessionQuestion.id,
                SessionQuestion.round,
                SessionQuestion.position,
                Question.qid,
                Question.type,
                Question.choices,
            )
            .join(Question, Question.id == SessionQuestion.question_id)
            .where(SessionQuestion.session_id == created.id)
        ).all()
        for number, round_number, position, qid, kind, choices in rows:
            sitting.questions[number] = {
                "id": number,
                "round": round_number,
                "position": position,
                "qid": qid,
                "type": kind.value,
                "choices": list(choices or []),
            }
    assert players["Robo"].kind is PlayerKind.AI
    return sitting


def make_clip(path: Path, seconds: int = 4, fps: int = 10) -> Path:
    """A small test video (64x48): red, green and blue for a second each, then white."""
    import av
    import numpy as np

    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), "w") as out:
        stream = out.add_stream("mpeg4", rate=fps)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        for index in range(seconds * fps):
            second = index // fps
            image = np.zeros((48, 64, 3), np.uint8)
            image[:] = COLOURS[second] if second < len(COLOURS) else (255, 255, 255)
            for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return path


# --- the agent process ------------------------------------------------------------------------------


class AgentProcess:
    """``python -m vtt.cli agent ...`` in a subprocess; stderr goes to a file (``.log()``)."""

    def __init__(self, tmp_path: Path, *args: str, env: dict[str, str] | None = None, name: str = "agent"):
        self.log_path = tmp_path / f"{name}-{secrets.token_hex(2)}.log"
        self.args = [sys.executable, "-m", "vtt.cli", "agent", *args]
        self.env = {**os.environ, **(env or {})}
        self.process: subprocess.Popen | None = None

    def start(self) -> AgentProcess:
        self._handle = self.log_path.open("w", encoding="utf-8")
        self.process = subprocess.Popen(
            self.args, cwd=ROOT, env=self.env, stdout=self._handle, stderr=subprocess.STDOUT, text=True
        )
        return self

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(timeout=10)
        self._handle.close()

    def wait(self, timeout: float = 30) -> int:
        try:
            return self.process.wait(timeout=timeout)
        finally:
            self._handle.close()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.kill()

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8")


# --- the host, over its socket ----------------------------------------------------------------------


class RecordingConnection(Connection):
    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.events: list[tuple[str, Any]] = []

    async def _on_event(self, event: str, payload: Any = None) -> None:
        self.events.append((event, payload))
        await super()._on_event(event, payload)


class Host:
    """Drives a session move by move, as the host console does, and keeps every event it received."""

    def __init__(self, url: str, sitting: Sitting):
        self.url, self.sitting = url, sitting
        self.connection: RecordingConnection | None = None

    async def __aenter__(self) -> Host:
        auth = {"code": self.sitting.code, "role": "host", "host_token": host_api_token()}
        self.connection = RecordingConnection(self.url, auth, Ledger(), f"host-{secrets.token_hex(3)}")
        await self.connection.open()
        return self

    async def __aexit__(self, *_exc: Any) -> None:
        await self.connection.close()

    @property
    def events(self) -> list[tuple[str, Any]]:
        return self.connection.events

    @property
    def phase(self) -> str | None:
        return self.connection.view.phase

    async def move(self, action: str, **args: Any) -> dict[str, Any]:
        reply = await self.connection.send("host", {"action": action, **args})
        assert reply is not None and reply.get("ok"), (action, args, self.connection.last_error)
        return reply

    def answers_of(self, question: int, player: int) -> list[dict[str, Any]]:
        return [
            payload
            for event, payload in self.events
            if event == "answer" and payload["question"] == question and payload["player"]["id"] == player
        ]

    def agent_reports(self, player: int) -> list[dict[str, Any]]:
        return [p for e, p in self.events if e == "agent" and p.get("player") == player]

    async def until(self, check, timeout: float = 30.0, what: str = "") -> Any:
        return await wait_until_async(check, timeout, interval=0.1, message=what)

    async def current_question(self) -> dict[str, Any]:
        return await self.until(lambda: self.connection.view.data.get("question"), 10, "the question")

    async def ask(self, *, open_answering: bool = True) -> dict[str, Any]:
        """Show the next question (and open answering); returns the host's question payload."""
        await self.move("show_question")
        await self.until(lambda: self.phase == "clip", 10, "phase clip")
        question = await self.current_question()
        if open_answering:
            await self.move("open_answering")
        return question

    async def wait_agent_answer(self, question: int, timeout: float = 30.0) -> dict[str, Any]:
        found = await self.until(
            lambda: self.answers_of(question, self.sitting.agent_id),
            timeout,
            f"the agent's answer to question {question}",
        )
        return found[-1]

    async def close_and_reveal(self) -> None:
        await self.move("close_answering")
        await self.move("reveal")

    async def end_round(self, *, last: bool) -> None:
        await self.move("open_vote")
        await self.move("close_vote")
        await self.move("show_tally")
        await self.move("reveal_identities")
        if last:
            await self.move("finish")

    async def start_round(self, number: int) -> None:
        if number == 1:
            await self.move("open_lobby")
        await self.move("start_round")

    async def each_question(self, number: int) -> AsyncIterator[tuple[dict[str, Any], dict[str, Any]]]:
        """Start round ``number`` and ask its questions in turn: (the sitting's question, the host's payload)."""
        await self.start_round(number)
        for question in self.sitting.by_round(number):
            yield question, await self.ask()

    async def play_round(self, number: int, *, last: bool = True, timeout: float = 30.0) -> list[dict[str, Any]]:
        """Start round ``number``, ask each question and wait for the agent's answer; end the round."""
        answers = []
        async for _question, shown in self.each_question(number):
            answers.append(await self.wait_agent_answer(shown["id"], timeout))
            await self.close_and_reveal()
        await self.end_round(last=last)
        return answers


def agent_answers(factory, sitting: Sitting) -> dict[int, Answer]:
    with factory() as db:
        rows = db.scalars(
            select(Answer).where(Answer.session_id == sitting.session_id, Answer.player_id == sitting.agent_id)
        ).all()
        return {row.session_question_id: row for row in rows}


def answer_events(factory, sitting: Sitting) -> list[Event]:
    with factory() as db:
        return list(
            db.scalars(
                select(Event).where(
                    Event.session_id == sitting.session_id,
                    Event.kind == "answer",
                    Event.actor == f"player:{sitting.agent_id}",
                )
            ).all()
        )
