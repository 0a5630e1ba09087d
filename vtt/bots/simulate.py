"""``vtt simulate``: seat bots in a session, play it over the real protocol, and check the server's record.

The bots only speak Socket.IO to the server at ``url``; the database (the configured one, which
the server must be serving) is used before the run to create a session or read its tokens, and
after it to count what the server recorded.  Every action id of a run starts with the run's own
prefix, so "recorded" counts exactly this run's accepted actions in the server's event log.
"""

from __future__ import annotations

import asyncio
import secrets
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..models import Event, Juror, Player, SessionQuestion, VttSession
from .behaviour import Behaviour, Habits
from ..client.connection import Connection, Ledger, Refused
from .roles import HostBot, JurorBot, PlayerBot

CONNECTS_AT_ONCE = 50  # handshakes in flight: a crowd arriving, not a stampede
HUMAN_PLAYERS = (("Mina", 5, "pre-operational"), ("Leo", 9, "concrete operational"),
                 ("Ada", 14, "formal operational"), ("Grace", 31, "adult"), ("Hoon", 7, "pre-operational"),
                 ("Sara", 11, "concrete operational"))
RECORDED_KINDS = {"vote": "votes", "sheet": "sheets", "answer": "answers"}


@dataclass(frozen=True)
class Seat:
    role: str  # player | juror
    token: str
    name: str
    kind: str = "human"  # a player's kind


@dataclass
class Cast:
    session_id: int
    code: str
    rounds: int
    questions: int
    seats: list[Seat] = field(default_factory=list)

    @property
    def jurors(self) -> int:
        return sum(seat.role == "juror" for seat in self.seats)


# --- before and after: the database ---------------------------------------------------------------

def new_session(db: Session, jurors: int, players: int, seed: int, rounds: int, per_round: int) -> Cast:
    """A session on the demo bank: ``players`` bot humans, one bot AI, ``jurors`` bot jurors."""
    from ..sessions.demo import ensure_demo_bank
    from ..sessions.create import SessionConfig, create_session, numbered_jurors

    if not 1 <= players <= len(HUMAN_PLAYERS):
        raise ValueError(f"--players must be 1 to {len(HUMAN_PLAYERS)}")
    ensure_demo_bank(db)
    people = [{"name": name, "kind": "human", "age": age, "stage": stage}
              for name, age, stage in HUMAN_PLAYERS[:players]]
    people.append({"name": "Bot AI", "kind": "ai", "backends": {"any": "vtt simulate"}})
    config = SessionConfig.from_dict({
        "name": f"Simulation {time.strftime('%Y-%m-%d %H:%M:%S')} {secrets.token_hex(2)}",
        "bank": "Demo drama bank", "rounds": rounds, "questions_per_round": per_round, "seed": seed,
        "answer_seconds": 60, "vote_seconds": 120, "reveal_policy": "per-round", "players": people,
        "jurors": numbered_jurors(jurors)}, source="vtt simulate --new")
    created = create_session(db, config, actor="vtt simulate")
    db.flush()
    return cast_of(db, created.join_code)


def cast_of(db: Session, code: str) -> Cast:
    """Every player and juror place of the session with join code ``code``."""
    row = db.scalar(select(VttSession).where(VttSession.join_code == code.strip().upper()))
    if row is None:
        raise LookupError(f"no session has the join code {code!r}")
    seats = [Seat("player", p.token, p.name, p.kind.value)
             for p in db.scalars(select(Player).where(Player.session_id == row.id).order_by(Player.id))]
    seats += [Seat("juror", j.token, j.label)
              for j in db.scalars(select(Juror).where(Juror.session_id == row.id).order_by(Juror.id))]
    questions = db.scalar(select(func.count()).select_from(SessionQuestion)
                          .where(SessionQuestion.session_id == row.id))
    return Cast(row.id, row.join_code, row.rounds, questions, seats)


def recorded(db: Session, session_id: int, run: str) -> dict[str, Any]:
    """What the server's event log holds of this run's actions, by kind, and where the session stands."""
    counts = dict(db.execute(select(Event.kind, func.count()).where(
        Event.session_id == session_id, Event.client_key.like(f"{run}-%"),
        Event.kind.in_(RECORDED_KINDS)).group_by(Event.kind)).all())
    phase = db.scalar(select(VttSession.phase).where(VttSession.id == session_id))
    return {"counts": {plural: counts.get(kind, 0) for kind, plural in RECORDED_KINDS.items()},
            "phase": phase.value if phase is not None else None}


# --- the run ------------------------------------------------------------------------------------------

@dataclass
class Run:
    """One simulation: who plays, how, and (once run) the ledger."""

    url: str
    cast: Cast
    seed: int = 1
    habits: Habits = field(default_factory=Habits)
    host_token: str | None = None  # given: a host bot drives the session (vtt.access.host_token)
    timeout: float = 1800.0
    progress: bool = False
    run: str = field(default_factory=lambda: f"sim{secrets.token_hex(4)}")
    ledger: Ledger = field(default_factory=Ledger)

    async def play(self) -> Ledger:
        """Seat every bot, play to the end (or the timeout)."""
        bots = [self._bot(seat, index) for index, seat in enumerate(self.cast.seats)]
        seated = asyncio.Event()
        gate = asyncio.Semaphore(CONNECTS_AT_ONCE)
        pending = len(bots)

        async def seat_and_play(bot) -> None:
            nonlocal pending
            try:
                async with gate:
                    await bot.connection.open()
            except Exception as failure:  # noqa: BLE001 - a refused or failed connect is counted; the others go on
                self.ledger.error("connect", repr(failure))
                return
            finally:
                pending -= 1
                if not pending:
                    seated.set()
            try:
                await bot.play()
            finally:
                await bot.connection.close()

        tasks = [seat_and_play(bot) for bot in bots]
        if self.host_token is not None:
            tasks.append(self._drive(seated))
        over = asyncio.Event()
        watcher = asyncio.create_task(self._watch(bots, over)) if self.progress else None
        try:
            await asyncio.wait_for(asyncio.gather(*tasks), self.timeout)
        except TimeoutError:
            self.ledger.error("timeout", f"the session did not finish within {self.timeout:.0f} s")
        finally:
            over.set()
            if watcher:
                await watcher
        return self.ledger

    def _bot(self, seat: Seat, index: int):
        name = f"{seat.role[0]}{index}"
        connection = Connection(self.url, {"token": seat.token}, self.ledger, f"{self.run}-{name}")
        behaviour = Behaviour(self.seed, name, self.habits)
        if seat.role == "juror":
            return JurorBot(connection, behaviour)
        return PlayerBot(connection, behaviour, seat.kind)

    async def _drive(self, seated: asyncio.Event) -> None:
        """The host bot, on the host's API token: a restarted server takes it again on every reconnect (a login
        cookie on the handshake is not sent again by the engine.io client)."""
        await seated.wait()
        auth = {"code": self.cast.code, "role": "host", "host_token": self.host_token}
        connection = Connection(self.url, auth, self.ledger, f"{self.run}-h")
        try:
            await connection.open()
        except Refused as refused:  # not this installation's server, or its host password changed
            raise RuntimeError(f"the server refused the host bot: {refused.error['message']}") from None
        try:
            await HostBot(connection, Behaviour(self.seed, "host", self.habits)).play()
        finally:
            await connection.close()

    async def _watch(self, bots, over: asyncio.Event) -> None:
        """A progress bar on stderr: rounds done, and what the bots have had acknowledged (drawn once more
        at the end, so the last line is the final state)."""
        from tqdm import tqdm

        with tqdm(total=self.cast.rounds, unit="round", file=sys.stderr, dynamic_ncols=True) as bar:
            while True:
                finished = over.is_set()
                status = next((bot.view.status for bot in bots if bot.view.status), {})
                number, phase = status.get("round") or 0, status.get("phase", "connecting")
                done = number if phase in ("vote_closed", "tally", "identities", "finished") else max(number - 1, 0)
                bar.update(done - bar.n)
                acked = self.ledger.acked
                bar.set_postfix_str(f"round {number}/{self.cast.rounds} {phase}; acked: {acked['answers']} answers, "
                                    f"{acked['sheets']} sheet lines, {acked['votes']} votes", refresh=True)
                if finished:
                    return
                try:
                    await asyncio.wait_for(over.wait(), 0.5)
                except TimeoutError:
                    pass


def percentiles_ms(samples: list[float]) -> dict[str, float | None]:
    if not samples:
        return {"p50": None, "p95": None, "p99": None, "max": None}
    ordered = sorted(samples)

    def at(fraction: float) -> float:
        return round(ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))] * 1000, 1)

    return {"p50": at(0.50), "p95": at(0.95), "p99": at(0.99), "max": round(ordered[-1] * 1000, 1)}


def summary(run: Run, server: dict[str, Any]) -> dict[str, Any]:
    """The one JSON object of ``vtt simulate --json``."""
    ledger, counts = run.ledger, server["counts"]
    samples = [s for kind in ("votes", "sheets", "answers") for s in ledger.latencies.get(kind, [])]
    return {
        "session": run.cast.code,
        "jurors": run.cast.jurors,
        "rounds": run.cast.rounds,
        "phase": server["phase"],
        "votes_acked": ledger.acked["votes"], "votes_recorded": counts["votes"],
        "sheets_acked": ledger.acked["sheets"], "sheets_recorded": counts["sheets"],
        "answers_acked": ledger.acked["answers"], "answers_recorded": counts["answers"],
        "ack_ms": percentiles_ms(samples),
        "errors": sum(ledger.errors.values()),
        "refused": sum(ledger.refused.values()),
        "refreshes": ledger.refreshes, "reconnects": ledger.reconnects,
        "problems": ledger.examples,
    }
