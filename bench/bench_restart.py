"""Where a server's restart goes: ``python run.py`` from start to its first /healthz answer, and its steps.

    .venv/bin/python bench/bench_restart.py [--runs 5]

Prints the median time to serving over ``--runs`` starts of ``run.py`` (a killed server's restart is this), then
one start's steps timed in a child process as ``vtt.serving.server.serve`` takes them (gevent's patching, the imports,
``create_app``, the database revision check, the start-up banner), and the ten slowest imports
(``python -X importtime``).  Uses a throwaway instance folder with the demo loaded.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STEPS = r"""
import time
t0 = time.perf_counter()
from gevent import monkey
monkey.patch_all()
t1 = time.perf_counter()
from vtt.cli.serve import serve  # what run.py imports
from vtt.app import create_app
from vtt.db import current_revision, head_revision
from vtt.serving.server import startup_banner
t2 = time.perf_counter()
app = create_app({"SOCKETIO_ASYNC_MODE": "gevent"})
t3 = time.perf_counter()
current_revision(app.config["DATABASE_URL"]) == head_revision()
t4 = time.perf_counter()
startup_banner(app, "127.0.0.1", 5000)
t5 = time.perf_counter()
for name, a, b in [("gevent patch_all", t0, t1), ("imports (vtt.cli, vtt.app, vtt.serving.server)", t1, t2),
                   ("create_app", t2, t3), ("database revision check (alembic)", t3, t4),
                   ("start-up banner (demo link, QR)", t4, t5)]:
    print(f"{name}\t{(b - a) * 1000:.0f}")
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def time_to_serving(env: dict[str, str]) -> float:
    port = free_port()
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "run.py", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1):
                    return time.perf_counter() - started
            except OSError:
                if process.poll() is not None:
                    raise RuntimeError("the server stopped before serving") from None
                time.sleep(0.01)
    finally:
        process.kill()
        process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "VTT_INSTANCE_PATH": folder, "VTT_HOST_PASSWORD": "bench"}
        env.pop("DATABASE_URL", None)
        vtt = str(Path(sys.executable).parent / "vtt")
        subprocess.run([vtt, "db", "upgrade"], env=env, check=True, capture_output=True)
        subprocess.run([vtt, "demo", "load"], env=env, check=True, capture_output=True)
        times = [time_to_serving(env) for _ in range(runs)]
        print(
            f"run.py to its first /healthz answer: median {statistics.median(times):.2f} s "
            f"(min {min(times):.2f}, max {max(times):.2f}, {runs} runs)"
        )
        steps = subprocess.run(
            [sys.executable, "-c", STEPS], cwd=ROOT, env=env, check=True, capture_output=True, text=True
        ).stdout
        print("steps of one start (ms):")
        for line in steps.splitlines():
            name, ms = line.split("\t")
            print(f"  {name:45s} {ms:>6s}")
        trace = subprocess.run(
            [
                sys.executable,
                "-X",
                "importtime",
                "-c",
                "from gevent import monkey; monkey.patch_all(); import vtt.cli, vtt.app, vtt.serving.server",
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        ).stderr
        slowest = []
        for line in trace.splitlines():
            found = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
            if found and len(found.group(3)) <= 3:  # top-level packages only (their own subtree included)
                slowest.append((int(found.group(2)) / 1000, found.group(4)))
        print("slowest top-level imports (ms, cumulative):")
        for ms, name in sorted(slowest, reverse=True)[:10]:
            print(f"  {name:45s} {ms:6.0f}")


if __name__ == "__main__":
    main()
