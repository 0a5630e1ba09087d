"""The click to a small session's export.zip and report.pdf on a quiet machine: how long until the file is there.

    python bench/bench_jobs.py [--clicks 5]

The server is ``python run.py`` (gevent) on a fresh SQLite instance holding one small session, played, voted and
graded by the tests' ``play_session`` (2 rounds of 2 questions, 3 players, 4 jurors).  The host asks for its
export.zip, then its report.pdf, ``--clicks`` times each, one after another, once the server has been up a few
seconds (its job workers ready); each time is from the request to the last byte.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_host_work import bench_instance
from bench_upload import Host

from tests.support.apps import HOST_PASSWORD, threaded_app
from tests.support.review import play_session
from tests.support.served import ServedApp
from vtt.db import make_db_factory, make_engine


def timed(host: Host, url: str) -> float:
    started = time.perf_counter()
    response = host.http.get(url, timeout=120)
    assert response.status_code == 200 and len(response.content) > 100, (url, response.status_code)
    assert response.headers["Content-Type"].startswith(("application/zip", "application/pdf")), response.text[:3000]
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clicks", type=int, default=5, help="downloads of each file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-jobs-") as folder:
        instance, database_url, env = bench_instance(folder)
        app = threaded_app(database_url, HOST_PASSWORD=HOST_PASSWORD)  # the tests' host plays it
        session_id = play_session(app, make_db_factory(make_engine(database_url))).session_id
        app.extensions["vtt.hub"].stop()
        with ServedApp(env) as server:
            host = Host(server.url)
            time.sleep(8)  # the server's job workers have imported what they need
            base = f"{server.url}/host/sessions/{session_id}/results"
            for name, path in (("export.zip", "export.zip"), ("report.pdf", "files/report.pdf")):
                times = [timed(host, f"{base}/{path}") for _ in range(args.clicks)]
                print(
                    f"{name}: median {statistics.median(times):.2f} s, slowest {max(times):.2f} s, "
                    f"first {times[0]:.2f} s over {args.clicks} clicks"
                )
            print(f"left in instance/exports: {sorted(p.name for p in (instance / 'exports').iterdir())}")


if __name__ == "__main__":
    main()
