"""Where a connection's time goes: N jurors connect at once to one ``vtt serve`` process (gevent, SQLite).

    python bench/bench_connect.py [--jurors 5000] [--runs 3] [--profile DIR]

Each run is a fresh server with a new SQLite file holding a session of N jurors (servers.py's ``vtt_target``), and
one load process connecting all of them, 200 at a time (bench_load's load process and lean client): from its first
websocket to its last snapshot.  Printed per run: the seconds, connections per second, the server's CPU seconds per
1,000 connections and its longest loop stall; then every juror leaves at once (a venue's network dropping): how long
until the server has let every connection go, and its longest loop stall meanwhile.  With ``--profile DIR``
py-spy samples the server during each run's connections, and the samples on the server's own work are split by the
part of the connect path they were in (the token lookup, the snapshot's read and build, sending it, ownership and
presence, Socket.IO's and Engine.IO's own handshake, the websocket itself), so that what to cache is measured, not
guessed.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_load import load_process
from servers import Served, vtt_target

# The parts of the connect path, by a function on the sample's stack (the first that matches, innermost first).
PARTS = (
    ("token lookup (identify)", ("identify (vtt/realtime/identify.py",)),
    ("snapshot: read the state", ("_state_for_reading", "current_version", "load_state")),
    ("snapshot: the juror's rows", ("juror_rows", "rows_of_rounds")),
    ("snapshot: build the view", ("juror_snapshot", "jury_view", "stage_snapshot", "player_snapshot")),
    ("send the snapshot (encode, write)", ("to_connection",)),
    ("ownership and presence", ("arrived (vtt/realtime/ownership.py", "presence_changed", "vtt/realtime/presence.py")),
    ("the connect handler's rest", ("on_connect (vtt/realtime/handlers.py",)),
    ("Socket.IO / Engine.IO handshake", ("socketio/", "engineio/")),
    ("websocket and HTTP (gevent-websocket, WSGI)", ("geventwebsocket", "gevent/pywsgi", "simple_websocket")),
)
IDLE = ("gevent/hub.py", "_hub_wait", "loopwatch", "select", "epoll")


def profile_parts(raw: Path) -> tuple[Counter, int]:
    """Samples per part of the connect path, from py-spy's raw (collapsed) output; and the samples in all."""
    parts: Counter = Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        frames = stack.split(";")
        samples = int(count)
        innermost = frames[-1] if frames else ""
        if any(mark in innermost for mark in IDLE):
            continue
        total += samples
        for name, marks in PARTS:
            if any(mark in frame for frame in frames for mark in marks):
                parts[name] += samples
                break
        else:
            parts["other"] += samples
    return parts, total


def still_connected(served: Served) -> bool:
    """Whether the server still holds connections (a server too busy to answer ``/healthz`` within its 10 s still
    does)."""
    try:
        return bool(served.health().get("sessions"))
    except OSError:  # a timeout included
        return True


def one_run(jurors: int, profile: str | None, number: int) -> dict:
    folder = Path(tempfile.mkdtemp(prefix="vtt-bench-connect-"))
    try:
        target = vtt_target(jurors, folder)
        context = multiprocessing.get_context("spawn")
        with Served(target.command, target.env, folder) as served:
            spy = None
            raw = Path(profile) / f"connect-{jurors}-{number}.txt" if profile else None
            if raw is not None:
                raw.parent.mkdir(parents=True, exist_ok=True)
                spy = subprocess.Popen(
                    [str(Path(sys.executable).with_name("py-spy")), "record", "--pid", str(served.process.pid)]
                    + ["--format", "raw", "--nonblocking", "--rate", "200", "-o", str(raw)],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                time.sleep(1.0)  # py-spy attached
            cpu, _ = served.cpu_seconds(), served.stall_ms(reset=True)
            parent, child = context.Pipe()
            groups = [(target.host_auth["code"], target.tokens)]  # the jurors name their session, as the pages do
            worker = context.Process(target=load_process, args=(child, served.url, groups, 1), daemon=True)
            worker.start()
            try:
                if not parent.poll(60 + jurors * 0.05):
                    raise SystemExit("the load process did not connect its jurors in time")
                message = parent.recv()
                if message[0] != "connected":
                    raise SystemExit(f"the load process failed: {message}")
                cpu, stall = served.cpu_seconds() - cpu, served.stall_ms(reset=True)
                if spy is not None:  # the connections only
                    import signal

                    spy.send_signal(signal.SIGINT)
                    spy.wait(30)
            finally:
                parent.send(None)  # every juror leaves at once
            leaving = time.monotonic()
            while still_connected(served) and time.monotonic() - leaving < 120:
                time.sleep(0.05)
            left, leave_stall = time.monotonic() - leaving, served.stall_ms()
            worker.join(30)
        seconds, connected, failures = message[1], sum(message[2]), message[3]
        parts, total = profile_parts(raw) if raw is not None and raw.exists() else (Counter(), 0)
        return {
            "seconds": seconds,
            "connected": connected,
            "failures": failures,
            "cpu_per_1000": cpu * 1000 / max(connected, 1),
            "stall": stall,
            "left": left,
            "leave_stall": leave_stall,
            "parts": parts,
            "samples": total,
        }
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jurors", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--profile", metavar="DIR", help="sample the server with py-spy; its raw stacks go to DIR")
    args = parser.parse_args()
    print(f"bench_connect: {os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M')}; {args.jurors:,} jurors")
    print(
        "| run | connected | seconds | connections/s | server CPU s per 1,000 | max loop stall "
        "| all leave at once: gone after | its max loop stall |"
    )
    print("|---|---|---|---|---|---|---|---|")
    runs = []
    for number in range(1, args.runs + 1):
        run = one_run(args.jurors, args.profile, number)
        runs.append(run)
        print(
            f"| {number} | {run['connected']:,} | {run['seconds']:.2f} | {run['connected'] / run['seconds']:,.0f} "
            f"| {run['cpu_per_1000']:.2f} | {run['stall']:.0f} ms "
            f"| {run['left']:.2f} s | {run['leave_stall']:.0f} ms |",
            flush=True,
        )
        if run["failures"]:
            print(f"  failures: {run['failures']}")
    print(f"median: {statistics.median(run['seconds'] for run in runs):.2f} s")
    parts = sum((run["parts"] for run in runs), Counter())
    total = sum(run["samples"] for run in runs)
    if total:
        print("\n| part of the connect path | share of the server's busy samples |\n|---|---|")
        for name, samples in parts.most_common():
            print(f"| {name} | {100 * samples / total:.1f} % |")
    raise SystemExit(0 if all(run["connected"] == args.jurors for run in runs) else 1)


if __name__ == "__main__":
    main()
