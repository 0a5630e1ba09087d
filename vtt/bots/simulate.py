"""``vtt simulate``: seat bots in a session, play it over the real protocol, and check the server's record.

The bots only speak Socket.IO to the server at ``url``; the database side of a run (creating a session or
reading its places before, counting what the server recorded after) is :mod:`vtt.sessions.simulation`.
Every action id of a run starts with the run's own prefix, so "recorded" counts exactly this run's
accepted actions in the server's event log.
"""

from __future__ import annotations

import asyncio
import secrets
import sys
from dataclasses import dataclass, field
from typing import Any

from ..client.cast import Cast, Seat
from ..client.connection import Connection, Ledger, Refused
from .behaviour import Behaviour, Habits
from .roles import HostBot, JurorBot, PlayerBot

CONNECTS_AT_ONCE = 50  # handshakes in flight: a crowd arriving, not a stampede


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
            except Exception as failure:
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
        connection = Connection(
            self.url, {"token": seat.token}, self.ledger, f"{self.run}-{name}", route=self.cast.code
        )
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
                bar.set_postfix_str(
                    f"round {number}/{self.cast.rounds} {phase}; acked: {acked['answers']} answers, "
                    f"{acked['sheets']} sheet lines, {acked['votes']} votes",
                    refresh=True,
                )
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
        "votes_acked": ledger.acked["votes"],
        "votes_recorded": counts["votes"],
        "sheets_acked": ledger.acked["sheets"],
        "sheets_recorded": counts["sheets"],
        "answers_acked": ledger.acked["answers"],
        "answers_recorded": counts["answers"],
        "ack_ms": percentiles_ms(samples),
        "errors": sum(ledger.errors.values()),
        "refused": sum(ledger.refused.values()),
        "refreshes": ledger.refreshes,
        "reconnects": ledger.reconnects,
        "problems": ledger.examples,
    }
