"""A displaced jury at internet scale on one server process, alone and beside a live session.

    python bench/bench_displaced.py [--displaced 2000] [--live 200] [--pace 5] [--database sqlite|pg] [--seed 1]

One process (``python run.py``, gevent, as bench/bench_load.py starts it) on a new SQLite file (or a new PostgreSQL
database, ``--database pg``: bench/bench_cluster.py's ``VTT_BENCH_POSTGRES``) holding two sessions:

- *judged later*: 3 rounds of 2 demo questions, 3 players (one AI); a host and the players play it to the end over
  Socket.IO, then ``vtt.juries.displaced.create_jurors`` makes ``--displaced`` jurors for it;
- *live*: 4 rounds with ``--live`` live jurors (0: none), driven by bench_load's host and load process.

Steps, on the same server:

1. live alone: round 1 ``paced`` (each live juror votes once in a 5 s window) and round 2 ``sheets`` (5 sheet lines
   saved as the juror page saves them, then a vote), as bench_load runs them;
2. every displaced juror connects at once (at most ``CONNECTS_AT_ONCE`` handshakes under way, as bench_load): the
   time for all, and each one's time from its connect to its snapshot;
3. the displaced jury judges: each juror works through its rounds at its own pace, a save every ``--pace`` seconds
   on average (0.5-1.5x), starting within its first ``--pace``: per round ``LINES_PER_ROUND`` sheet lines (in saves
   of one or two lines, ``{id, lines}``) then the round's vote; meanwhile (if ``--live``) the live session plays
   round 3 ``paced`` and round 4 ``sheets`` again.

Printed: connect time for all and per juror (p50/p99); the displaced acks' p50/p95/p99/max (sheet saves and votes);
their rate; server CPU per 1,000 displaced actions; the loop's longest stall (``/healthz``, sampled every 0.5 s with
``?reset=1``) while connecting and while judging; recorded == acked for the displaced jury (Vote and SheetEntry rows
of its jurors against acked votes and sheet lines, and its logged events against acked actions); and each live round's
vote ack p99, sheet save p99, loop stall and recorded == acked, alone and beside the displaced jury.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import random
import secrets
import shutil
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_load import (  # noqa: E402
    CALL_TIMEOUT,
    CONNECTS_AT_ONCE,
    GO_LEAD,
    HEARTBEAT,
    RoundResult,
    ack_text,
    close_round,
    consistent,
    host_moves,
    load_process,
    quantile,
    start_profile,
    stop_profile,
)
from loadclient import LeanClient, Refused  # noqa: E402
from servers import DEMO_BANK, Served, Target, bench_session, migrated_server  # noqa: E402

LINES_PER_ROUND = 4  # sheet lines a displaced juror fills per round (of 2 questions x 3 aliases)
LIVE_ROUNDS = (("paced", "alone"), ("sheets", "alone"), ("paced", "beside"), ("sheets", "beside"))
LIVE_LEAD = 8.0  # seconds into the displaced jury's judging before the live session's next round opens
SAMPLE_SECONDS = 0.5  # the loop's stall is read (and reset) this often


# --- the database: a session to judge later and a live one ----------------------------------------------------


@dataclass
class Setup:
    target: Target  # the live session (bench_load's host and load drive it)
    judged_id: int
    judged_code: str
    player_tokens: list[str]
    displaced_tokens: list[str] = field(default_factory=list)


def prepare(folder: Path, live: int, database_url: str | None = None) -> Setup:
    """Both sessions in a new SQLite file in ``folder`` (or the empty database at ``database_url``)."""
    from sqlalchemy import select

    from vtt.banks import import_bank, read_bank
    from vtt.db import make_db_factory, make_engine, transaction
    from vtt.models import Player

    url, password, env, command = migrated_server(folder, database_url)
    engine = make_engine(url)
    try:
        with transaction(make_db_factory(engine)) as db:
            import_bank(db, read_bank(DEMO_BANK), "Demo drama bank")
            settings = {"questions_per_round": 2, "reveal_policy": "end"}
            judged, _ = bench_session(db, 0, "", name="Judged later", rounds=3, seed=11, **settings)
            current, tokens = bench_session(
                db, live, "J{:05d}", name="Live beside", rounds=len(LIVE_ROUNDS), seed=7, **settings
            )
            players = list(db.scalars(select(Player.token).where(Player.session_id == judged.id)))
            ids = (judged.id, judged.join_code, current.id, current.join_code)
    finally:
        engine.dispose()
    target = Target("vtt", command, env, tokens, {"code": ids[3], "role": "host"}, folder, url, ids[2], password)
    return Setup(target, ids[0], ids[1], players)


def make_displaced(url: str, session_id: int, count: int) -> list[str]:
    """``count`` displaced jurors of the finished session (``vtt jury displaced`` does the same)."""
    from vtt.db import make_db_factory, make_engine, transaction
    from vtt.juries.displaced import create_jurors
    from vtt.models import VttSession

    engine = make_engine(url)
    try:
        with transaction(make_db_factory(engine)) as db:
            return [juror.token for juror in create_jurors(db, db.get(VttSession, session_id), count)]
    finally:
        engine.dispose()


def displaced_recorded(url: str, session_id: int) -> dict[str, int]:
    """The displaced jury's rows: votes, sheet lines, and the logged vote and sheet events."""
    from sqlalchemy import func, select

    from vtt.db import make_db_factory, make_engine
    from vtt.models import Event, Juror, Jury, SheetEntry, Vote

    engine = make_engine(url)
    try:
        with make_db_factory(engine)() as db:
            theirs = select(Juror.id).where(Juror.session_id == session_id, Juror.jury == Jury.DISPLACED)

            def count(model) -> int:
                return db.scalar(select(func.count()).select_from(model).where(model.juror_id.in_(theirs)))

            events = dict(
                db.execute(
                    select(Event.kind, func.count())
                    .where(Event.session_id == session_id, Event.actor.like("displaced:%"))
                    .group_by(Event.kind)
                ).all()
            )
            return {
                "votes": count(Vote),
                "lines": count(SheetEntry),
                "vote_events": events.get("vote", 0),
                "sheet_events": events.get("sheet", 0),
            }
    finally:
        engine.dispose()


# --- playing the session to be judged to its end -----------------------------------------------------------------


class Person(LeanClient):
    """The lean client, keeping each event's last payload and telling when its snapshot came."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.last: dict[str, Any] = {}
        self.snapshot_came: asyncio.Event | None = None

    def _dispatch(self, data: str) -> None:
        super()._dispatch(data)
        if data.startswith("42"):
            import json

            event, *rest = json.loads(data[2:])
            self.last[event] = rest[0] if rest else None
            if event == "snapshot" and self.snapshot_came is not None:
                self.snapshot_came.set()


async def play_to_end(http, url: str, cookie: str, code: str, player_tokens: list[str]) -> None:
    """A host and the players play the session's 3 rounds (both questions answered and revealed, the vote opened and
    closed) and finish it."""
    host = LeanClient(http, url, {"code": code, "role": "host"}, {"Cookie": cookie})
    await host.connect()
    players = [Person(http, url, {"token": token}) for token in player_tokens]
    for player in players:
        await player.connect()
    moves = iter(range(1, 10_000))

    async def move(action: str) -> None:
        reply = await host.call("host", {"id": f"p{next(moves)}", "action": action}, CALL_TIMEOUT)
        if not reply.get("ok"):
            raise SystemExit(f"playing the session to be judged: {action} failed: {reply}")

    await move("open_lobby")
    for _round in range(3):
        await move("start_round")
        for _ in range(2):
            before = players[0].last.get("question")
            await move("show_question")
            while players[0].last.get("question") is before:
                await asyncio.sleep(0.01)
            question = players[0].last["question"]
            await move("open_answering")
            for index, player in enumerate(players):
                given = {"choice": 1} if question["type"] == "mcq" else {"text": f"answer {index} of {question['id']}"}
                reply = await player.call("answer", {"id": secrets.token_hex(8), "question": question["id"], **given})
                if not reply.get("ok"):
                    raise SystemExit(f"playing the session to be judged: an answer failed: {reply}")
            await move("close_answering")
            await move("reveal")
        for action in ("open_vote", "close_vote", "show_tally"):
            await move(action)
    await move("finish")
    await asyncio.gather(host.close(), *(player.close() for player in players))


# --- the displaced jury's load process ------------------------------------------------------------------------


def displaced_process(conn, url: str, tokens: list[str], seed: int, pace: float) -> None:
    try:
        asyncio.run(_displaced(conn, url, tokens, seed, pace))
    except Exception as error:
        conn.send(("failed", f"{type(error).__name__}: {error}"))
    finally:
        conn.close()


def plan(snapshot: dict[str, Any], rng: random.Random, pace: float) -> list[tuple[float, str, dict[str, Any]]]:
    """One displaced juror's work (seconds after go, event, payload): per round, LINES_PER_ROUND distinct sheet
    lines in saves of one or two, then the round's vote; a save every ``pace`` seconds on average."""
    steps: list[tuple[str, dict[str, Any]]] = []
    for card in snapshot["rounds"]:
        pairs = [(q["id"], a) for q in card["questions"] for a in card["aliases"]]
        lines = [
            {
                "question": question,
                "alias": alias,
                "note": "answers too evenly for a child",
                "human_likeness": rng.randint(1, 5),
                "looks_like_ai": rng.random() < 0.4,
            }
            for question, alias in rng.sample(pairs, min(LINES_PER_ROUND, len(pairs)))
        ]
        while lines:
            size = rng.choice((1, 2))
            steps.append(("sheet", {"lines": lines[:size]}))
            lines = lines[size:]
        vote = {"round": card["round"], "alias": rng.choice(card["aliases"]), "confidence": rng.randint(1, 5)}
        steps.append(("vote", {**vote, "reason": "too tidy"}))
    moment = rng.uniform(0, pace)
    timed = []
    for number, (event, payload) in enumerate(steps):
        timed.append((moment, event, {"id": f"d{secrets.token_hex(4)}-{number}", **payload}))
        moment += pace * rng.uniform(0.5, 1.5)
    return timed


async def _displaced(conn, url: str, tokens: list[str], seed: int, pace: float) -> None:
    import aiohttp

    rng = random.Random(seed)
    connector = aiohttp.TCPConnector(limit=0, force_close=False)
    async with aiohttp.ClientSession(connector=connector) as http:
        jurors = [Person(http, url, {"token": token}) for token in tokens]
        gate = asyncio.Semaphore(CONNECTS_AT_ONCE)
        failures: list[str] = []
        to_snapshot: list[float] = []

        async def connect(juror: Person) -> bool:
            async with gate:
                juror.snapshot_came = asyncio.Event()
                began = time.monotonic()
                try:
                    await juror.connect(CALL_TIMEOUT)
                    await asyncio.wait_for(juror.snapshot_came.wait(), CALL_TIMEOUT)
                except (Refused, OSError, TimeoutError, aiohttp.ClientError) as failure:
                    failures.append(repr(failure))
                    return False
                to_snapshot.append(time.monotonic() - began)
                return True

        started = time.monotonic()
        connected = await asyncio.gather(*(connect(juror) for juror in jurors))
        conn.send(("connected", time.monotonic() - started, sum(connected), failures[:5], to_snapshot))
        jurors = [juror for juror, ok in zip(jurors, connected) if ok]
        order = await asyncio.to_thread(lambda: conn.recv() if conn.poll(600) else None)
        if order is not None:
            conn.send(("done", await _judge(jurors, rng, order["go"], pace)))
        await asyncio.gather(*(juror.close() for juror in jurors), return_exceptions=True)


async def _judge(jurors: list[Person], rng: random.Random, go: float, pace: float) -> dict[str, Any]:
    latencies: dict[str, list[float]] = {"vote": [], "sheet": []}
    acked = {"vote": 0, "sheet": 0, "lines": 0, "completed": 0}
    errors: dict[str, int] = {}
    last_ack = [go]
    stalls: list[float] = []

    async def send(juror: Person, event: str, payload: dict[str, Any], at: float) -> None:
        delay = at - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        sent = time.monotonic()
        try:
            reply = await juror.call(event, payload, CALL_TIMEOUT)
        except (TimeoutError, ConnectionError, OSError) as failure:
            errors[f"{event}: {type(failure).__name__}"] = errors.get(f"{event}: {type(failure).__name__}", 0) + 1
            return
        now = time.monotonic()
        latencies[event].append(now - sent)
        last_ack[0] = max(last_ack[0], now)
        if isinstance(reply, dict) and reply.get("ok") and not reply.get("duplicate"):
            acked[event] += 1
            acked["lines"] += len(payload.get("lines", []))
            acked["completed"] += "completion_code" in reply
        else:
            code = (reply or {}).get("error", {}).get("code", repr(reply)[:60])
            errors[f"{event}: {code}"] = errors.get(f"{event}: {code}", 0) + 1

    async def juror_works(juror: Person, steps) -> None:
        for moment, event, payload in steps:  # one after another, as a person does
            await send(juror, event, payload, go + moment)

    async def heartbeat() -> None:  # the load process's own lateness: a slow ack may be the client's
        while True:
            before = time.monotonic()
            await asyncio.sleep(HEARTBEAT)
            late = time.monotonic() - before - HEARTBEAT
            if late > HEARTBEAT and before > go:
                stalls.append(late)

    plans = [plan(juror.snapshot, rng, pace) for juror in jurors]
    beating = asyncio.get_running_loop().create_task(heartbeat())
    await asyncio.gather(*(juror_works(juror, steps) for juror, steps in zip(jurors, plans)))
    beating.cancel()
    return {
        "latencies": latencies,
        "acked": acked,
        "errors": errors,
        "last_ack": last_ack[0],
        "planned": sum(len(steps) for steps in plans),
        "client_stall": max(stalls, default=0.0),
    }


# --- the server's loop, sampled ---------------------------------------------------------------------------------


class StallSampler:
    """``/healthz?reset=1`` every SAMPLE_SECONDS: the loop's longest stall in each interval, kept with its time."""

    def __init__(self, served: Served):
        self.served, self.samples = served, []
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> StallSampler:
        self.served.stall_ms(reset=True)
        self.thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self.running = False
        self.thread.join(10)

    def _run(self) -> None:
        while self.running:
            time.sleep(SAMPLE_SECONDS)
            try:
                self.samples.append((time.monotonic(), self.served.stall_ms(reset=True)))
            except OSError:
                continue

    def worst(self, start: float, end: float) -> float:
        """The longest stall from ``start`` to ``end`` (monotonic): every interval that overlaps them."""
        time.sleep(SAMPLE_SECONDS * 1.5)  # the interval holding ``end`` is read
        return max((ms for at, ms in self.samples if start < at < end + SAMPLE_SECONDS * 1.2), default=0.0)


# --- one run -------------------------------------------------------------------------------------------------------


@dataclass
class Run:
    displaced: int
    live: int
    pace: float
    database: str
    connected: int = 0
    connect_seconds: float = 0.0
    connect_failures: list[str] = field(default_factory=list)
    to_snapshot: list[float] = field(default_factory=list)
    connect_stall_ms: float = 0.0
    connect_cpu: float = 0.0
    judged: dict[str, Any] = field(default_factory=dict)
    judge_seconds: float = 0.0
    judge_cpu: float = 0.0
    judge_stall_ms: float = 0.0
    recorded: dict[str, int] = field(default_factory=dict)
    rss_mib: float = 0.0
    live_rounds: list[tuple[str, RoundResult]] = field(default_factory=list)

    @property
    def actions(self) -> int:
        return self.judged["acked"]["vote"] + self.judged["acked"]["sheet"]

    @property
    def displaced_consistent(self) -> bool:
        acked, recorded = self.judged["acked"], self.recorded
        return (
            recorded["votes"] == acked["vote"] == recorded["vote_events"]
            and recorded["lines"] == acked["lines"]
            and recorded["sheet_events"] == acked["sheet"]
        )


def expect(pipe, kind: str, timeout: float):
    if not pipe.poll(timeout):
        raise SystemExit(f"the load process sent no {kind!r} within {timeout:.0f} s")
    message = pipe.recv()
    if message[0] != kind:
        raise SystemExit(f"the load process failed: {message}")
    return message


async def live_round(
    host, setup: Setup, served: Served, sampler: StallSampler, pipe, number: int, window: float
) -> RoundResult:
    """One round of the live session, as bench_load.run_server plays it."""
    kind = LIVE_ROUNDS[number - 1][0]
    target = setup.target
    questions, aliases, spacing = await host_moves(host, target, number)
    await asyncio.sleep(0.5)  # the opening status reaches every juror
    cpu = served.cpu_seconds()
    go = time.monotonic() + GO_LEAD
    order = {"kind": kind, "number": number, "go": go, "window": window}
    pipe.send({**order, "sessions": [{"questions": questions, "aliases": aliases, "spacing": spacing}]})
    report = (await asyncio.to_thread(expect, pipe, "done", window + 4 * CALL_TIMEOUT))[1][0]
    cpu = served.cpu_seconds() - cpu
    stall = await asyncio.to_thread(sampler.worst, go, report["last_ack"])
    reply = await close_round(host, target, number)
    return RoundResult(
        kind,
        window,
        report["latencies"],
        report["acked"],
        report["errors"],
        report["last_ack"] - go,
        target.recorded(number, reply),
        cpu,
        stall,
        served.memory_mib(),
        report["client_stall"] * 1000,
    )


def run(
    displaced: int,
    live: int,
    pace: float,
    seed: int = 1,
    database_url: str | None = None,
    folder: Path | None = None,
    profile: str | None = None,
    live_window: float = 5.0,
    live_lead: float = LIVE_LEAD,
) -> Run:
    """The whole scenario on one fresh server (see the module docstring); ``live_window``: each live round's
    voting window (seconds), ``live_lead``: seconds into the displaced jury's judging before the live rounds."""
    import aiohttp

    folder = folder or Path(tempfile.mkdtemp(prefix="vtt-bench-displaced-"))
    result = Run(displaced, live, pace, "PostgreSQL" if database_url else "SQLite")
    setup = prepare(folder, live, database_url)
    target = setup.target
    context = multiprocessing.get_context("spawn")
    with ExitStack() as stack:
        served = stack.enter_context(Served(target.command, target.env, folder))
        sampler = stack.enter_context(StallSampler(served))
        cookie = target.host_cookie(served.url)
        live_pipe = live_worker = None
        if live:
            live_pipe, child = context.Pipe()
            live_worker = context.Process(target=load_process, args=(child, served.url, [(None, target.tokens)], seed))
            live_worker.start()
            stack.callback(stop_worker, live_pipe, live_worker)
            expect(live_pipe, "connected", 60 + live * 0.05)

        async def drive() -> None:
            async with aiohttp.ClientSession() as http:
                await play_to_end(http, served.url, cookie, setup.judged_code, setup.player_tokens)
                setup.displaced_tokens = make_displaced(target.database_url, setup.judged_id, displaced)
                host = LeanClient(http, served.url, target.host_auth, {"Cookie": cookie})
                await host.connect()
                for number in (1, 2) if live else ():
                    result.live_rounds.append(
                        ("alone", await live_round(host, setup, served, sampler, live_pipe, number, live_window))
                    )
                pipe, child = context.Pipe()
                worker = context.Process(
                    target=displaced_process, args=(child, served.url, setup.displaced_tokens, seed, pace)
                )
                worker.start()
                stack.callback(stop_worker, pipe, worker)
                began, cpu = time.monotonic(), served.cpu_seconds()
                spy = start_profile(served.process.pid, profile, "displaced-connect")
                message = await asyncio.to_thread(expect, pipe, "connected", 120 + displaced * 0.05)
                result.connect_seconds, result.connected, result.connect_failures, result.to_snapshot = message[1:]
                result.connect_cpu = served.cpu_seconds() - cpu
                stop_profile(spy)
                spy = start_profile(served.process.pid, profile, "displaced-judge")
                result.connect_stall_ms = await asyncio.to_thread(sampler.worst, began, time.monotonic())
                cpu = served.cpu_seconds()
                go = time.monotonic() + GO_LEAD
                pipe.send({"go": go})
                if live:
                    await asyncio.sleep(GO_LEAD + live_lead)
                    for number in (3, 4):
                        result.live_rounds.append(
                            ("beside", await live_round(host, setup, served, sampler, live_pipe, number, live_window))
                        )
                longest = go + 3 * (LINES_PER_ROUND + 1) * pace * 1.5 + 4 * CALL_TIMEOUT
                result.judged = (await asyncio.to_thread(expect, pipe, "done", longest - time.monotonic()))[1]
                result.judge_cpu = served.cpu_seconds() - cpu
                stop_profile(spy)
                result.judge_seconds = result.judged["last_ack"] - go
                result.judge_stall_ms = await asyncio.to_thread(sampler.worst, go, result.judged["last_ack"])
                result.rss_mib = served.memory_mib()
                await host.close()

        asyncio.run(asyncio.wait_for(drive(), 900))
        result.recorded = displaced_recorded(target.database_url, setup.judged_id)
    shutil.rmtree(folder, ignore_errors=True)
    return result


def stop_worker(pipe, worker) -> None:
    try:
        pipe.send(None)
    except OSError:
        pass
    worker.join(30)
    if worker.is_alive():
        worker.kill()


# --- figures ----------------------------------------------------------------------------------------------------


def report(result: Run) -> list[str]:
    judged = result.judged
    acked = judged["acked"]
    errors = sum(judged["errors"].values())
    lines = [
        f"{result.displaced:,} displaced jurors, {result.live} live jurors, a save every {result.pace:g} s "
        f"({result.database}):",
        f"  connect: {result.connected:,}/{result.displaced:,} in {result.connect_seconds:.1f} s; to the snapshot "
        f"p50 {quantile(result.to_snapshot, 0.5):.0f} / p99 {quantile(result.to_snapshot, 0.99):.0f} ms; longest "
        f"loop stall {result.connect_stall_ms:.0f} ms; server CPU {result.connect_cpu:.1f} s = "
        f"{result.connect_cpu * 1000 / max(result.connected, 1):.1f} ms per connection"
        + (
            f" ({len(result.connect_failures)} failures, e.g. {result.connect_failures[0]})"
            if result.connect_failures
            else ""
        ),
        f"  judging: {result.actions:,} actions ({acked['sheet']:,} sheet saves of {acked['lines']:,} lines, "
        f"{acked['vote']:,} votes; {judged['planned']:,} planned) in {result.judge_seconds:.0f} s = "
        f"{result.actions / max(result.judge_seconds, 1e-9):.0f}/s; {acked['completed']:,} jurors completed",
        f"    sheet saves {ack_text(judged['latencies']['sheet'])}",
        f"    votes       {ack_text(judged['latencies']['vote'])}",
        f"    server CPU {result.judge_cpu:.1f} s = {result.judge_cpu * 1000 / max(result.actions, 1):.2f} s per "
        f"1,000 actions; RSS {result.rss_mib:.0f} MiB; longest loop stall {result.judge_stall_ms:.0f} ms (the load "
        f"process's: {judged['client_stall'] * 1000:.0f} ms)",
        f"    recorded {'== acked' if result.displaced_consistent else 'MISMATCH'}: {result.recorded}; errors {errors}"
        + (f" {judged['errors']}" if errors else ""),
    ]
    for when, item in result.live_rounds:
        sheets = item.latencies["sheet"]
        lines.append(
            f"  live {item.kind:6} {when:6}: votes {ack_text(item.latencies['vote'])}"
            + (f"; sheet saves p99 {quantile(sheets, 0.99):.0f} ms" if sheets else "")
            + f"; longest loop stall {item.stall_ms:.0f} ms (the load process's: {item.client_stall_ms:.0f} ms); "
            f"CPU {item.cpu:.1f} s; recorded "
            f"{'== acked' if consistent('vtt', item) else 'MISMATCH ' + str(item.recorded)}; errors "
            f"{sum(item.errors.values())}"
        )
    return lines


def sound(result: Run) -> bool:
    """Every displaced and live ack committed without error and recorded == acked."""
    live_ok = all(consistent("vtt", item) and not item.errors for _when, item in result.live_rounds)
    return (
        result.connected == result.displaced and result.displaced_consistent and not result.judged["errors"] and live_ok
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--displaced", type=int, default=2000, help="displaced jurors connected at once")
    parser.add_argument("--live", type=int, default=200, help="live jurors of the live session beside (0: none)")
    parser.add_argument("--pace", type=float, default=5.0, help="a displaced juror's mean seconds between saves")
    parser.add_argument("--database", choices=("sqlite", "pg"), default="sqlite")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--profile",
        metavar="DIR",
        help="sample the server with py-spy while the displaced jury connects and judges (raw collapsed stacks in "
        "DIR; py-spy must be installed in this Python's folder)",
    )
    args = parser.parse_args()
    if not 1 <= args.displaced <= 10_000 or not 0 <= args.live <= 5000 or args.pace <= 0:
        parser.error("--displaced 1-10,000; --live 0-5,000; --pace > 0")
    print(f"bench_displaced: {os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M')}; one server process")
    with ExitStack() as stack:
        database_url = None
        if args.database == "pg":
            from bench_cluster import postgres_database

            database_url = stack.enter_context(postgres_database())
        result = run(args.displaced, args.live, args.pace, args.seed, database_url, profile=args.profile)
    for line in report(result):
        print(line)
    raise SystemExit(0 if sound(result) else 1)


if __name__ == "__main__":
    main()
