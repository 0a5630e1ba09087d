"""The results page's export.zip with hundreds of megabytes of spoken takes, built while a live round runs: how long
the server's event loop stalls.

    python bench/bench_export.py [--megabytes 600] [--jurors 50]

The server is ``python run.py`` (gevent) on a fresh SQLite instance.  A session gets --megabytes of takes (random
bytes behind a WebM header, 2 MB each, with their rows: the export only copies them); a simulated session runs with
--jurors bots meanwhile; then the host downloads the first session's export.zip (a worker builds it under the
instance folder, the server streams it).  For the baseline (the live session alone) and the download:
``/healthz`` ``max_stall_ms`` (reset at the start), the slowest ``/healthz`` polled every 20 ms, and the time.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_host_work import bench_instance, measured, simulate
from bench_upload import Host

from tests.support.live import make_session
from tests.support.recordings import lay_takes
from tests.support.served import ServedApp
from vtt.db import make_db_factory, make_engine

TAKE_BYTES = 2 * 1024 * 1024
PLAYERS = [
    {"name": "Mina", "kind": "human", "age": 4, "stage": "pre-operational", "answer_modes": ["spoken"]},
    {"name": "Grace", "kind": "human", "age": 31},
    {"name": "Agent", "kind": "ai"},
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--megabytes", type=int, default=600, help="of takes in the exported session")
    parser.add_argument("--jurors", type=int, default=50, help="bot jurors of the live session")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-export-") as folder:
        instance, database_url, env = bench_instance(folder)
        subprocess.run([sys.executable, "-m", "vtt.cli", "demo", "load"], env=env, check=True, capture_output=True)
        db = make_db_factory(make_engine(database_url))
        people = make_session(db, rounds=5, per_round=6, jurors=1, players=PLAYERS, name="Exported")
        count = args.megabytes * 1024 * 1024 // TAKE_BYTES
        total = lay_takes(db, instance / "recordings", people.session_id, people.player_ids["Mina"], count, TAKE_BYTES)
        with ServedApp(env) as server:
            host = Host(server.url)
            live = simulate(server.url, env, "--jurors", str(args.jurors), "--rounds", "5", "--questions", "6")
            time.sleep(8)  # the bots are in and playing
            baseline = measured(host, server.url, lambda: time.sleep(10))
            received = []

            def download() -> None:
                url = f"{server.url}/host/sessions/{people.session_id}/results/export.zip"
                with host.http.get(url, stream=True, timeout=1800) as response:
                    assert response.status_code == 200, response.status_code
                    received.append(sum(len(chunk) for chunk in response.iter_content(1024 * 1024)))

            exported = measured(host, server.url, download)
            live.terminate()
            live.communicate(timeout=60)
            left = list((instance / "exports").iterdir())
    print(f"exported session: {count} takes, {total / 1e6:.0f} MB; zip {received[0] / 1e6:.0f} MB; left: {left}")
    print(f"live session: {args.jurors} bot jurors")
    for label, (stall, poll, took) in (("baseline (the live session alone, 10 s)", baseline), ("export", exported)):
        print(f"  {label}: max_stall_ms {stall:.1f}, slowest /healthz {poll:.0f} ms, over {took:.1f} s")


if __name__ == "__main__":
    main()
