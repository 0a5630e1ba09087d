"""Load a live session on a real gevent server: N jurors over websocket save sheet lines and vote.

    python bench/bench_live.py [--jurors 200] [--processes 2] [--window 5] [--sheets 5]

A fresh SQLite database in a temporary folder (``vtt db upgrade``, then a 1-round session of 2
demo questions, 3 players and N jurors), ``python run.py`` serving it with gevent on 127.0.0.1.
N asyncio python-socketio clients (websocket transport, spread over ``--processes`` load
processes) connect; the host (signed in over HTTP, its cookie on its socket) shows and reveals
both questions and opens the vote; then every juror saves ``--sheets`` sheet lines and votes
once, each action at its own random moment within ``--window`` seconds, waiting for each ack.

Printed: the time to connect all N, ack latencies (p50/p95/p99/max) of sheet lines and votes,
actions/s, recorded == acknowledged (read back from the database), errors, the server's CPU
seconds and peak RSS (/proc), and the worst /healthz round trip of a separate client polling
every 20 ms: an upper bound on the longest stall of the server's event loop.

Everything stays on 127.0.0.1, every wait has a timeout, and the script exits by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import multiprocessing
import os
import random
import re
import resource
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Self

ROOT = Path(__file__).resolve().parent.parent
DEMO_BANK = ROOT / "vtt" / "demo" / "bank.csv"
CALL_TIMEOUT = 30.0  # seconds one acknowledgement may take
CONNECT_CONCURRENCY = 100  # connections opened at once per load process
PROBE_EVERY = 0.02


# --- setup -------------------------------------------------------------------------------------

def create_session(url: str, jurors: int) -> tuple[int, str, list[str]]:
    """A 1-round session of 2 demo questions, 3 players (one AI) and ``jurors`` jurors: (id, code, tokens)."""
    from sqlalchemy import select

    from vtt.banks import bank_by_name, import_bank, read_bank
    from vtt.db import make_engine, make_session_factory, transaction
    from vtt.engine.setup import SessionConfig
    from vtt.engine.setup import create_session as create
    from vtt.models import Juror

    engine = make_engine(url)
    try:
        with transaction(make_session_factory(engine)) as db:
            if bank_by_name(db, "Demo drama bank") is None:
                import_bank(db, read_bank(DEMO_BANK), "Demo drama bank")
            config = SessionConfig.from_dict({
                "name": "Live bench", "bank": "Demo drama bank", "rounds": 1, "questions_per_round": 2, "seed": 7,
                "reveal_policy": "per-round", "players": [
                    {"name": "Mina", "kind": "human", "age": 10, "stage": "concrete"},
                    {"name": "Grace", "kind": "human", "age": 31}, {"name": "Agent", "kind": "ai"}]})
            vtt_session = create(db, config)
            db.add_all(Juror(session_id=vtt_session.id, label=f"J{n:05d}", token=secrets.token_urlsafe(12))
                       for n in range(1, jurors + 1))
            db.flush()
            tokens = list(db.scalars(select(Juror.token).where(Juror.session_id == vtt_session.id)))
            return vtt_session.id, vtt_session.join_code, tokens
    finally:
        engine.dispose()


def read_back(url: str, session_id: int) -> dict[str, int]:
    from sqlalchemy import func, select

    from vtt.db import make_engine, make_session_factory
    from vtt.models import Event, SheetEntry, Vote

    engine = make_engine(url)
    try:
        with make_session_factory(engine)() as db:
            def rows(model, *where) -> int:
                return db.scalar(select(func.count()).select_from(model).where(model.session_id == session_id, *where))

            return {"sheet_rows": rows(SheetEntry), "vote_rows": rows(Vote),
                    "sheet_events": rows(Event, Event.kind == "sheet"), "vote_events": rows(Event, Event.kind == "vote")}
    finally:
        engine.dispose()


class Server:
    """``python run.py`` (gevent) on 127.0.0.1, output to a file; stopped (then killed) on exit."""

    def __init__(self, env: dict[str, str], folder: Path):
        import socket

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.env, self.log = env, folder / "server.log"

    def __enter__(self) -> Self:
        import urllib.request

        self._out = self.log.open("w")
        self.process = subprocess.Popen([sys.executable, "run.py", "--host", "127.0.0.1", "--port", str(self.port)],
                                        cwd=ROOT, env=self.env, stdout=self._out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=2):
                    return self
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.__exit__()
                    raise SystemExit(f"the server did not come up:\n{self.log.read_text()[-3000:]}")
                time.sleep(0.2)

    def __exit__(self, *_exc) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
        self._out.close()

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime

    def memory_kib(self, key: str) -> int:  # VmRSS now, VmHWM the peak
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(re.search(rf"^{key}:\s+(\d+) kB", status, re.MULTILINE).group(1))


def host_cookie(url: str, password: str) -> str:
    import requests

    with requests.Session() as http:
        page = http.get(f"{url}/host/login", timeout=10).text
        csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
        signed_in = http.post(f"{url}/host/login", data={"password": password, "csrf": csrf},
                              allow_redirects=False, timeout=10)
        if signed_in.status_code != 302:
            raise SystemExit(f"host login failed: HTTP {signed_in.status_code}")
        return "; ".join(f"{name}={value}" for name, value in http.cookies.items())


# --- the stall probe ---------------------------------------------------------------------------

class Probe(threading.Thread):
    """GET /healthz every 20 ms, each on a new connection; every round trip's (start, seconds).

    A new connection each time: on a kept-alive one, the server's two writes (headers, body) meet
    Nagle's algorithm and the client's delayed ACK, and every probe would take ~40 ms more.
    """

    def __init__(self, port: int, limit_seconds: float):
        super().__init__(daemon=True)
        self.port, self.limit = port, limit_seconds
        self.samples: list[tuple[float, float]] = []
        self.failures = 0
        self.halt = threading.Event()

    def run(self) -> None:
        stop_at = time.monotonic() + self.limit
        while not self.halt.is_set() and time.monotonic() < stop_at:
            started = time.monotonic()
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
            try:
                connection.request("GET", "/healthz", headers={"Connection": "close"})
                connection.getresponse().read()
            except (OSError, http.client.HTTPException):
                self.failures += 1
            finally:
                connection.close()
            self.samples.append((started, time.monotonic() - started))
            self.halt.wait(max(0.0, PROBE_EVERY - (time.monotonic() - started)))

    def worst(self, start: float = 0.0, end: float = float("inf")) -> float:
        return max((latency for at, latency in self.samples if start <= at <= end), default=float("nan"))


# --- a load process ------------------------------------------------------------------------------

def load_process(conn, url: str, tokens: list[str], seed: int, sheets: int, window: float) -> None:
    """One load process: connect its jurors, wait for "go", run every juror's actions, report."""
    try:
        asyncio.run(asyncio.wait_for(_load(conn, url, tokens, seed, sheets, window), 60 + 3 * CALL_TIMEOUT + window
                                     + len(tokens) * 0.2))
    except Exception as error:  # noqa: BLE001 - the parent must hear about it rather than wait
        conn.send(("failed", f"{type(error).__name__}: {error}"))
    finally:
        conn.close()


class Juror:
    def __init__(self, url: str, token: str):
        import socketio

        self.url, self.token = url, token
        self.client = socketio.AsyncClient(reconnection=False)
        self.opened_at: float | None = None  # when the vote-opening status arrived
        self.messages = 0
        self.client.on("*", self._record)

    async def _record(self, event: str, data: Any = None) -> None:
        self.messages += 1
        if event == "status" and isinstance(data, dict) and data.get("phase") == "voting" and self.opened_at is None:
            self.opened_at = time.monotonic()


async def _load(conn, url: str, tokens: list[str], seed: int, sheets: int, window: float) -> None:
    rng = random.Random(seed)
    jurors = [Juror(url, token) for token in tokens]
    errors: dict[str, int] = {}
    examples: list[str] = []

    def error(kind: str, detail: str) -> None:
        errors[kind] = errors.get(kind, 0) + 1
        if len(examples) < 5:
            examples.append(f"{kind}: {detail}")

    gate = asyncio.Semaphore(CONNECT_CONCURRENCY)
    connect_seconds: list[float] = []

    async def connect(juror: Juror) -> bool:
        async with gate:
            started = time.monotonic()
            try:
                await juror.client.connect(url, auth={"token": juror.token}, transports=["websocket"],
                                           wait_timeout=30)
            except Exception as failure:  # noqa: BLE001
                error("connect", repr(failure))
                return False
            connect_seconds.append(time.monotonic() - started)
            return True

    started = time.monotonic()
    connected = await asyncio.gather(*(connect(juror) for juror in jurors))
    conn.send(("connected", started, time.monotonic(), sum(connected), connect_seconds))
    jurors = [juror for juror, ok in zip(jurors, connected) if ok]

    ready = await asyncio.to_thread(conn.poll, 120)
    if not ready:
        raise TimeoutError("no go from the parent within 120 s")
    go, questions, aliases = conn.recv()
    latencies: dict[str, list[float]] = {"sheet": [], "vote": []}
    acked = {"sheet": 0, "vote": 0}
    done_at: list[float] = []

    async def act(juror: Juror, number: int) -> None:
        lines = rng.sample([(q, a) for q in questions for a in aliases], sheets)
        moments = sorted(rng.uniform(0, window) for _ in range(sheets + 1))
        plan = [("sheet", {"id": f"s{seed}-{number}-{i}", "question": q, "alias": a, "note": "answers too evenly",
                           "human_likeness": rng.randint(1, 5), "looks_like_ai": rng.random() < 0.4})
                for i, (q, a) in enumerate(lines)]
        plan.append(("vote", {"id": f"v{seed}-{number}", "round": 1, "alias": rng.choice(aliases),
                              "confidence": rng.randint(1, 5), "reason": "too fluent"}))
        for moment, (event, payload) in zip(moments, plan):
            delay = go + moment - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            sent = time.monotonic()
            try:
                reply = await juror.client.call(event, payload, timeout=CALL_TIMEOUT)
            except Exception as failure:  # noqa: BLE001 - a timeout or a dropped connection
                error(f"{event}: {type(failure).__name__}", repr(failure))
                continue
            latencies[event].append(time.monotonic() - sent)
            if isinstance(reply, dict) and reply.get("ok") and not reply.get("duplicate"):
                acked[event] += 1
            else:
                error(f"{event}: {(reply or {}).get('error', {}).get('code', reply)}", repr(reply)[:200])
        done_at.append(time.monotonic())

    await asyncio.gather(*(act(juror, number) for number, juror in enumerate(jurors)))
    opened = [juror.opened_at for juror in jurors]
    usage = resource.getrusage(resource.RUSAGE_SELF)
    conn.send(("done", {"latencies": latencies, "acked": acked, "errors": errors, "examples": examples,
                        "opened": opened, "done_at": max(done_at, default=go),
                        "messages": sum(juror.messages for juror in jurors),
                        "cpu": usage.ru_utime + usage.ru_stime}))

    async def leave(juror: Juror) -> None:
        with contextlib.suppress(Exception):  # leaving is best effort
            await asyncio.wait_for(juror.client.disconnect(), 10)

    await asyncio.gather(*(leave(juror) for juror in jurors))
    conn.send(("left", time.monotonic()))


# --- the host and the run --------------------------------------------------------------------------

async def host_connect(url: str, code: str, cookie: str):
    import socketio

    host = socketio.AsyncClient(reconnection=False)
    await host.connect(url, auth={"code": code, "role": "host"}, headers={"Cookie": cookie},
                       transports=["websocket"], wait_timeout=30)
    return host


async def open_the_vote(host) -> tuple[list[int], list[str], float, dict[str, float]]:
    """Show and reveal the round's 2 questions and open the vote: (question ids, aliases, when open_vote was
    sent, each move's slowest ack)."""
    timings: dict[str, float] = {}
    count = 0

    async def move(action: str) -> dict:
        nonlocal count
        count += 1
        started = time.monotonic()
        reply = await host.call("host", {"id": f"h{count}", "action": action}, timeout=CALL_TIMEOUT)
        timings[action] = max(timings.get(action, 0.0), time.monotonic() - started)
        if not reply.get("ok"):
            raise SystemExit(f"host {action} failed: {reply}")
        return reply

    await move("open_lobby")
    await move("start_round")
    for _ in range(2):
        for action in ("show_question", "open_answering", "close_answering", "reveal"):
            await move(action)
    snapshot = (await host.call("snapshot", {}, timeout=CALL_TIMEOUT))["snapshot"]
    questions = [q["id"] for q in snapshot["questions"] if q["round"] == 1]
    aliases = sorted(snapshot["rounds"][0]["aliases"].values())
    sent = time.monotonic()
    await move("open_vote")
    return questions, aliases, sent, timings


async def drive(server: Server, code: str, password: str, workers: list, args: argparse.Namespace) -> dict:
    """Wait for every juror to connect, bring the session to an open vote, say go, collect the reports."""
    connected = [await asyncio.to_thread(receive, parent, "connected", 60 + args.jurors * 0.2)
                 for _process, parent in workers]
    result: dict[str, Any] = {
        "first": min(c[1] for c in connected), "last": max(c[2] for c in connected),
        "joined": sum(c[3] for c in connected), "per_socket": [s for c in connected for s in c[4]],
        "rss_connected": server.memory_kib("VmRSS")}
    cookie = await asyncio.to_thread(host_cookie, server.url, password)
    host = await host_connect(server.url, code, cookie)
    try:
        questions, aliases, result["sent"], result["timings"] = await open_the_vote(host)
        result["cpu_before"] = server.cpu_seconds()
        result["go"] = go = time.monotonic() + 0.2
        for _process, parent in workers:
            parent.send((go, questions, aliases))
        timeout = args.window + 3 * CALL_TIMEOUT + 60
        result["reports"] = [(await asyncio.to_thread(receive, parent, "done", timeout))[1]
                             for _process, parent in workers]
        result["cpu_after"], result["peak"] = server.cpu_seconds(), server.memory_kib("VmHWM")
        result["left"] = max([(await asyncio.to_thread(receive, parent, "left", 60))[1] for _process, parent in workers])
    finally:
        await asyncio.wait_for(host.disconnect(), 10)
    return result


def percentiles(values: list[float]) -> str:
    if not values:
        return "no samples"
    ordered = sorted(values)

    def at(fraction: float) -> float:
        return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))] * 1000

    return (f"p50 {at(0.50):.1f} ms, p95 {at(0.95):.1f} ms, p99 {at(0.99):.1f} ms, max {ordered[-1] * 1000:.1f} ms "
            f"({len(ordered)} acks)")


def run(args: argparse.Namespace, folder: Path) -> None:
    url = f"sqlite:///{folder / 'bench.db'}"
    password = secrets.token_urlsafe(12)
    env = {**os.environ, "DATABASE_URL": url, "VTT_INSTANCE_PATH": str(folder / "instance"),
           "VTT_HOST_PASSWORD": password, "VTT_ASYNC_MODE": "gevent"}
    for name in ("REDIS_URL", "VTT_AUDIT_LOG", "VTT_BASE_URL"):
        env.pop(name, None)
    vtt = Path(sys.executable).parent / "vtt"
    subprocess.run([str(vtt), "db", "upgrade"], env=env, cwd=ROOT, check=True, capture_output=True, timeout=120)
    session_id, code, tokens = create_session(url, args.jurors)
    print(f"{args.jurors} jurors, {args.processes} load process(es), {args.sheets} sheet lines + 1 vote each "
          f"at random moments within {args.window:g} s; SQLite in {folder}")

    context = multiprocessing.get_context("spawn")
    with Server(env, folder) as server:
        probe = Probe(server.port, limit_seconds=600)
        probe.start()
        cpu_idle, rss_idle = server.cpu_seconds(), server.memory_kib("VmRSS")
        workers = []
        for index in range(args.processes):
            parent, child = context.Pipe()
            share = tokens[index::args.processes]
            process = context.Process(target=load_process, daemon=True,
                                      args=(child, server.url, share, args.seed + index, args.sheets, args.window))
            process.start()
            workers.append((process, parent))
        try:
            result = asyncio.run(asyncio.wait_for(drive(server, code, password, workers, args),
                                                  120 + args.jurors * 0.2 + args.window + 4 * CALL_TIMEOUT + 60))
        finally:
            for process, _parent in workers:
                process.join(30)
                if process.is_alive():
                    process.kill()
            probe.halt.set()
            probe.join(10)
        cpu_total = server.cpu_seconds()
    counts = read_back(url, session_id)

    reports, go, sent, timings = result["reports"], result["go"], result["sent"], result["timings"]
    joined, per_socket, rss_connected = result["joined"], result["per_socket"], result["rss_connected"]
    first, last, cpu_before, cpu_after, peak = (result[k] for k in ("first", "last", "cpu_before", "cpu_after", "peak"))
    latencies = {kind: [x for r in reports for x in r["latencies"][kind]] for kind in ("sheet", "vote")}
    acked = {kind: sum(r["acked"][kind] for r in reports) for kind in ("sheet", "vote")}
    errors: dict[str, int] = {}
    for report in reports:
        for kind, number in report["errors"].items():
            errors[kind] = errors.get(kind, 0) + number
    examples = [e for r in reports for e in r["examples"]][:5]
    opened = [t for r in reports for t in r["opened"]]
    finished = max(r["done_at"] for r in reports)
    actions = acked["sheet"] + acked["vote"]

    print(f"connect: {joined}/{args.jurors} jurors in {last - first:.2f} s "
          f"(at most {CONNECT_CONCURRENCY} handshakes in flight per process; one connect: "
          f"{percentiles(per_socket).replace(' acks', ' sockets')})")
    print("host moves (slowest ack of each): " + ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in timings.items()))
    missing = sum(t is None for t in opened)
    if not missing:
        print(f"fan-out: the vote-opening status reached all {len(opened)} jurors "
              f"{(max(opened) - sent) * 1000:.0f} ms after the host sent open_vote")
    else:
        print(f"fan-out: {missing} of {len(opened)} jurors never got the vote-opening status")
    print(f"sheet acks: {percentiles(latencies['sheet'])}")
    print(f"vote acks:  {percentiles(latencies['vote'])}")
    print(f"throughput: {actions} actions acknowledged in {finished - go:.2f} s from go = "
          f"{actions / max(finished - go, 1e-9):.0f} actions/s (offered: {args.jurors * (args.sheets + 1)} "
          f"over {args.window:g} s)")
    same_sheet = acked["sheet"] == counts["sheet_rows"] == counts["sheet_events"]
    same_vote = acked["vote"] == counts["vote_rows"] == counts["vote_events"]
    print(f"recorded == acked: sheet {counts['sheet_rows']} rows / {counts['sheet_events']} events / "
          f"{acked['sheet']} acks {'OK' if same_sheet else 'MISMATCH'}; vote {counts['vote_rows']} rows / "
          f"{counts['vote_events']} events / {acked['vote']} acks {'OK' if same_vote else 'MISMATCH'}")
    print(f"errors: {sum(errors.values())}" + (f" {errors}; e.g. {examples}" if errors else ""))
    print(f"server: {cpu_after - cpu_before:.2f} CPU s during the actions, {cpu_total:.2f} CPU s in all "
          f"(startup {cpu_idle:.2f}); RSS {rss_idle / 1024:.0f} MiB idle, {rss_connected / 1024:.0f} MiB with "
          f"{joined} jurors connected, peak {peak / 1024:.0f} MiB")
    print(f"load processes: {sum(r['cpu'] for r in reports):.2f} CPU s; juror messages received: "
          f"{sum(r['messages'] for r in reports)}")
    phases = {"jurors connecting": (first, last), "host moves": (last, go), "jurors acting": (go, finished),
              "jurors leaving": (finished, result["left"])}
    worst = max(probe.samples, key=lambda sample: sample[1], default=(go, float("nan")))
    print("event-loop stall (worst /healthz round trip of a separate client polling every 20 ms on new "
          "connections: an upper bound on the server's longest stall): "
          + ", ".join(f"{probe.worst(a, b) * 1000:.0f} ms while {name}" for name, (a, b) in phases.items())
          + f"; {worst[1] * 1000:.0f} ms at worst over the run ({worst[0] - go:+.1f} s from go); "
          f"{len(probe.samples)} probes, {probe.failures} failed")
    if errors or not (same_sheet and same_vote) or missing:
        raise SystemExit(1)


def receive(parent, kind: str, timeout: float):
    if not parent.poll(timeout):
        raise SystemExit(f"a load process sent no {kind!r} within {timeout:.0f} s")
    message = parent.recv()
    if message[0] != kind:
        raise SystemExit(f"a load process failed: {message}")
    return message


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jurors", type=int, default=200)
    parser.add_argument("--processes", type=int, default=2, help="load processes the jurors are spread over")
    parser.add_argument("--window", type=float, default=5.0, help="seconds over which the actions are spread")
    parser.add_argument("--sheets", type=int, default=5, help="sheet lines per juror (at most 6: 2 questions x 3)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if not 1 <= args.sheets <= 6 or args.jurors < 1 or not 1 <= args.processes <= 8:
        parser.error("--sheets 1-6, --jurors >= 1, --processes 1-8")
    folder = Path(tempfile.mkdtemp(prefix="vtt-bench-live-"))
    try:
        run(args, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
