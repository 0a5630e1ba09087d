"""The servers the benchmarks load: a ``vtt`` process (``python run.py``, gevent) on a new database with bench
sessions in it, or the bare reference server (``bench/reference_server.py``), each started on a free port and
stopped on exit.  Shared by bench/bench_load.py, bench_soak.py, bench_cluster.py, bench_connect.py and
bench_displaced.py."""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEMO_BANK = ROOT / "vtt" / "sessions" / "demo" / "bank.csv"
ROUNDS = ("paced", "burst", "sheets")
REFERENCE_COOKIE = "vtt-bench-host=yes"
BENCH_PLAYERS = [
    {"name": "Mina", "kind": "human", "age": 10},
    {"name": "Grace", "kind": "human", "age": 31},
    {"name": "Agent", "kind": "ai"},
]

# --- servers ---------------------------------------------------------------------------------------


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Served:
    """A server process on 127.0.0.1 (its output in a file), stopped, then killed, on exit."""

    def __init__(self, command: list[str], env: dict[str, str], folder: Path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.command = [part.replace("{port}", str(self.port)) for part in command]
        self.env, self.log = env, folder / f"server-{self.port}.log"

    def __enter__(self) -> Served:
        self._out = self.log.open("w")
        self.process = subprocess.Popen(
            self.command, cwd=ROOT, env=self.env, stdout=self._out, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                self.health(reset=True)
                return self
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.__exit__()
                    raise SystemExit(f"the server did not come up:\n{self.log.read_text()[-3000:]}") from None
                time.sleep(0.2)

    def __exit__(self, *_exc) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
        self._out.close()

    def health(self, reset: bool = False) -> dict[str, Any]:
        asked = urllib.request.Request(f"{self.url}/healthz{'?reset=1' if reset else ''}", headers=self.host_headers())
        with urllib.request.urlopen(asked, timeout=10) as response:
            return json.load(response)

    def host_headers(self) -> dict[str, str]:
        """The host's API token as a Bearer header (only the host resets ``/healthz``'s figures), once the server has
        its secret key; none for the reference server (no host password)."""
        from vtt.access.host_token import host_token

        password = self.env.get("VTT_HOST_PASSWORD")
        kept = Path(self.env.get("VTT_INSTANCE_PATH") or ROOT / "instance") / "secret_key"
        secret = self.env.get("SECRET_KEY") or (kept.read_text().strip() if kept.exists() else "")
        return {"Authorization": f"Bearer {host_token(secret, password)}"} if password and secret else {}

    def stall_ms(self, reset: bool = False) -> float:
        body = self.health(reset)
        return (body.get("loop") or body)["max_stall_ms"]

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def memory_mib(self, key: str = "VmRSS") -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(re.search(rf"^{key}:\s+(\d+) kB", status, re.MULTILINE).group(1)) / 1024


@dataclass
class Target:
    """One server under test: how to start it, its jurors' tokens, the host's way in, and its record."""

    name: str
    command: list[str]
    env: dict[str, str]
    tokens: list[str]
    host_auth: dict[str, Any]
    folder: Path
    database_url: str | None = None
    session_id: int | None = None
    password: str | None = None

    def host_cookie(self, url: str) -> str:
        if self.password is None:
            return REFERENCE_COOKIE
        import requests

        with requests.Session() as http:
            page = http.get(f"{url}/host/login", timeout=10).text
            csrf = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
            signed_in = http.post(
                f"{url}/host/login",
                data={"password": self.password, "csrf_token": csrf},
                allow_redirects=False,
                timeout=10,
            )
            if signed_in.status_code != 302:
                raise SystemExit(f"host login failed: HTTP {signed_in.status_code}")
            return "; ".join(f"{name}={value}" for name, value in http.cookies.items())

    def recorded(self, number: int, host_reply: dict[str, Any]) -> dict[str, int]:
        """Votes and sheet lines the server holds for round ``number``: rows and logged events (vtt)."""
        if self.database_url is None:
            return {"votes": host_reply["votes_in_round"], "sheets": host_reply["sheets"]}
        from sqlalchemy import func, select

        from vtt.db import make_db_factory, make_engine
        from vtt.models import Event, SessionQuestion, SheetEntry, Vote

        engine = make_engine(self.database_url)
        try:
            with make_db_factory(engine)() as db:
                sid = self.session_id
                placed = select(SessionQuestion.id).where(
                    SessionQuestion.session_id == sid, SessionQuestion.round == number
                )
                votes = db.scalar(
                    select(func.count()).select_from(Vote).where(Vote.session_id == sid, Vote.round == number)
                )
                sheets = db.scalar(
                    select(func.count())
                    .select_from(SheetEntry)
                    .where(SheetEntry.session_id == sid, SheetEntry.session_question_id.in_(placed))
                )
                events = dict(
                    db.execute(
                        select(Event.kind, func.count())
                        .where(
                            Event.session_id == sid,
                            Event.kind.in_(["vote", "sheet"]),
                            Event.client_key.like(f"r{number}-%"),
                        )
                        .group_by(Event.kind)
                    ).all()
                )
            return {
                "votes": votes,
                "sheets": sheets,
                "vote_events": events.get("vote", 0),
                "sheet_events": events.get("sheet", 0),
            }
        finally:
            engine.dispose()


def migrated_server(folder: Path, database_url: str | None = None) -> tuple[str, str, dict[str, str], list[str]]:
    """A new SQLite file in ``folder`` (or the empty database at ``database_url``) migrated, and how to serve it with
    ``python run.py`` (gevent): its URL, the host's password, the server's environment and command."""
    url = database_url or f"sqlite:///{folder / 'bench.db'}"
    password = secrets.token_urlsafe(12)
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "VTT_INSTANCE_PATH": str(folder / "instance"),
        "VTT_HOST_PASSWORD": password,
        "VTT_ASYNC_MODE": "gevent",
    }
    for name in ("REDIS_URL", "VTT_AUDIT_LOG", "VTT_BASE_URL"):
        env.pop(name, None)
    subprocess.run(
        [str(Path(sys.executable).parent / "vtt"), "db", "upgrade"],
        env=env,
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=120,
    )
    return url, password, env, [sys.executable, "run.py", "--host", "127.0.0.1", "--port", "{port}"]


def bench_session(db, jurors: int, label: str, **settings: Any) -> tuple[Any, list[str]]:
    """A session of the demo bank (imported already) with Mina, Grace and the AI as players and ``jurors`` jurors
    labelled ``label.format(n)``, written in ``db``; the session created and its jurors' tokens."""
    from sqlalchemy import select

    from vtt.models import Juror
    from vtt.sessions.create import SessionConfig, create_session

    created = create_session(
        db, SessionConfig.from_dict({"bank": "Demo drama bank", "players": BENCH_PLAYERS, **settings})
    )
    db.add_all(
        Juror(session_id=created.id, label=label.format(n), token=secrets.token_urlsafe(12))
        for n in range(1, jurors + 1)
    )
    db.flush()
    return created, list(db.scalars(select(Juror.token).where(Juror.session_id == created.id)))


def vtt_target(jurors: int, folder: Path, database_url: str | None = None) -> Target:
    """A 3-round session of ``jurors`` jurors in a new SQLite file in ``folder``, or in the (empty) database at
    ``database_url`` (bench/bench_cluster.py's PostgreSQL)."""
    return vtt_targets(1, jurors, folder, database_url)[0]


def vtt_targets(sessions: int, jurors: int, folder: Path, database_url: str | None = None) -> list[Target]:
    """``sessions`` such sessions of ``jurors`` jurors each in one database, all served by the same server (its
    command and environment shared)."""
    from vtt.banks import import_bank, read_bank
    from vtt.db import make_db_factory, make_engine, transaction

    url, password, env, command = migrated_server(folder, database_url)
    targets = []
    engine = make_engine(url)
    try:
        with transaction(make_db_factory(engine)) as db:
            import_bank(db, read_bank(DEMO_BANK), "Demo drama bank")
            for n in range(1, sessions + 1):
                created, tokens = bench_session(
                    db,
                    jurors,
                    "J{:05d}",
                    name="Load bench" if n == 1 else f"Load bench {n}",
                    rounds=len(ROUNDS),
                    questions_per_round=2,
                    seed=7,
                    reveal_policy="end",
                )
                host_auth = {"code": created.join_code, "role": "host"}
                targets.append(Target("vtt", command, env, tokens, host_auth, folder, url, created.id, password))
    finally:
        engine.dispose()
    return targets


def reference_target(jurors: int, folder: Path) -> Target:
    tokens = [secrets.token_urlsafe(12) for _ in range(jurors)]
    token_file = folder / "tokens.txt"
    token_file.write_text("\n".join(tokens))
    command = [
        sys.executable,
        str(ROOT / "bench" / "reference_server.py"),
        "--port",
        "{port}",
        "--tokens",
        str(token_file),
        "--host-cookie",
        REFERENCE_COOKIE,
    ]
    return Target("reference", command, dict(os.environ), tokens, {"code": "BENCH", "role": "host"}, folder)
