"""Load one server process with N jurors and check it against the load targets, beside a bare reference server.

    python bench/bench_load.py [--jurors 200,1000,2000,5000] [--servers vtt,reference] [--seed 1]
                               [--rounds paced,burst,sheets] [--trace DIR] [--profile DIR]

For each N and each server: a fresh server (vtt: ``python run.py``, gevent, a new SQLite file with a 3-round session
of N jurors; reference: ``bench/reference_server.py``, python-socketio ASGI under uvicorn, votes in memory) and N
jurors connected from one load process (``loadclient.py``, the same lean client for both), through three rounds the
host opens: ``paced`` (every juror votes once at a random moment of the window), ``burst`` (all at the same instant)
and ``sheets`` (5 judgment-sheet lines typed and saved as the juror page saves them, then a vote).

Printed per round: ack p50/p95/p99/max, votes/s, recorded == acked, errors, server CPU and RSS, and the longest
event-loop stall of the server (its 10 ms heartbeat) and of the load process.  Then the targets, each met or
MISSED: every ack committed without error; loop stalls <= 100 ms (a burst's at 2,000 jurors only); the paced and
sheets rounds' vote p99 <= 250 ms at 2,000 jurors and 750 ms at 5,000, and no slower than the reference's; a
2,000-juror burst's vote p99 <= 1,500 ms at >= 0.4 x the reference's rate.
``--trace DIR`` writes every ack and late wake-up of the load process to a CSV per round.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import multiprocessing
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from loadclient import LeanClient, Refused  # noqa: E402
from servers import ROUNDS, Served, Target, reference_target, vtt_target  # noqa: E402

from vtt.engine.audiences import sheet_save_seconds  # noqa: E402

CONNECTS_AT_ONCE = 200
CALL_TIMEOUT = 30.0
SHEET_LINES = 5
SAVE_DEBOUNCE, SAVE_MAX_WAIT = 1.0, 2.0  # the juror page's sheet saving (seconds)
GO_LEAD = 2.0  # seconds from the order to the round's start: time for the load process to plan every message
HEARTBEAT = 0.01  # the load process's own heartbeat (seconds); a wake-up later than this is noted


# --- the load process -------------------------------------------------------------------------------


def load_process(conn, url: str, groups: list[tuple[str | None, list[str]]], seed: int) -> None:
    """Jurors of one or more sessions on one server, each group ``(join code to name on the URL or None, tokens)``.
    Sends ``("connected", seconds, jurors connected per group, failures)``, then plays each order (a round: its
    kind, number, go, window, and per group its ``questions``, ``aliases`` and ``spacing``) and sends
    ``("done", a report per group)``."""
    try:
        asyncio.run(_load(conn, url, groups, seed))
    except Exception as error:
        conn.send(("failed", f"{type(error).__name__}: {error}"))
    finally:
        conn.close()


async def _load(conn, url: str, groups: list[tuple[str | None, list[str]]], seed: int) -> None:
    import aiohttp

    rng = random.Random(seed)
    connector = aiohttp.TCPConnector(limit=0, force_close=False)
    async with aiohttp.ClientSession(connector=connector) as http:
        grouped = [
            [LeanClient(http, url, {"token": token}, session=code) for token in tokens] for code, tokens in groups
        ]
        gate = asyncio.Semaphore(CONNECTS_AT_ONCE)
        failures: list[str] = []

        async def connect(juror: LeanClient) -> bool:
            async with gate:
                try:
                    await juror.connect(CALL_TIMEOUT)
                    return True
                except (Refused, OSError, TimeoutError, aiohttp.ClientError) as failure:
                    failures.append(repr(failure))
                    return False

        started = time.monotonic()
        connected = iter(await asyncio.gather(*(connect(juror) for jurors in grouped for juror in jurors)))
        grouped = [[juror for juror in jurors if next(connected)] for jurors in grouped]
        conn.send(("connected", time.monotonic() - started, [len(jurors) for jurors in grouped], failures[:5]))
        while True:
            order = await asyncio.to_thread(_receive_order, conn)
            if order is None:
                break
            conn.send(("done", await _round(grouped, rng, **order)))
        await asyncio.gather(*(juror.close() for jurors in grouped for juror in jurors), return_exceptions=True)


def _receive_order(conn):
    if not conn.poll(600):
        return None
    return conn.recv()


def page_saves(
    edits: list[tuple[float, dict[str, Any]]], spacing: float, rng: random.Random
) -> list[tuple[float, list[dict[str, Any]]]]:
    """When the juror page saves, and what: every line changed since the last save, in one message, once
    typing pauses for SAVE_DEBOUNCE seconds or SAVE_MAX_WAIT seconds after the first unsaved change, at the
    page's next save slot after that and after its previous save: one every ``spacing`` seconds (the
    status's ``sheet_save_seconds``) at a phase drawn per page (``static/js/sheet.js`` does the same)."""
    phase = rng.random()
    saves: list[tuple[float, list[dict[str, Any]]]] = []
    pending: dict[tuple[int, str], dict[str, Any]] = {}
    first = last = 0.0
    previous = -math.inf

    def due() -> float:
        ready = max(previous, min(last + SAVE_DEBOUNCE, first + SAVE_MAX_WAIT))
        return (math.floor(ready / spacing - phase) + 1 + phase) * spacing

    for moment, line in sorted(edits, key=lambda edit: edit[0]):
        if pending and moment >= due():
            previous = due()
            saves.append((previous, list(pending.values())))
            pending = {}
        if not pending:
            first = moment
        pending[(line["question"], line["alias"])] = line
        last = moment
    if pending:
        saves.append((due(), list(pending.values())))
    return saves


def juror_steps(
    index: int,
    rng: random.Random,
    *,
    kind: str,
    number: int,
    window: float,
    questions: list[int],
    aliases: list[str],
    spacing: float,
) -> list[tuple[float, str, dict[str, Any]]]:
    """One juror's messages in a round: (seconds after go, event, payload)."""
    vote = {
        "id": f"r{number}-v{index}",
        "round": number,
        "slot": 1,
        "alias": rng.choice(aliases),
        "confidence": rng.randint(1, 5),
        "reason": "too fluent",
    }
    if kind == "burst":
        return [(0.0, "vote", vote)]
    if kind == "paced":
        return [(rng.uniform(0, window), "vote", vote)]
    edits = []  # (moment, line): each of 5 lines typed in two goes, a draft then the whole
    for question, alias in rng.sample([(q, a) for q in questions for a in aliases], SHEET_LINES):
        whole = {
            "question": question,
            "alias": alias,
            "note": "answers too evenly for a child",
            "human_likeness": rng.randint(1, 5),
            "looks_like_ai": rng.random() < 0.4,
        }
        first, second = sorted(rng.uniform(0, window) for _ in range(2))
        edits += [(first, {**whole, "note": whole["note"][:9]}), (second, whole)]
    steps = [
        (moment, "sheet", {"id": f"r{number}-s{index}-{n}", "lines": lines})
        for n, (moment, lines) in enumerate(page_saves(edits, spacing, rng))
    ]
    return steps + [(rng.uniform(0, window), "vote", vote)]


async def _play(
    jurors: list[LeanClient], plans: list[list[tuple[float, str, dict[str, Any]]]], go: float
) -> dict[str, Any]:
    """One session's jurors send their planned messages; what was acknowledged, how fast, and what failed."""
    latencies: dict[str, list[float]] = {"vote": [], "sheet": []}
    trace: list[tuple[str, float, float]] = []  # (event, sent after go, ack latency), seconds
    acked = {"vote": 0, "sheet": 0}
    errors: dict[str, int] = {}
    last_ack = [go]

    async def send(juror: LeanClient, event: str, payload: dict[str, Any], at: float) -> None:
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
        trace.append((event, sent - go, now - sent))
        last_ack[0] = max(last_ack[0], now)
        if isinstance(reply, dict) and reply.get("ok") and not reply.get("duplicate"):
            acked[event] += 1
        else:
            code = (reply or {}).get("error", {}).get("code", repr(reply)[:60])
            errors[f"{event}: {code}"] = errors.get(f"{event}: {code}", 0) + 1

    await asyncio.gather(
        *(
            send(juror, event, payload, go + moment)
            for juror, steps in zip(jurors, plans)
            for moment, event, payload in steps
        )
    )
    return {"latencies": latencies, "acked": acked, "errors": errors, "last_ack": last_ack[0], "trace": trace}


async def _round(
    grouped: list[list[LeanClient]],
    rng: random.Random,
    *,
    kind: str,
    number: int,
    go: float,
    window: float,
    sessions: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """One round of every group's session at once (``sessions``: per group its questions, aliases and sheet save
    spacing); a report per group, each with the load process's longest late wake-up in the round."""
    stalls: list[tuple[float, float]] = []  # (woke after go, how late), seconds

    async def heartbeat() -> None:  # the load process's own lateness: a slow ack may be the client's
        while True:
            before = time.monotonic()
            await asyncio.sleep(HEARTBEAT)
            late = time.monotonic() - before - HEARTBEAT
            if late > HEARTBEAT:
                stalls.append((before - go, late))

    plans = [  # before go: thousands of plans take a while
        [juror_steps(index, rng, kind=kind, number=number, window=window, **session) for index in range(len(jurors))]
        for jurors, session in zip(grouped, sessions)
    ]
    beating = asyncio.get_running_loop().create_task(heartbeat())
    reports = await asyncio.gather(*(_play(jurors, steps, go) for jurors, steps in zip(grouped, plans)))
    beating.cancel()
    client_stall = max((late for at, late in stalls if at + late > 0), default=0.0)  # in the round
    for report in reports:
        report["trace"] += [("client_stall", at, late) for at, late in stalls]
        report["client_stall"] = client_stall
    return reports


# --- the host and one server's run -----------------------------------------------------------------


@dataclass
class RoundResult:
    kind: str
    window: float
    latencies: dict[str, list[float]]
    acked: dict[str, int]
    errors: dict[str, int]
    seconds: float  # from go to the last ack
    recorded: dict[str, int]
    cpu: float
    stall_ms: float
    rss_mib: float
    client_stall_ms: float


@dataclass
class ServerResult:
    name: str
    jurors: int
    connected: int = 0
    connect_seconds: float = 0.0
    connect_failures: list[str] = field(default_factory=list)
    rss_idle: float = 0.0
    rss_connected: float = 0.0
    rounds: list[RoundResult] = field(default_factory=list)


async def host_moves(host: LeanClient, target: Target, number: int) -> tuple[list[int], list[str], float]:
    """Bring the round to an open vote; (question ids, aliases, the pages' sheet save spacing in seconds)."""
    counter = iter(range(1, 1000))

    async def move(action: str) -> dict:
        reply = await host.call("host", {"id": f"h{number}-{next(counter)}", "action": action}, CALL_TIMEOUT)
        if not reply.get("ok"):
            raise SystemExit(f"host {action} failed on {target.name}: {reply}")
        return reply

    if target.name == "reference":
        await move("open_vote")
        return [1, 2], ["A", "B", "C"], sheet_save_seconds(len(target.tokens))  # the same load as vtt's
    if number == 1:
        await move("open_lobby")
    await move("start_round")
    for _ in range(2):
        for action in ("show_question", "open_answering", "close_answering", "reveal"):
            await move(action)
    snapshot = (await host.call("snapshot", {}, CALL_TIMEOUT))["snapshot"]
    questions = [q["id"] for q in snapshot["questions"] if q["round"] == number]
    aliases = sorted(snapshot["rounds"][number - 1]["aliases"].values())
    await move("open_vote")
    return questions, aliases, snapshot["status"]["sheet_save_seconds"]


async def close_round(host: LeanClient, target: Target, number: int) -> dict[str, Any]:
    reply = await host.call("host", {"id": f"h{number}-close", "action": "close_vote"}, CALL_TIMEOUT)
    if not reply.get("ok"):
        raise SystemExit(f"close_vote failed on {target.name}: {reply}")
    return reply


def window_for(jurors: int) -> float:
    return 10.0 if jurors >= 5000 else 5.0


def start_profile(pid: int, folder: str | None, name: str) -> subprocess.Popen | None:
    """``--profile DIR``: py-spy samples the server during one round (raw collapsed stacks, DIR/NAME.txt)."""
    if not folder:
        return None
    spy = Path(sys.executable).with_name("py-spy")
    Path(folder).mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        [
            str(spy),
            "record",
            "--pid",
            str(pid),
            "--format",
            "raw",
            "--nonblocking",
            "--rate",
            "200",
            "-o",
            str(Path(folder) / f"{name}.txt"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def stop_profile(spy: subprocess.Popen | None) -> None:
    if spy is not None:
        import signal

        spy.send_signal(signal.SIGINT)
        try:
            spy.wait(30)
        except subprocess.TimeoutExpired:
            spy.kill()


def write_trace(folder: str | None, name: str, trace: list[tuple[str, float, float]]) -> None:
    """``--trace DIR``: every ack of one round as a CSV line (event, sent_s after go, latency_ms), in send order."""
    if not folder:
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    lines = [f"{event},{sent:.4f},{latency * 1000:.2f}" for event, sent, latency in sorted(trace, key=lambda t: t[1])]
    (Path(folder) / f"{name}.csv").write_text("event,sent_s,latency_ms\n" + "\n".join(lines) + "\n")


def run_server(
    target: Target,
    seed: int,
    rounds: tuple[str, ...] = ROUNDS,
    profile: str | None = None,
    trace: str | None = None,
    serve=Served,
) -> ServerResult:
    """``serve(command, env, folder)``: what the load connects to (bench/bench_cluster.py: processes behind nginx)."""
    return run_sessions([target], seed, rounds, profile, trace, serve)[0]


def run_sessions(
    targets: list[Target],
    seed: int,
    rounds: tuple[str, ...] = ROUNDS,
    profile: str | None = None,
    trace: str | None = None,
    serve=Served,
    load_processes: int = 1,
    name_sessions: bool = False,
) -> list[ServerResult]:
    """Every target's session on one server (they share its command, environment and folder), their rounds played
    at once: a host connection per session; the sessions' jurors spread over ``load_processes`` load processes
    (whole sessions each).  ``name_sessions``: every connection names its session on its URL (``?session=``), so
    that nginx routes it to the process owning the session."""
    import aiohttp

    first = targets[0]
    results = [ServerResult(target.name, len(target.tokens)) for target in targets]
    shares = [list(range(len(targets)))[n::load_processes] for n in range(min(load_processes, len(targets)))]
    context = multiprocessing.get_context("spawn")
    with serve(first.command, first.env, first.folder) as served:
        for result in results:
            result.rss_idle = served.memory_mib()
        pipes, workers = [], []
        try:
            for share in shares:
                parent, child = context.Pipe()
                groups = [(targets[i].host_auth["code"] if name_sessions else None, targets[i].tokens) for i in share]
                worker = context.Process(target=load_process, args=(child, served.url, groups, seed), daemon=True)
                worker.start()
                workers.append(worker)
                pipes.append(parent)
            jurors = sum(len(target.tokens) for target in targets)  # every load process's connect at once
            for parent, share in zip(pipes, shares):
                message = _expect(parent, "connected", 60 + jurors * 0.05)
                for i, count in zip(share, message[2]):
                    results[i].connect_seconds, results[i].connected = message[1], count
                    results[i].connect_failures = message[3]
            for result in results:
                result.rss_connected = served.memory_mib()
            cookie = first.host_cookie(served.url)

            async def drive() -> None:
                async with aiohttp.ClientSession() as http:
                    hosts = [
                        LeanClient(
                            http,
                            served.url,
                            target.host_auth,
                            {"Cookie": cookie},
                            session=target.host_auth["code"] if name_sessions else None,
                        )
                        for target in targets
                    ]
                    await asyncio.gather(*(host.connect() for host in hosts))
                    for number, kind in enumerate(rounds, start=1):
                        played = await _play_round(targets, hosts, served, pipes, shares, number, kind, profile)
                        for i, (target, item, report) in enumerate(zip(targets, *played)):
                            if i == 0:
                                write_trace(trace, f"{target.name}-{len(target.tokens)}-{kind}", report["trace"])
                            results[i].rounds.append(item)
                    await asyncio.gather(*(host.close() for host in hosts))

            asyncio.run(asyncio.wait_for(drive(), 900 + 60 * len(targets)))
        finally:
            for parent, worker in zip(pipes, workers):
                parent.send(None)
                worker.join(30)
                if worker.is_alive():
                    worker.kill()
    return results


async def _play_round(
    targets: list[Target],
    hosts: list[LeanClient],
    served,
    pipes: list,
    shares: list[list[int]],
    number: int,
    kind: str,
    profile: str | None,
) -> tuple[list[RoundResult], list[dict[str, Any]]]:
    """Round ``number`` of every session at once: each host opens its vote, every load process gets one go, each
    host closes its vote once every juror is done.  Per session, its result and its load process's report."""
    first = targets[0]
    opened = await asyncio.gather(*(host_moves(host, target, number) for host, target in zip(hosts, targets)))
    window = 0.0 if kind == "burst" else window_for(len(first.tokens))
    await asyncio.sleep(0.5)  # the opening status reaches every juror
    spy = start_profile(served.process.pid, profile, f"{first.name}-{len(first.tokens)}-{kind}")
    cpu, _ = served.cpu_seconds(), served.stall_ms(reset=True)
    go = time.monotonic() + GO_LEAD
    for parent, share in zip(pipes, shares):
        sessions = [dict(zip(("questions", "aliases", "spacing"), opened[i])) for i in share]
        parent.send({"kind": kind, "number": number, "go": go, "window": window, "sessions": sessions})
    reports: list[dict[str, Any]] = [{} for _ in targets]
    for parent, share in zip(pipes, shares):
        done = (await asyncio.to_thread(_expect, parent, "done", window + 4 * CALL_TIMEOUT))[1]
        for i, report in zip(share, done):
            reports[i] = report
    stall, cpu = served.stall_ms(), served.cpu_seconds() - cpu
    stop_profile(spy)
    replies = await asyncio.gather(*(close_round(host, target, number) for host, target in zip(hosts, targets)))
    rss = served.memory_mib()
    items = [
        RoundResult(
            kind,
            window,
            report["latencies"],
            report["acked"],
            report["errors"],
            report["last_ack"] - go,
            target.recorded(number, reply),
            cpu,
            stall,
            rss,
            report["client_stall"] * 1000,
        )
        for target, report, reply in zip(targets, reports, replies)
    ]
    return items, reports


def _expect(parent, kind: str, timeout: float):
    if not parent.poll(timeout):
        raise SystemExit(f"the load process sent no {kind!r} within {timeout:.0f} s")
    message = parent.recv()
    if message[0] != kind:
        raise SystemExit(f"the load process failed: {message}")
    return message


# --- figures and targets ----------------------------------------------------------------------------------


def quantile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))] * 1000 if ordered else float("nan")


def ack_text(values: list[float]) -> str:
    if not values:
        return "none"
    return (
        f"p50 {quantile(values, 0.5):.0f} / p95 {quantile(values, 0.95):.0f} / p99 {quantile(values, 0.99):.0f} / "
        f"max {max(values) * 1000:.0f} ms"
    )


def consistent(name: str, item: RoundResult) -> bool:
    recorded = item.recorded
    if name == "reference":
        return recorded["votes"] == item.acked["vote"]
    vote_rows_ok = recorded["votes"] == item.acked["vote"] == recorded["vote_events"]
    return vote_rows_ok and recorded["sheet_events"] == item.acked["sheet"]


def print_server(result: ServerResult) -> None:
    print(
        f"  {result.name}: {result.connected}/{result.jurors} connected in {result.connect_seconds:.1f} s"
        + (
            f" ({len(result.connect_failures)} failures, e.g. {result.connect_failures[0]})"
            if result.connect_failures
            else ""
        )
        + f"; RSS {result.rss_idle:.0f} MiB idle, {result.rss_connected:.0f} MiB connected"
    )
    for item in result.rounds:
        votes = item.latencies["vote"]
        rate = item.acked["vote"] / max(item.seconds, 1e-9)
        line = (
            f"    {item.kind:6} votes {ack_text(votes)}; {item.acked['vote']} acked in {item.seconds:.2f} s "
            f"({rate:.0f}/s)"
        )
        if item.latencies["sheet"]:
            line += (
                f"; sheet saves {ack_text(item.latencies['sheet'])} ({item.acked['sheet']} acked"
                + (f", {item.recorded['sheets']} lines" if "sheets" in item.recorded else "")
                + ")"
            )
        line += (
            f"; recorded {'== acked' if consistent(result.name, item) else 'MISMATCH ' + str(item.recorded)}; "
            f"errors {sum(item.errors.values())}{' ' + str(item.errors) if item.errors else ''}; "
            f"CPU {item.cpu:.1f} s, RSS {item.rss_mib:.0f} MiB, longest loop stall {item.stall_ms:.0f} ms "
            f"(the load process's: {item.client_stall_ms:.0f} ms)"
        )
        print(line)


def check_targets(jurors: int, vtt: ServerResult, reference: ServerResult | None) -> list[str]:
    """The load targets for this N (see the module docstring); each line says met or MISSED."""
    lines = []
    rounds = {item.kind: item for item in vtt.rounds}
    ref = {item.kind: item for item in reference.rounds} if reference else {}

    def line(ok: bool, text: str) -> None:
        lines.append(f"{'met   ' if ok else 'MISSED'} {text}")

    for item in vtt.rounds:
        line(
            consistent("vtt", item) and not item.errors,
            f"{item.kind}: every ack committed, recorded == acked, 0 errors",
        )
        if item.kind == "burst" and jurors != 2000:  # the targets' burst is 2,000 jurors; others are for the record
            lines.append(
                f"info   burst: longest loop stall {item.stall_ms:.0f} ms (the targets' burst is 2,000 jurors)"
            )
        else:
            line(item.stall_ms <= 100, f"{item.kind}: longest loop stall {item.stall_ms:.0f} ms <= 100 ms")
    if jurors in (2000, 5000):
        budget = 250 if jurors == 2000 else 750
        for kind in ("paced", "sheets"):
            if kind not in rounds:
                continue
            mine = quantile(rounds[kind].latencies["vote"], 0.99)
            theirs = quantile(ref[kind].latencies["vote"], 0.99) if kind in ref else float("nan")
            line(
                mine <= budget and (not ref or mine <= theirs),
                f"{kind}: vote p99 {mine:.0f} ms <= {budget} ms and <= reference {theirs:.0f} ms",
            )
    if jurors == 2000 and "burst" in rounds:
        burst = rounds["burst"]
        mine = quantile(burst.latencies["vote"], 0.99)
        rate = burst.acked["vote"] / max(burst.seconds, 1e-9)
        if "burst" in ref:
            ref_rate = ref["burst"].acked["vote"] / max(ref["burst"].seconds, 1e-9)
            line(
                mine <= 1500 and rate >= 0.4 * ref_rate,
                f"burst: vote p99 {mine:.0f} ms <= 1500 ms; {rate:.0f} votes/s = {rate / ref_rate:.2f} x the "
                f"reference's {ref_rate:.0f} (>= 0.4 x)",
            )
        else:
            line(mine <= 1500, f"burst: vote p99 {mine:.0f} ms <= 1500 ms ({rate:.0f} votes/s)")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jurors", default="200,1000,2000,5000", help="comma-separated numbers of jurors")
    parser.add_argument("--servers", default="vtt,reference", help="vtt, reference, or both")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--profile",
        metavar="DIR",
        help="sample each server with py-spy during each round "
        "(raw collapsed stacks in DIR; py-spy must be installed in this Python's folder)",
    )
    parser.add_argument("--rounds", default=",".join(ROUNDS), help="which rounds, of " + ", ".join(ROUNDS))
    parser.add_argument("--trace", metavar="DIR", help="write every ack of each round to DIR/SERVER-N-ROUND.csv")
    args = parser.parse_args()
    counts = [int(n) for n in args.jurors.split(",")]
    servers = args.servers.split(",")
    rounds = tuple(kind for kind in ROUNDS if kind in args.rounds.split(","))
    if (
        any(n < 1 or n > 8000 for n in counts)
        or not set(servers) <= {"vtt", "reference"}
        or not rounds
        or not set(args.rounds.split(",")) <= set(ROUNDS)
    ):
        parser.error(f"--jurors 1-8000 each; --servers vtt and/or reference; --rounds of {', '.join(ROUNDS)}")
    print(
        f"bench_load: {os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M')}; one server process, one load "
        f"process; rounds {', '.join(rounds)}"
    )
    failed = False
    for jurors in counts:
        print(f"{jurors} jurors (window {window_for(jurors):g} s):")
        results = {}
        for name in servers:
            folder = Path(tempfile.mkdtemp(prefix=f"vtt-bench-{name}-"))
            try:
                target = vtt_target(jurors, folder) if name == "vtt" else reference_target(jurors, folder)
                results[name] = run_server(target, args.seed, rounds, args.profile, args.trace)
            finally:
                shutil.rmtree(folder, ignore_errors=True)
            print_server(results[name])
        if "vtt" in results:
            for text in check_targets(jurors, results["vtt"], results.get("reference")):
                print(f"  {text}")
                failed |= text.startswith("MISSED")
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
