"""Fixtures: each test gets a fresh instance folder, a migrated database and an app on it."""

from __future__ import annotations

import os
import re
import shutil
import uuid
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from vtt.app import create_app
from vtt.db import make_db_factory, make_engine, upgrade

DATA = Path(__file__).parent / "data"
HOST_PASSWORD = "correct horse battery"
POSTGRES_ADMIN_URL = os.environ.get("VTT_TEST_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def pytest_collection_modifyitems(items) -> None:
    """``slow``: a test that starts a server process (``ServedApp``, the ``served`` fixture) or a fuzz module;
    ``make test-quick`` leaves them out, ``make test`` runs everything."""
    import inspect

    for item in items:
        function = getattr(item, "function", None)
        source = inspect.getsource(function) if function is not None else ""
        if (
            "ServedApp(" in source
            or "served" in getattr(item, "fixturenames", ())
            or item.module.__name__.endswith(("test_fuzz", "test_live_server", "test_simulate"))
        ):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def instance(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "instance"
    monkeypatch.setenv("VTT_INSTANCE_PATH", str(folder))
    monkeypatch.setenv("VTT_HOST_PASSWORD", HOST_PASSWORD)
    monkeypatch.setenv("VTT_ASYNC_MODE", "threading")
    for name in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY"):
        monkeypatch.delenv(name, raising=False)
    return folder


@pytest.fixture(scope="session")
def migrated_template(tmp_path_factory) -> Path:
    """Migrations run once per test run; every test copies the migrated file (fast and still real)."""
    path = tmp_path_factory.mktemp("template") / "vtt.db"
    upgrade(f"sqlite:///{path}")
    return path


@pytest.fixture
def database_url(migrated_template, instance, monkeypatch) -> str:
    instance.mkdir(parents=True, exist_ok=True)
    path = instance / "vtt.db"
    shutil.copy(migrated_template, path)
    url = f"sqlite:///{path}"
    monkeypatch.setenv("DATABASE_URL", url)
    return url


@pytest.fixture
def db_factory(database_url):
    engine = make_engine(database_url)
    yield make_db_factory(engine)
    engine.dispose()


@pytest.fixture
def db(db_factory):
    with db_factory() as db:
        yield db


@pytest.fixture
def app(database_url):
    app = create_app({"TESTING": True, "DATABASE_URL": database_url, "SOCKETIO_ASYNC_MODE": "threading"})
    yield app
    app.extensions["vtt.hub"].stop()  # the writer thread of this app


@pytest.fixture
def run(database_url):
    """``run("questions", "list")``: the vtt command line on this test's database."""
    from click.testing import CliRunner

    from vtt.cli import main

    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(main, list(args), catch_exceptions=False)

    return invoke


@pytest.fixture
def client(app):
    return app.test_client()


def form_token(client, path: str = "/host/login") -> str:
    """The CSRF token a page's forms carry (Flask-WTF's, signed)."""
    page = client.get(path).get_data(as_text=True)
    return re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)


def login(client, password: str = HOST_PASSWORD):
    return client.post("/host/login", data={"password": password, "csrf_token": form_token(client)})


def host_api_token() -> str:
    """The host's API token of this test's instance (the one a server started by the test accepts)."""
    from vtt.access.host_token import host_token
    from vtt.config import Settings

    settings = Settings.from_env()
    return host_token(settings.secret_key, settings.host_password)


@pytest.fixture
def host(client):
    assert login(client).status_code == 302
    return client


@pytest.fixture
def postgres_url():
    """A brand-new PostgreSQL database for one test, dropped afterwards (required when CI=true)."""
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    name = f"vtt_test_{uuid.uuid4().hex[:10]}"
    try:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # noqa: BLE001 - any connection failure means "no server here"
        admin.dispose()
        if IN_CI:
            pytest.fail(f"PostgreSQL is required when CI=true: {exc}")
        pytest.skip(f"no PostgreSQL at {POSTGRES_ADMIN_URL}: {exc}")
    url = POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    yield url
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ServedApp:
    """``python run.py`` in a subprocess (gevent, as in production), stopped on exit; ``.output`` after."""

    def __init__(self, env: dict[str, str]):
        self.env = {**os.environ, "VTT_ASYNC_MODE": "gevent", **env}
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.output = ""

    def __enter__(self) -> ServedApp:
        import subprocess
        import sys

        from tests.waiting import wait_until

        self.process = subprocess.Popen(
            [sys.executable, "run.py", "--port", str(self.port)],
            env=self.env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            wait_until(
                lambda: self.process.poll() is not None or self._answers(),
                timeout=30,
                interval=0.2,
                message="the server to answer /healthz",
            )
            if self.process.poll() is None:
                return self
        except AssertionError:
            pass  # still not answering: stopped and reported with its output, as when it has exited
        self.__exit__(None, None, None)
        raise RuntimeError(f"server did not come up:\n{self.output}")

    def _answers(self) -> bool:
        import urllib.request

        try:
            with urllib.request.urlopen(f"{self.url}/healthz", timeout=2):
                return True
        except OSError:
            return False

    def __exit__(self, *_exc) -> None:
        self.process.terminate()
        self.output, _ = self.process.communicate(timeout=10)


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium through Playwright (required when CI=true), one per test module."""
    from playwright.sync_api import sync_playwright

    from tests.browser_helpers import CHROMIUM, CHROMIUM_ARGS, TestBrowser

    if not os.path.exists(CHROMIUM):
        if IN_CI:
            pytest.fail(f"{CHROMIUM} is required when CI=true (make test installs it)")
        pytest.skip(f"no {CHROMIUM}: install Debian's chromium to run the browser tests")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield TestBrowser(chromium)
        chromium.close()


@pytest.fixture
def served(database_url):
    """``python run.py`` (gevent) on this test's database; no traceback in its output by the end."""
    with ServedApp({"DATABASE_URL": database_url}) as app:
        yield app
    assert "Traceback" not in app.output, app.output


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def backend(request, database_url):
    """(app, db_factory) on SQLite, and on PostgreSQL too (required when CI=true)."""
    url = database_url
    if request.param == "postgresql":
        url = request.getfixturevalue("postgres_url")
        upgrade(url)
    app = create_app({"TESTING": True, "DATABASE_URL": url, "SOCKETIO_ASYNC_MODE": "threading"})
    engine = make_engine(url)
    yield app, make_db_factory(engine)
    app.extensions["vtt.hub"].stop()
    engine.dispose()


# A database of its own on the machine's Redis: the tests flush it (rate-limit counts, presence left by a run).
REDIS_URL = "redis://127.0.0.1:6379/3"


@pytest.fixture
def redis_url():
    """Redis for the tests of several processes (required when CI=true), emptied before and after."""
    import redis

    server = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
    try:
        server.flushdb()
    except redis.RedisError as exc:
        if IN_CI:
            pytest.fail(f"Redis is required when CI=true: {exc}")
        pytest.skip(f"no Redis at {REDIS_URL}: {exc}")
    yield REDIS_URL
    server.flushdb()
