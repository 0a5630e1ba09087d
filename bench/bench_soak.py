"""A long-lived process: many short sessions served one after another, and its memory after each.

    python bench/bench_soak.py [--sessions 200] [--alive 1] [--warmup 50] [--jurors 3] [--settle 65] [--every N]
                               [--timeout 30]

One ``vtt serve`` process (``python run.py``, gevent, a new SQLite file) serves ``--sessions`` short sessions, at most
``--alive`` of them at once (the next starts when one ends). Each session is played whole over the socket, as its
pages would: the host's console and the stage screen (the host's login), 3 players (one of them the AI's seat, its
answers sent as an agent would), ``--jurors`` jurors; two rounds of one question each: answers, a sheet line from
every juror, votes, the tally, the identities, the end. Everyone then leaves, and one displaced juror judges the
finished session (its link made as the host's console makes it) and leaves too.

Printed: the server's RSS every tenth of the run, then its RSS after the warm-up (``--warmup`` sessions) and at the
end, each read after ``--settle`` seconds with nothing happening (the server's full garbage collection runs once it
has been quiet a while, at most once a minute: vtt.realtime.loopwatch.QuietCollector; and the sessions served are
let go), the growth between the two, and the target: less than 1 MiB over the sessions after the warm-up.
``--every N`` also reads it (after the same quiet pause) every N sessions after the warm-up: whether the growth goes
on with the sessions or stops once the busiest moment has been seen (docs/benchmarks.md, 2026-11-28 evening).
``--timeout`` is how long a client waits for an answer (seconds): raise it on a loaded machine.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_load import CALL_TIMEOUT
from loadclient import LeanClient
from servers import DEMO_BANK, Served, Target, bench_session, vtt_target

TARGET_MIB = 1.0
ROUNDS = 2


@dataclass
class Soaked:
    """One session of the run: its id, join code and links."""

    session_id: int
    code: str
    players: list[str]
    jurors: list[str]


class Person(LeanClient):
    """A lean client that keeps the last payload of each event."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.last: dict[str, Any] = {}

    def _dispatch(self, data: str) -> None:
        super()._dispatch(data)
        if data.startswith("42"):
            import json

            event, *rest = json.loads(data[2:])
            self.last[event] = rest[0] if rest else None

    async def ok(self, event: str, payload: dict[str, Any]) -> dict[str, Any]:
        reply = await self.call(event, payload, CALL_TIMEOUT)
        if not reply.get("ok"):
            raise SystemExit(f"{event} {payload} was refused: {reply}")
        return reply


def create_sessions(url: str, count: int, jurors: int) -> list[Soaked]:
    """``count`` sessions of 3 players and ``jurors`` jurors, written before the server starts."""
    from sqlalchemy import select

    from vtt.banks import bank_by_name, import_bank, read_bank
    from vtt.db import make_db_factory, make_engine, transaction
    from vtt.models import Player

    engine = make_engine(url)
    made = []
    try:
        with transaction(make_db_factory(engine)) as db:
            if bank_by_name(db, "Demo drama bank") is None:
                import_bank(db, read_bank(DEMO_BANK), "Demo drama bank")
            for n in range(1, count + 1):
                created, tokens = bench_session(
                    db,
                    jurors,
                    "J{}",
                    name=f"Soak {n}",
                    rounds=ROUNDS,
                    questions_per_round=1,
                    seed=n,
                    reveal_policy="per-round",
                )
                players = list(db.scalars(select(Player.token).where(Player.session_id == created.id)))
                made.append(Soaked(created.id, created.join_code, players, tokens))
    finally:
        engine.dispose()
    return made


def displaced_link(url: str, session_id: int) -> str:
    """A displaced juror's link of a finished session (as ``vtt jury displaced`` makes it)."""
    from vtt.db import make_db_factory, make_engine
    from vtt.juries.displaced import create_jurors
    from vtt.models import VttSession

    engine = make_engine(url)
    try:
        with make_db_factory(engine)() as db:
            (made,) = create_jurors(db, db.get(VttSession, session_id), 1)
            db.commit()
            return made.token
    finally:
        engine.dispose()


async def play(http, served_url: str, database_url: str, cookie: str, soaked: Soaked) -> None:
    """One session from its lobby to its end, then a displaced juror's visit."""
    code = soaked.code

    def person(auth: dict[str, Any], headers: dict[str, str] | None = None) -> Person:
        return Person(http, served_url, auth, headers=headers, session=code)

    host = person({"code": code, "role": "host"}, {"Cookie": cookie})
    stage = person({"code": code, "role": "stage"}, {"Cookie": cookie})
    players = [person({"token": token}) for token in soaked.players]
    jurors = [person({"token": token}) for token in soaked.jurors]
    everyone = [host, stage, *players, *jurors]
    await asyncio.gather(*(one.connect(CALL_TIMEOUT) for one in everyone))
    moves = iter(range(1, 10_000))

    async def move(action: str) -> None:
        await host.ok("host", {"id": f"h{next(moves)}", "action": action})

    await move("open_lobby")
    for number in range(1, ROUNDS + 1):
        await move("start_round")
        await move("show_question")
        question = (await players[0].ok("snapshot", {}))["snapshot"]["question"]
        await move("open_answering")
        given = {"choice": 1} if question["type"] == "mcq" else {"text": "she looks sad"}
        await asyncio.gather(
            *(p.ok("answer", {"id": secrets.token_hex(6), "question": question["id"], **given}) for p in players)
        )
        await move("close_answering")
        await move("reveal")
        line = {"question": question["id"], "alias": "A", "note": "too quick", "human_likeness": 2}
        await asyncio.gather(*(j.ok("sheet", {"id": secrets.token_hex(6), **line}) for j in jurors))
        await move("open_vote")
        vote = {"round": number, "alias": "B", "confidence": 3}
        await asyncio.gather(*(j.ok("vote", {"id": secrets.token_hex(6), **vote}) for j in jurors))
        await move("close_vote")
        await move("show_tally")
        await move("reveal_identities")
    await move("finish")
    await asyncio.gather(*(one.close() for one in everyone))

    token = await asyncio.to_thread(displaced_link, database_url, soaked.session_id)
    later = person({"token": token})
    await later.connect(CALL_TIMEOUT)
    while later.snapshot is None:  # a displaced juror's snapshot may be paced (vtt.realtime.snapshots)
        await asyncio.sleep(0.01)
    card = later.snapshot["rounds"][0]
    vote = {"id": secrets.token_hex(6), "round": card["round"], "alias": card["aliases"][0], "confidence": 2}
    await later.ok("vote", vote)
    await later.close()


async def soak(served: Served, target: Target, sessions: list[Soaked], alive: int, marks: set[int], settle: float):
    """Play every session, ``alive`` at once; the RSS (MiB) after each session number in ``marks``, read after
    ``settle`` quiet seconds."""
    import aiohttp

    cookie = await asyncio.to_thread(target.host_cookie, served.url)
    figures: dict[int, float] = {}
    done = 0
    gate = asyncio.Semaphore(alive)
    lock = asyncio.Lock()
    tenth = max(1, len(sessions) // 10)
    started = time.monotonic()
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as http:

        async def one(soaked: Soaked) -> None:
            nonlocal done
            async with gate:
                await play(http, served.url, target.database_url, cookie, soaked)
            async with lock:
                done += 1
                if done % tenth == 0:
                    print(
                        f"  {done:>4} sessions, {time.monotonic() - started:6.1f} s: RSS {served.memory_mib():.1f} MiB",
                        flush=True,
                    )

        cut = sorted(marks)
        position = 0
        for mark in cut:  # the sessions up to each mark, then a quiet pause and the reading
            await asyncio.gather(*(one(soaked) for soaked in sessions[position:mark]))
            position = mark
            await asyncio.sleep(settle)
            figures[mark] = served.memory_mib()
            anonymous, files = served.memory_mib("RssAnon"), served.memory_mib("RssFile")
            print(
                f"  after session {mark} and {settle:.0f} quiet seconds: RSS {figures[mark]:.2f} MiB "
                f"(anonymous {anonymous:.2f}, files {files:.2f})",
                flush=True,
            )
    return figures


def soak_run(
    sessions: int, alive: int, warmup: int, jurors: int, settle: float, every: int = 0
) -> tuple[dict[int, float], dict]:
    """A fresh server through ``sessions`` sessions: its RSS (MiB) after ``warmup``, every ``every`` sessions after
    it (0: none) and after the last, and the sessions its ``/healthz`` still lists at the end (served or owned)."""
    folder = Path(tempfile.mkdtemp(prefix="vtt-bench-soak-"))
    try:
        target = vtt_target(1, folder)  # the database migrated, the server's command and password
        made = create_sessions(target.database_url, sessions, jurors)
        with Served(target.command, target.env, folder) as served:
            print(f"  idle: RSS {served.memory_mib():.1f} MiB", flush=True)
            marks = {warmup, sessions, *(range(warmup + every, sessions, every) if every > 0 else ())}
            figures = asyncio.run(soak(served, target, made, alive, marks, settle))
            held = served.health().get("sessions") or {}
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return figures, held


def main() -> None:
    global CALL_TIMEOUT
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--alive", type=int, default=1, help="sessions served at once")
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--jurors", type=int, default=3)
    parser.add_argument("--settle", type=float, default=65.0, help="quiet seconds before each reading")
    parser.add_argument("--every", type=int, default=0, help="also read the RSS every N sessions after the warm-up")
    parser.add_argument("--timeout", type=float, default=CALL_TIMEOUT, help="seconds a client waits for an answer")
    args = parser.parse_args()
    CALL_TIMEOUT = args.timeout
    if not 0 < args.warmup < args.sessions:
        raise SystemExit("--warmup must be between 0 and --sessions")
    print(
        f"bench_soak: {os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M')}; {args.sessions} sessions, "
        f"{args.alive} at once, {args.jurors} jurors each, warm-up {args.warmup}"
    )
    figures, held = soak_run(args.sessions, args.alive, args.warmup, args.jurors, args.settle, args.every)
    growth = figures[args.sessions] - figures[args.warmup]
    after = args.sessions - args.warmup
    print(
        f"RSS after the warm-up {figures[args.warmup]:.2f} MiB, at the end {figures[args.sessions]:.2f} MiB: "
        f"{growth:+.2f} MiB over the last {after} sessions ({growth * 1024 / after:+.1f} KiB a session); "
        f"sessions the server still serves or owns: {len(held)}"
    )
    met = growth < TARGET_MIB
    print(f"target: grows less than {TARGET_MIB:g} MiB over the last {after} sessions: {'met' if met else 'MISSED'}")
    raise SystemExit(0 if met else 1)


if __name__ == "__main__":
    main()
