"""The host's heavy buttons during a live round: how long the server's event loop stalls while "Ask the judge" scores a
session's open answers and while "Suggest a transcript" transcribes spoken answers, with bots playing another session.

    python bench/bench_host_work.py [--jurors 200] [--transcripts 5]

The server is ``python run.py`` (gevent) on a fresh SQLite instance, its judge a local chat-completions stub that
answers ``{'score': 3}`` after 20 ms (a model's latency is not the server's cost).  First ``vtt simulate --new
--drive`` plays a session to the end (its open answers are the judge's work); then a second simulated session runs
with --jurors bots while, in turn:

- nothing else (the baseline: the loop's own stalls under that load);
- the grading page of the first session, drawn five times (in the server: its template and marks);
- the judge scores the first session (the grading page's button; a worker process);
- the host asks for --transcripts transcript suggestions of a spoken take (espeak-ng's phrase in WebM/Opus, a
  recording row added to the first session), one after another (each a worker process running pocketsphinx).

For each, ``/healthz`` ``max_stall_ms`` (reset at the start) and the slowest of ``/healthz`` polled every 20 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_upload import Host, Poller
from sqlalchemy import func, select

from tests.support.audio import said_webm
from tests.support.served import ServedApp
from vtt.db import make_db_factory, make_engine, upgrade
from vtt.models import Answer, JudgeSuggestion, Player, PlayerKind, Recording, VttSession

PASSWORD = "bench password"


def bench_instance(folder: str, **settings: str) -> tuple[Path, str, dict[str, str]]:
    """A fresh instance under ``folder`` with a migrated SQLite database: its path, the database URL and the
    environment that points vtt at it (``settings`` added, e.g. ``SECRET_KEY``), also set in this process."""
    instance = Path(folder) / "instance"
    instance.mkdir()
    database_url = f"sqlite:///{instance / 'vtt.db'}"
    upgrade(database_url)
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "SECRET_KEY")},
        "VTT_INSTANCE_PATH": str(instance),
        "VTT_HOST_PASSWORD": PASSWORD,
        "DATABASE_URL": database_url,
        **settings,
    }
    os.environ.update(env)
    return instance, database_url, env


class StubJudge:
    """A chat-completions endpoint that answers {'score': 3} after 20 ms."""

    def __init__(self):
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                time.sleep(0.02)
                data = json.dumps(
                    {"model": body["model"], "choices": [{"message": {"role": "assistant", "content": "{'score': 3}"}}]}
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def simulate(url: str, env: dict[str, str], *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "vtt.cli", "simulate", "--url", url, "--new", "--drive", "--json", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def measured(host: Host, url: str, work) -> tuple[float, float, float]:
    """(max_stall_ms, slowest /healthz poll in ms, seconds) over ``work()``."""
    poller = Poller(url)
    poller.start()
    host.http.get(f"{url}/healthz?reset=1", timeout=10)
    started = time.perf_counter()
    work()
    took = time.perf_counter() - started
    loop = host.http.get(f"{url}/healthz", timeout=10).json()["loop"]
    poller.running = False
    poller.join(timeout=30)
    return loop["max_stall_ms"], poller.slowest * 1000, took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jurors", type=int, default=200, help="bot jurors of the live session")
    parser.add_argument("--transcripts", type=int, default=5)
    args = parser.parse_args()
    judge = StubJudge()
    with tempfile.TemporaryDirectory(prefix="bench-host-work-") as folder:
        instance, database_url, env = bench_instance(
            folder, VTT_JUDGE_URL=f"http:{judge.url}", VTT_JUDGE_MODEL="bench-judge"
        )
        subprocess.run([sys.executable, "-m", "vtt.cli", "demo", "load"], env=env, check=True, capture_output=True)
        db = make_db_factory(make_engine(database_url))
        with ServedApp(env) as server:
            played = simulate(server.url, env, "--jurors", "20", "--rounds", "5", "--questions", "6", "--pace", "0.05")
            figures = json.loads(played.communicate(timeout=900)[0].strip().splitlines()[-1])
            with db() as session:
                first = session.scalar(select(VttSession).where(VttSession.join_code == figures["session"]))
                answers = session.scalar(select(func.count()).select_from(Answer).where(Answer.session_id == first.id))
                player = session.scalar(
                    select(Player).where(Player.session_id == first.id, Player.kind == PlayerKind.HUMAN)
                )
                answer = session.scalar(select(Answer).where(Answer.player_id == player.id))
                take = said_webm(Path(folder))
                name = f"{first.id}-{answer.session_question_id}-{player.id}-bench.webm"
                (instance / "recordings").mkdir(exist_ok=True)
                (instance / "recordings" / name).write_bytes(take.read_bytes())
                now = datetime.now(UTC)
                session.add(
                    Recording(
                        session_id=first.id,
                        session_question_id=answer.session_question_id,
                        player_id=player.id,
                        file=name,
                        mime="audio/webm",
                        size=take.stat().st_size,
                        ended_at=now,
                        received_at=now,
                        client_key="bench",
                    )
                )
                session.commit()
                first_id = first.id
            host = Host(server.url)
            live = simulate(server.url, env, "--jurors", str(args.jurors), "--rounds", "5", "--questions", "6")
            time.sleep(8)  # the bots are in and playing

            baseline = measured(host, server.url, lambda: time.sleep(10))

            pages = []

            def grading_page() -> None:  # the page itself, drawn in the server (five times)
                for _ in range(5):
                    pages.append(host.http.get(f"{server.url}/host/sessions/{first_id}/grading/", timeout=30).text)

            drawn = measured(host, server.url, grading_page)
            csrf = re.search(r'name="csrf_token" value="([^"]+)"', pages[-1]).group(1)

            def ask_judge() -> None:  # the button's request and the worker's run, not the page around them
                done = host.http.post(
                    f"{server.url}/host/sessions/{first_id}/grading/judge", data={"csrf_token": csrf}, timeout=30
                )
                assert done.status_code in (200, 302), done.status_code
                settled, last = 0, -1
                while settled < 3:  # until the suggestions stop growing for 3 s
                    time.sleep(1)
                    with db() as session:
                        count = session.scalar(select(func.count()).select_from(JudgeSuggestion))
                    settled = settled + 1 if count == last and count > 0 else 0
                    last = count

            judged = measured(host, server.url, ask_judge)
            with db() as session:
                suggestions = session.scalar(select(func.count()).select_from(JudgeSuggestion))

            heard = []

            def transcribe() -> None:
                for _ in range(args.transcripts):
                    started = time.perf_counter()
                    reply = host.http.post(
                        f"{server.url}/host/sessions/{first_id}/recordings/{name}/transcribe",
                        headers={"X-CSRFToken": csrf},
                        timeout=180,
                    ).json()
                    assert reply["ok"], reply
                    heard.append((time.perf_counter() - started, reply["text"]))

            transcribed = measured(host, server.url, transcribe)
            live.terminate()
            live.communicate(timeout=60)
    print(f"live session: {args.jurors} bot jurors, 5 players; judged session: {answers} answers")
    rows = [
        ("baseline (the live session alone, 10 s)", baseline),
        ("the grading page, drawn 5 times", drawn),
        (f"Ask the judge: {suggestions} suggestions", judged),
        (f"{args.transcripts} transcript suggestions (pocketsphinx)", transcribed),
    ]
    for label, (stall, poll, took) in rows:
        print(f"  {label}: max_stall_ms {stall:.1f}, slowest /healthz {poll:.0f} ms, over {took:.1f} s")
    seconds = sorted(s for s, _ in heard)
    print(f"  a transcript suggestion took {seconds[len(seconds) // 2]:.2f} s (median); heard: {heard[0][1]!r}")


if __name__ == "__main__":
    main()
