"""A large bank upload through the host console of a real `vtt serve`-like server (gevent): how long the event loop
stalls while it is imported, how long a live writer waits for SQLite's lock, and how long a 4-line upload takes.

    python bench/bench_upload.py [--questions 40000] [--runs 5]

The server is ``python run.py`` in a subprocess on a fresh instance folder (as tests.support.served.ServedApp starts
it).  The bank is a native CSV drawn here (~9 MB at 40,000 questions).  During the large upload:

- ``/healthz`` ``max_stall_ms`` (the server's own heartbeat, reset just before the upload) is the longest stall;
- a client polls ``/healthz`` every 20 ms and keeps its slowest answer;
- a "live writer" beside the server (its own SQLite connection, ``BEGIN IMMEDIATE`` with no busy wait, retried
  every 2 ms, as the server's writer does) commits a tiny transaction every 20 ms and keeps its longest wait.
"""

from __future__ import annotations

import argparse
import os
import re
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_import import write_bank

from tests.support.served import ServedApp
from vtt.db import upgrade

PASSWORD = "bench password"
SPEC_EXAMPLES = Path(__file__).resolve().parent.parent / "tests" / "data" / "spec_examples.csv"


class Host:
    def __init__(self, url: str):
        self.url, self.http = url, requests.Session()
        csrf = self.token("/host/login")
        signed = self.http.post(
            f"{url}/host/login", data={"password": PASSWORD, "csrf_token": csrf}, allow_redirects=False, timeout=10
        )
        assert signed.status_code == 302, signed.status_code
        self.csrf = self.token("/host/")

    def token(self, path: str) -> str:
        page = self.http.get(f"{self.url}{path}", timeout=10).text
        return re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)

    def upload(self, path: Path, bank: str) -> tuple[float, requests.Response]:
        data = path.read_bytes()
        started = time.perf_counter()
        response = self.http.post(
            f"{self.url}/host/banks/upload",
            data={"csrf_token": self.csrf, "bank": bank},
            files={"file": (path.name, data)},
            allow_redirects=False,
            timeout=600,
        )
        return time.perf_counter() - started, response


class Poller(threading.Thread):
    """GET /healthz every 20 ms; the slowest answer."""

    def __init__(self, url: str):
        super().__init__(daemon=True)
        self.url, self.running, self.slowest = url, True, 0.0

    def run(self) -> None:
        http = requests.Session()
        while self.running:
            started = time.perf_counter()
            http.get(f"{self.url}/healthz", timeout=30)
            self.slowest = max(self.slowest, time.perf_counter() - started)
            time.sleep(0.02)


class LiveWriter(threading.Thread):
    """Tiny write transactions on the server's database, as its writer makes them; the longest wait for the lock."""

    def __init__(self, database: Path):
        super().__init__(daemon=True)
        self.database, self.running, self.longest, self.commits = database, True, 0.0, 0

    def run(self) -> None:
        connection = sqlite3.connect(self.database, timeout=0, isolation_level=None, check_same_thread=False)
        connection.execute("CREATE TABLE IF NOT EXISTS bench_probe (at REAL)")
        while self.running:
            started = time.perf_counter()
            while True:
                try:
                    connection.execute("BEGIN IMMEDIATE")
                    break
                except sqlite3.OperationalError:
                    time.sleep(0.002)
            self.longest = max(self.longest, time.perf_counter() - started)
            connection.execute("INSERT INTO bench_probe VALUES (?)", (time.time(),))
            connection.execute("COMMIT")
            self.commits += 1
            time.sleep(0.02)
        connection.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=40_000)
    parser.add_argument("--runs", type=int, default=5, help="4-line uploads (the median is printed)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-upload-") as folder:
        instance = Path(folder) / "instance"
        instance.mkdir()
        database = instance / "vtt.db"
        upgrade(f"sqlite:///{database}")
        four = Path(folder) / "four.csv"  # the header and the spec's first four questions
        four.write_bytes(b"".join(SPEC_EXAMPLES.read_bytes().splitlines(keepends=True)[:5]))
        bank = Path(folder) / "large_bank.csv"
        write_bank(bank, args.questions, realistic=True)
        env = {
            "VTT_INSTANCE_PATH": str(instance),
            "VTT_HOST_PASSWORD": PASSWORD,
            "DATABASE_URL": f"sqlite:///{database}",
        }
        for name in ("REDIS_URL", "SECRET_KEY"):
            os.environ.pop(name, None)
        with ServedApp(env) as server:
            host = Host(server.url)
            host.upload(four, "warm-up")  # the first request of a process pays for lazy set-up
            poller, writer = Poller(server.url), LiveWriter(database)
            poller.start()
            writer.start()
            time.sleep(0.5)
            host.http.get(f"{server.url}/healthz?reset=1", timeout=10)
            seconds, response = host.upload(bank, "large")
            loop = host.http.get(f"{server.url}/healthz", timeout=10).json()["loop"]
            poller.running = writer.running = False
            poller.join(timeout=30)
            writer.join(timeout=30)
            assert response.status_code == 302, (response.status_code, response.text[-2000:])
            small = []
            for run in range(args.runs):
                took, response = host.upload(four, f"four-{run}")
                assert response.status_code == 302, response.status_code
                small.append(took)
        size = bank.stat().st_size / 2**20
        print(f"large upload: {args.questions:,} questions, {size:.1f} MB native CSV: {seconds:.2f} s")
        print(f"  longest loop stall (/healthz max_stall_ms over the upload): {loop['max_stall_ms']:.1f} ms")
        print(f"  slowest /healthz answer meanwhile (polled every 20 ms): {poller.slowest * 1000:.0f} ms")
        print(
            f"  longest wait of a live writer for SQLite's lock: {writer.longest * 1000:.0f} ms "
            f"({writer.commits} commits meanwhile)"
        )
        print(
            f"4-line upload: median {statistics.median(small) * 1000:.0f} ms of {args.runs} "
            f"({', '.join(f'{s * 1000:.0f}' for s in small)} ms)"
        )


if __name__ == "__main__":
    main()
