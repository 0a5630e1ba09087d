"""What the cluster tests share: their own Redis, processes whose log is read as they run, bots placed on a process
or routed by session, and what they read back from the database and ``/healthz``."""

from __future__ import annotations

import re
import secrets
import subprocess
import threading
import urllib.error
import urllib.request
from pathlib import Path

import socketio as socketio_client
from sqlalchemy import select

from tests.support.apps import HOST_PASSWORD, host_api_token
from tests.support.live import People
from tests.support.nginx import Nginx
from tests.support.served import ServedApp, free_port
from tests.support.waiting import wait_until, wait_until_async
from vtt.client.connection import Connection, Ledger
from vtt.db import make_db_factory, make_engine, upgrade
from vtt.models import Event, VttSession


def stage_snapshot(url: str, code: str, transports: list[str], **connect) -> dict:
    """The snapshot a stage connected to ``url`` receives (then one more asked for, as a page does after a gap); the
    host's API token opens the stage (the join code alone does not)."""
    client = socketio_client.Client(reconnection=False)
    received = threading.Event()
    first: dict = {}
    client.on("snapshot", lambda snapshot: (first.update(snapshot), received.set()))
    auth = {"code": code, "role": "stage", "host_token": host_api_token()}
    client.connect(url, auth=auth, transports=transports, wait_timeout=10, **connect)
    try:
        assert received.wait(10), f"no snapshot from {url}"
        asked = client.call("snapshot", timeout=10)
    finally:
        client.disconnect()
    assert asked["ok"] and asked["snapshot"]["state_version"] == first["state_version"], (asked, first)
    return first


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


class OwnRedis:
    """A Redis server of this test's own on a free port, so that it can be stopped and started again mid-round
    without touching the machine's (which other tests use)."""

    def __init__(self, folder: Path):
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    def start(self) -> None:
        command = ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no"]
        command += ["--dir", str(self.folder), "--daemonize", "yes", "--logfile", str(self.folder / "redis.log")]
        subprocess.run(command, check=True, timeout=10)
        wait_until(self.answers, timeout=10, message="Redis to start")

    def stop(self) -> None:
        self._cli("shutdown", "nosave")
        wait_until(lambda: not self.answers(), timeout=10, message="Redis to stop")

    def answers(self) -> bool:
        return self._cli("ping") == "PONG"

    def _cli(self, *command: str) -> str:
        done = subprocess.run(["redis-cli", "-p", str(self.port), *command], capture_output=True, text=True, timeout=10)
        return done.stdout.strip()

    def __enter__(self) -> OwnRedis:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.answers():
            self.stop()


class WatchedApp(ServedApp):
    """``ServedApp`` whose output is read while it runs (``log()``): what a live process has said so far."""

    def __init__(self, env: dict[str, str]):
        super().__init__(env)
        self._lines: list[str] = []
        self._reader: threading.Thread | None = None

    def __enter__(self) -> WatchedApp:
        super().__enter__()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        return self

    def _read(self) -> None:
        for line in self.process.stdout:
            self._lines.append(line)

    def log(self) -> str:
        return "".join(self._lines)

    def kill(self) -> None:
        """``kill -9``: no handler runs, the process's sockets (clients, PostgreSQL, Redis) just close."""
        self.process.kill()
        self.process.wait(timeout=10)

    def __exit__(self, *exc) -> None:
        if self._reader is None:  # never came up: ServedApp reports its output
            super().__exit__(*exc)
            return
        self.process.terminate()  # nothing when already killed
        self.process.wait(timeout=10)
        self._reader.join(timeout=10)
        self.output = self.log()


class Client(Connection):
    """A bot's connection through nginx to the process its ``vtt_route`` cookie picks (it reopens itself and resends
    until acknowledged); keeps the ids of its acknowledged actions and counts the snapshots it asked for."""

    def __init__(self, url: str, auth: dict, route: str, name: str, session: str | None = None):
        super().__init__(url, auth, Ledger(), name, headers={"Cookie": f"vtt_route={route}"}, route=session)
        self.by_session = session is not None
        self.acked: list[str] = []
        self.resyncs = 0  # snapshots asked for after a missed event (or a snapshot older than an event)
        self.heard: list[tuple] = []  # (event, state_version, prev_version, version known after): for failures
        self._last_id = ""

    async def _on_event(self, event: str, payload=None) -> None:
        await super()._on_event(event, payload)
        if isinstance(payload, dict):
            self.heard.append((event, payload.get("state_version"), payload.get("prev_version"), self.view.known))

    def routed_url(self) -> str:
        """Placed by its cookie unless given its ``session`` (routed by it, as the pages and bots are): the failure
        tests split one session over processes on purpose."""
        return super().routed_url() if self.by_session else self.url

    def new_id(self) -> str:
        self._last_id = super().new_id()
        return self._last_id

    async def act(self, event: str, payload: dict) -> dict:
        reply = await self.send(event, payload)
        assert reply is not None, (self.id_prefix, event, payload, self.last_error)
        self.acked.append(self._last_id)
        return reply

    async def host(self, action: str, **args) -> dict:
        return await self.act("host", {"action": action, **args})

    async def resync(self) -> None:
        self.resyncs += 1
        await super().resync()
        self.heard.append(("resynced", self.view.known, None, self.view.known))

    @property
    def sid(self) -> str | None:
        return self._client.sid if self._client is not None else None


def routes_to(nginx: Nginx, backends: list[str]) -> dict[str, str]:
    """A ``vtt_route`` cookie value per backend: nginx hashes the cookie, so a client sending it lands there (found
    by asking, from the access log: the hash is nginx's)."""
    routes: dict[str, str] = {}
    for number in range(200):
        request = urllib.request.Request(f"{nginx.url}/healthz", headers={"Cookie": f"vtt_route=probe{number}"})
        with urllib.request.urlopen(request, timeout=5):
            pass
        served = dict(
            (route, upstream)
            for upstream, route in re.findall(r"upstream=(\S+) route=(\S+)", nginx.access_log.read_text())
        )
        routes = {upstream: route for route, upstream in served.items() if route.startswith("probe")}
        if set(routes) == set(backends):
            return routes
    raise AssertionError(f"no route to some of {backends}: {routes}")


def cluster_env(postgres_url: str, redis_url: str, monkeypatch) -> dict[str, str]:
    """What every process and this test (the host's token, the session) share; docs/deploy.md's vtt.env."""
    upgrade(postgres_url)
    for name, value in {
        "DATABASE_URL": postgres_url,
        "SECRET_KEY": secrets.token_hex(32),
        "VTT_HOST_PASSWORD": HOST_PASSWORD,
    }.items():
        monkeypatch.setenv(name, value)
    return {"REDIS_URL": redis_url, "VTT_TRUSTED_PROXIES": "1"}


def seat(url: str, people: People, routes: dict[str, str]) -> tuple[Client, dict[str, Client], dict[str, Client]]:
    """The host, players (by name) and jurors (by label) of ``people``, each with the route ``routes`` gives its
    name ("host" for the host); a client's name is its ids' prefix."""
    host = Client(url, {"code": people.code, "role": "host", "host_token": host_api_token()}, routes["host"], "host")
    players = {name: Client(url, {"token": token}, routes[name], name) for name, token in people.players.items()}
    jurors = {label: Client(url, {"token": token}, routes[label], label) for label, token in people.jurors.items()}
    return host, players, jurors


def answer_to(question: dict) -> dict:
    if question["type"] == "mcq":
        return {"question": question["id"], "choice": 0}
    return {"question": question["id"], "text": "a cat, I think"}


def sheet_lines(juror: Client, note: str) -> dict:
    """A line about every revealed answer in the juror's view."""
    lines = [
        {"question": shown["question"], "alias": answer["alias"], "note": note, "human_likeness": 3}
        for shown in juror.view.data.get("revealed", [])
        for answer in shown["answers"]
    ]
    assert lines, juror.view.data
    return {"lines": lines}


async def all_see(clients, condition, message: str, timeout: float = 15) -> None:
    await wait_until_async(lambda: all(condition(client) for client in clients), timeout=timeout, message=message)


def recorded_keys(url: str, code: str) -> set[str]:
    """The client ids of the session's event log: every action that was saved."""
    engine = make_engine(url)
    try:
        with make_db_factory(engine)() as db:
            return set(
                db.scalars(
                    select(Event.client_key)
                    .join(VttSession, VttSession.id == Event.session_id)
                    .where(VttSession.join_code == code, Event.client_key.is_not(None))
                )
            )
    finally:
        engine.dispose()


def session_upstreams(nginx: Nginx, code: str) -> set[str]:
    """The processes nginx sent the Socket.IO requests naming session ``code`` to."""
    return set(re.findall(rf"upstream=(\S+) route=session:{code}\b", nginx.access_log.read_text()))
