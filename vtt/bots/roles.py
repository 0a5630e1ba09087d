"""The simulated people: jurors, players (human or AI) and a host who drives the session.

Each bot reads its :class:`~vtt.client.view.View` and does the next thing a person in its place
would do, one action at a time; after a refresh or a reconnect the snapshot tells it what is
already done.  The host bot takes the moves its status lists (paced by the phase alone), so it can
also take over a session that is already under way.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Any

from ..client.connection import Connection
from .behaviour import Behaviour

ROUND_OVER = frozenset({"round_closed", "vote_closed", "finished"})  # a bot was too slow: not a fault


class Bot:
    idle = 2.0  # seconds a bot waits for news before looking at its view again

    def __init__(self, connection: Connection, behaviour: Behaviour):
        self.connection = connection
        self.behaviour = behaviour

    @property
    def view(self):
        return self.connection.view

    async def pause(self, low: float, high: float) -> None:
        await asyncio.sleep(self.behaviour.think(low, high))

    async def play(self) -> None:
        """Take the next step whenever there is one, until the session has finished."""
        while True:
            if self.view.revoked:  # the host removed this juror or gave a new link: this one plays no more
                return
            if self.view.stale:  # waiting for a snapshot
                await self.connection.wait_change(0.5)
                continue
            if self.view.phase == "finished":
                return
            if not await self.step():
                await self.connection.wait_change(self.idle)

    async def step(self) -> bool:
        """Do the next thing, if there is one now; False to wait for news."""
        raise NotImplementedError


class JurorBot(Bot):
    """Writes sheet lines about most answers of each revealed question, saved as the juror page saves them
    (every line changed since the last save in one message, sometimes with a draft mid-typing), then votes."""

    def __init__(self, connection: Connection, behaviour: Behaviour):
        super().__init__(connection, behaviour)
        self.noted: set[tuple[int, str]] = set()  # (question, alias) lines done or passed over
        self.likeness: dict[int, dict[str, int]] = {}  # round -> alias -> the human-likeness this juror gave
        self.voted: set[int] = set()

    async def step(self) -> bool:
        data, number = self.view.data, self.view.status.get("round")
        self.noted |= {(row["question"], row["alias"]) for row in data.get("sheet", [])}
        self.voted |= {row["round"] for row in data.get("votes", [])}
        todo = [
            (shown["question"], answer["alias"])
            for shown in data.get("revealed", [])
            for answer in shown["answers"]
            if (shown["question"], answer["alias"]) not in self.noted
        ]
        if todo and number not in self.voted:
            question = todo[0][0]
            aliases = [alias for q, alias in todo if q == question]
            self.noted |= {(question, alias) for alias in aliases}
            chosen = [alias for alias in aliases if self.behaviour.chance(self.behaviour.habits.note_share)]
            if chosen:
                self.likeness.setdefault(number, {}).update(await self._write_lines(question, chosen))
            return True
        if self.view.phase == "voting" and number not in self.voted:
            self.voted.add(number)
            await self._vote(number, self.likeness.get(number, {}))
            return True
        return False

    async def _write_lines(self, question: int, aliases: list[str]) -> dict[str, int]:
        behaviour, pending, likeness = self.behaviour, [], {}
        for alias in aliases:
            line = {
                "question": question,
                "alias": alias,
                "note": behaviour.note(),
                "human_likeness": behaviour.likeness(),
                "looks_like_ai": behaviour.chance(0.3),
            }
            await self.pause(0.3, 2.0)
            if behaviour.chance(behaviour.habits.typing_saves):  # the page saves mid-typing: a draft of this line
                draft = {**line, "note": line["note"][: len(line["note"]) // 2]}
                await self.connection.send("sheet", {"lines": [*pending, draft]}, expected=ROUND_OVER)
                pending = []
                await self.pause(0.2, 1.0)
            pending.append(line)
            likeness[alias] = line["human_likeness"]
        await self.connection.send("sheet", {"lines": pending}, expected=ROUND_OVER)
        return likeness

    async def _vote(self, number: int, likeness: dict[str, int]) -> None:
        behaviour, habits = self.behaviour, self.behaviour.habits
        if behaviour.chance(habits.refresh):
            await self.connection.refresh()
        elif behaviour.chance(habits.drop):
            await self.connection.drop()
        await self.pause(0.5, 3.0)
        aliases = list((self.view.data.get("round") or {}).get("aliases", []))
        slots = self.view.status.get("vote_slots") or 1
        picks = behaviour.suspects(aliases, likeness, slots)
        for slot, alias in enumerate(picks, start=1):
            chosen = None if behaviour.chance(habits.abstain) else alias
            vote = {
                "round": number,
                "slot": slot,
                "alias": chosen,
                "confidence": behaviour.confidence(),
                "reason": behaviour.reason(),
            }
            await self.connection.send("vote", vote, expected=ROUND_OVER)
        if picks and len(aliases) > len(picks) and behaviour.chance(habits.change_vote):
            await self.pause(0.5, 2.0)
            other = behaviour.random.choice([a for a in aliases if a not in picks])
            await self.connection.send(
                "vote",
                {
                    "round": number,
                    "slot": 1,
                    "alias": other,
                    "confidence": behaviour.confidence(),
                    "reason": "changed my mind",
                },
                expected=ROUND_OVER,
            )


class PlayerBot(Bot):
    """Answers each question of the rounds it plays in, within the time limit; sometimes changes its answer."""

    def __init__(self, connection: Connection, behaviour: Behaviour, kind: str):
        super().__init__(connection, behaviour)
        self.kind = kind
        self.answered: set[int] = set()
        self.seen_round: int | None = None

    async def step(self) -> bool:
        data, number = self.view.data, self.view.status.get("round")
        if number != self.seen_round:  # a new round: the snapshot says whether this player plays in it
            self.seen_round = number
            await self.connection.resync()
            return True
        if data.get("answer"):
            self.answered.add(data["answer"]["question"])
        question = data.get("question")
        if self.view.phase == "answering" and data.get("playing") and question and question["id"] not in self.answered:
            self.answered.add(question["id"])
            await self._answer(question)
            return True
        return False

    async def _answer(self, question: dict[str, Any]) -> None:
        await asyncio.sleep(min(self.behaviour.think(0.5, 3.0), self._time_left() * 0.5))
        await self.connection.send("answer", self._content(question), expected=frozenset({"answering_closed"}))
        if self.behaviour.chance(self.behaviour.habits.change_answer) and self.view.phase == "answering":
            await asyncio.sleep(min(self.behaviour.think(0.3, 1.0), self._time_left() * 0.5))
            await self.connection.send("answer", self._content(question), expected=frozenset({"answering_closed"}))

    def _content(self, question: dict[str, Any]) -> dict[str, Any]:
        if question["type"] == "mcq":
            content = {"question": question["id"], "choice": self.behaviour.choice(len(question["choices"]))}
        else:
            content = {"question": question["id"], "text": self.behaviour.open_answer(self.kind)}
        if self.kind == "ai":  # what an agent sends: the program behind the answer (one per AI player here)
            me = (self.view.data.get("me") or {}).get("name") or "AI"
            content["provenance"] = {"backend": "vtt simulate", "model": f"bot {me}", "settings": {}}
        return content

    def _time_left(self) -> float:
        deadline = self.view.status.get("deadline")
        if not deadline:
            return 60.0
        moment = datetime.fromisoformat(deadline.replace("Z", "+00:00"))
        return max(0.0, (moment - datetime.now(UTC)).total_seconds())


class HostBot(Bot):
    """Drives the session to its end: the usual move of those the host's status lists, waits are bounded.

    Answering closes when every playing player has answered (or its deadline passes), the vote when
    every juror has voted (or ``vote_wait`` seconds pass); the jury gets ``judge_seconds`` per question.
    """

    # The bot screens no clip and extends no time: answering opens when it says so, its waits bound the phases.
    PASSED_OVER = frozenset({"play_clip", "extend"})

    def __init__(
        self,
        connection: Connection,
        behaviour: Behaviour,
        *,
        judge_seconds: float = 2.0,
        answer_wait: float = 60.0,
        vote_wait: float = 120.0,
    ):
        super().__init__(connection, behaviour)
        self.judge_seconds, self.answer_wait, self.vote_wait = judge_seconds, answer_wait, vote_wait
        self._entered: tuple[Any, ...] | None = None  # (phase, round, position) and when it began
        self._since = 0.0

    idle = 0.25  # the host's waits are timed: look often

    async def step(self) -> bool:
        move = self.next_move()
        if move is None:
            return False
        reply = await self.connection.send("host", move, expected=frozenset({"wrong_phase"}))
        if reply is None:  # the phase moved under us (a deadline): look again
            await self.connection.resync()
        return True

    def next_move(self) -> dict[str, Any] | None:
        """The host's next move now, or None to wait a little."""
        data, status = self.view.data, self.view.status
        phase, number = status.get("phase"), status.get("round")
        here = (phase, number, status.get("position"))
        if here != self._entered:
            self._entered, self._since = here, time.monotonic()
        waited = time.monotonic() - self._since
        move = next((move for move in status.get("moves", []) if move not in self.PASSED_OVER), None)
        if move is None:
            return None
        if phase == "answering" and not (self._all_answered(number) or waited > self.answer_wait):
            return None
        if phase == "judging" and waited < self.judge_seconds * self.behaviour.habits.pace:
            return None
        if phase == "voting":
            count = data.get("votes") or {}
            everyone = count.get("round") == number and count.get("voted", 0) >= count.get("jurors", 0)
            if not (everyone or waited > self.vote_wait):
                return None
        return {"action": move}

    def _all_answered(self, number: int) -> bool:
        data = self.view.data
        question = data.get("question")
        rounds = {card["round"]: card for card in data.get("rounds", [])}
        if not question or number not in rounds:
            return False
        playing = set(rounds[number]["participants"])
        answered = {row["player"]["id"] for row in data.get("answers", {}).get(str(question["id"]), [])}
        return playing <= answered
