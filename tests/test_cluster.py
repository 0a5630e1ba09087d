"""Two ``vtt serve`` processes on one PostgreSQL database and Redis, behind nginx with deploy/nginx.conf (the file
docs/deploy.md shows): a whole session played through nginx, then the same state on every process.

Required when CI=true (PostgreSQL, Redis and Debian's nginx: scripts/system-deps.sh installs it)."""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import threading
import urllib.request
from pathlib import Path

import pytest
import socketio as socketio_client
from sqlalchemy import func, select

from tests.conftest import HOST_PASSWORD, IN_CI, ROOT, ServedApp, free_port
from tests.waiting import wait_until
from vtt.db import make_db_factory, make_engine, upgrade
from vtt.models import Event, Vote, VttSession

DEPLOY_CONFIG = ROOT / "deploy" / "nginx.conf"
DEPLOY_DOC = ROOT / "docs" / "deploy.md"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"  # /usr/sbin is not on every user's PATH
# A database of its own (flushed): other tests use 0.  Pub/sub channels are not per database, but every broadcast is
# addressed to a session's room, and this test's session lives in its own PostgreSQL database.
REDIS_URL = "redis://127.0.0.1:6379/3"
JURORS = 20


@pytest.fixture
def redis_url():
    import redis

    server = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
    try:
        server.flushdb()  # rate-limit counts left by an earlier run
    except redis.RedisError as exc:
        if IN_CI:
            pytest.fail(f"Redis is required when CI=true: {exc}")
        pytest.skip(f"no Redis at {REDIS_URL}: {exc}")
    yield REDIS_URL
    server.flushdb()


@pytest.fixture
def nginx_binary() -> str:
    if not os.access(NGINX, os.X_OK):
        if IN_CI:
            pytest.fail(f"nginx is required when CI=true (scripts/system-deps.sh installs it): no {NGINX}")
        pytest.skip("no nginx: install Debian's nginx (scripts/system-deps.sh) to run the cluster test")
    return NGINX


class Nginx:
    """nginx in the foreground with deploy/nginx.conf in front of ``backends`` (host:port), its files in ``folder``.

    The deploy file is included as it is; this writes only what it leaves to each installation: the main config
    (here: paths in ``folder``, no system files), vtt-upstream.conf and vtt-site.conf."""

    def __init__(self, binary: str, folder: Path, backends: list[str]):
        self.binary = binary
        self.folder = folder
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.access_log = folder / "access.log"
        self.output = ""
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "vtt-upstream.conf").write_text("".join(f"server {address};\n" for address in backends))
        (folder / "vtt-site.conf").write_text(f"listen 127.0.0.1:{self.port};\naccess_log {self.access_log} vtt;\n")
        temp = {name: folder / name for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")}
        # As root nginx would hand its workers to nobody, who cannot enter pytest's owner-only folders.
        user = "user root;\n" if os.geteuid() == 0 else ""
        (folder / "nginx.conf").write_text(
            f"{user}pid {folder / 'nginx.pid'};\n"
            f"error_log {folder / 'error.log'} notice;\n"
            "events { worker_connections 1024; }\n"
            "http {\n"
            + "".join(f"    {name}_temp_path {path};\n" for name, path in temp.items())
            + f"    include {DEPLOY_CONFIG};\n"
            "}\n"
        )

    def __enter__(self) -> Nginx:
        self.process = subprocess.Popen(
            [self.binary, "-p", str(self.folder), "-e", str(self.folder / "error.log"), "-c", "nginx.conf"]
            + ["-g", "daemon off;"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            wait_until(
                lambda: self.process.poll() is not None or answers(f"{self.url}/healthz"),
                timeout=15,
                interval=0.1,
                message="nginx to answer /healthz",
            )
        except AssertionError:
            pass  # not answering: stopped and reported with its log below, as when it has exited
        if self.process.poll() is None and answers(f"{self.url}/healthz"):
            return self
        self.__exit__(None, None, None)
        raise RuntimeError(f"nginx did not come up:\n{self.output}")

    def __exit__(self, *_exc) -> None:
        self.process.terminate()
        output, _ = self.process.communicate(timeout=10)
        error_log = self.folder / "error.log"
        self.output = output + (error_log.read_text() if error_log.exists() else "")

    def upstreams_used(self) -> set[str]:
        """The processes that answered a request, from the access log (deploy/nginx.conf's ``vtt`` format)."""
        tried = re.findall(r"upstream=(.+?) route=", self.access_log.read_text())  # "a, b" when a failed
        return {address for addresses in tried for address in addresses.split(", ")}


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def stage_snapshot(url: str, code: str, transports: list[str], **connect) -> dict:
    """The snapshot a stage connected to ``url`` receives (then one more asked for, as a page does after a gap)."""
    client = socketio_client.Client(reconnection=False)
    received = threading.Event()
    first: dict = {}
    client.on("snapshot", lambda snapshot: (first.update(snapshot), received.set()))
    client.connect(url, auth={"code": code, "role": "stage"}, transports=transports, wait_timeout=10, **connect)
    try:
        assert received.wait(10), f"no snapshot from {url}"
        asked = client.call("snapshot", timeout=10)
    finally:
        client.disconnect()
    assert asked["ok"] and asked["snapshot"]["state_version"] == first["state_version"], (asked, first)
    return first


def simulate_through(url: str, timeout: int) -> dict:
    """``vtt simulate --new --drive --json`` as a command, against ``url``; its one JSON object."""
    result = subprocess.run(
        [
            str(ROOT / ".venv" / "bin" / "vtt"),
            "simulate",
            "--url",
            url,
            "--new",
            "--jurors",
            str(JURORS),
            "--players",
            "2",
            "--rounds",
            "2",
            "--questions",
            "2",
            "--pace",
            "0.1",
            "--seed",
            "4",
            "--timeout",
            str(timeout),
            "--drive",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=timeout + 30,
    )
    assert result.returncode == 0, (result.stdout, result.stderr[-4000:])
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_docs_show_the_nginx_config_the_test_runs():
    assert f"```nginx\n{DEPLOY_CONFIG.read_text()}```" in DEPLOY_DOC.read_text()


@pytest.mark.postgres
@pytest.mark.slow
def test_a_session_played_through_nginx_on_two_processes_agrees_everywhere(
    postgres_url, redis_url, nginx_binary, tmp_path, monkeypatch
):
    upgrade(postgres_url)
    # What every process and `vtt simulate` (the host bot's API token) must share; docs/deploy.md's vtt.env.
    shared = {
        "DATABASE_URL": postgres_url,
        "SECRET_KEY": secrets.token_hex(32),
        "VTT_HOST_PASSWORD": HOST_PASSWORD,
    }
    for name, value in shared.items():
        monkeypatch.setenv(name, value)
    served = {"REDIS_URL": redis_url, "VTT_TRUSTED_PROXIES": "1"}
    with ServedApp(served) as first, ServedApp(served) as second:
        backends = [f"127.0.0.1:{first.port}", f"127.0.0.1:{second.port}"]
        with Nginx(nginx_binary, tmp_path / "nginx", backends) as nginx:
            figures = simulate_through(nginx.url, timeout=120)
            # The bots (websocket only, no cookie kept between them) were spread over both processes.
            assert nginx.upstreams_used() == set(backends), nginx.access_log.read_text()[-2000:]
            # A page falling back to long-polling: many requests for one Socket.IO session, each routed by the
            # vtt_route cookie nginx set on the first (requests keeps it) to the process holding that session;
            # the Origin a browser sends matches the host nginx passes on.
            polled = stage_snapshot(nginx.url, figures["session"], ["polling"], headers={"Origin": nginx.url})
            snapshots = [stage_snapshot(process.url, figures["session"], ["websocket"]) for process in (first, second)]
        assert "emerg" not in nginx.output and "[alert]" not in nginx.output, nginx.output

    for process in (first, second):
        assert "Traceback" not in process.output, process.output
    assert (figures["phase"], figures["errors"], figures["jurors"], figures["rounds"]) == ("finished", 0, JURORS, 2)
    for kind in ("votes", "sheets", "answers"):
        assert figures[f"{kind}_acked"] == figures[f"{kind}_recorded"] > 0, (kind, figures)

    on_first, on_second = snapshots
    for snapshot in (on_first, on_second, polled):
        assert snapshot["status"]["phase"] == "finished"
        assert [tally["round"] for tally in snapshot["tallies"]] == [1, 2]
        for tally in snapshot["tallies"]:
            assert sum(row["votes"] for row in tally["votes"]) == tally["cast"] > 0
            assert tally["cast"] + tally["abstentions"] == JURORS
    # The same version, tallies and reveals from each process, and through nginx.
    for key in ("state_version", "status", "tallies", "identities"):
        assert on_first[key] == on_second[key] == polled[key], key
    # ... and the same as the votes in the database, alias by alias.
    assert [
        {row["alias"]: row["votes"] for row in tally["votes"] if row["votes"]} for tally in on_first["tallies"]
    ] == (recorded_votes(postgres_url, figures["session"]))
    # Every player answered every question it played before answering closed: the host bot closed it, no deadline
    # did (a player whose snapshot came back older than events it had applied once sat out a question to its end).
    assert deadline_events(postgres_url, figures["session"]) == []


def recorded_votes(url: str, code: str) -> list[dict[str, int]]:
    """Per round, the votes for each alias in the database (abstentions left out)."""
    engine = make_engine(url)
    try:
        with make_db_factory(engine)() as db:
            rows = db.execute(
                select(Vote.round, Vote.alias, func.count())
                .join(VttSession, VttSession.id == Vote.session_id)
                .where(VttSession.join_code == code, Vote.player_id.is_not(None))
                .group_by(Vote.round, Vote.alias)
                .order_by(Vote.round, Vote.alias)
            ).all()
    finally:
        engine.dispose()
    rounds: dict[int, dict[str, int]] = {}
    for round_number, alias, votes in rows:
        rounds.setdefault(round_number, {})[alias] = votes
    return [rounds[number] for number in sorted(rounds)]


def deadline_events(url: str, code: str) -> list[dict]:
    """The phases a deadline closed in the session (its event log's ``deadline`` rows)."""
    engine = make_engine(url)
    try:
        with make_db_factory(engine)() as db:
            return list(
                db.scalars(
                    select(Event.payload)
                    .join(VttSession, VttSession.id == Event.session_id)
                    .where(VttSession.join_code == code, Event.kind == "deadline")
                )
            )
    finally:
        engine.dispose()
