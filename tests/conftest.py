"""Fixtures: each test gets a fresh instance folder, a migrated database and an app on it.

The helpers these fixtures are built from, and those the tests import, are in tests/support/.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from tests.support import postgres_reach
from tests.support.apps import HOST_PASSWORD, login, threaded_app
from tests.support.machine import POSTGRES_ADMIN_URL, REDIS_URL, require_poppler, unavailable
from tests.support.nginx import NGINX
from tests.support.served import ServedApp
from vtt.db import make_db_factory, make_engine, upgrade

LEFT_OUT: list = []  # the tests deselected in this run


def pytest_configure(config) -> None:
    postgres_reach.install()  # count what the tests reach on PostgreSQL (tests/test_postgres_reach.py)


def pytest_deselected(items) -> None:
    LEFT_OUT.extend(items)


def pytest_collection_finish(session) -> None:
    """Whether this run is the whole suite: every test file of tests/, nothing deselected (-k, -m)."""
    tests = Path(__file__).parent.resolve()
    chosen = [Path(str(arg).split("::")[0]).resolve() for arg in session.config.args]
    session.config.stash[postgres_reach.WHOLE_RUN] = not LEFT_OUT and chosen == [tests]


def pytest_collection_modifyitems(items) -> None:
    """``slow``: a test that starts a server process (``ServedApp``, the ``served`` fixture) or a fuzz module;
    ``make test-quick`` leaves them out, ``make test`` runs everything.  The count of what the run reached on
    PostgreSQL goes last."""
    import inspect

    items.sort(key=lambda item: item.nodeid.endswith(postgres_reach.LAST))

    for item in items:
        function = getattr(item, "function", None)
        source = inspect.getsource(function) if function is not None else ""
        if (
            "ServedApp(" in source
            or "served" in getattr(item, "fixturenames", ())
            or item.module.__name__.startswith("tests.test_fuzz_")
            or item.module.__name__.endswith(("test_live_server", "test_simulate"))
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


EACH_DATABASE = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


def pytest_generate_tests(metafunc) -> None:
    """A test marked ``each_database`` (or in a module so marked) runs once on each database: its ``database_url``,
    and the ``app``, ``client``, ``host``, ``db_factory`` and ``run`` on it, are SQLite's (``[sqlite]``) then
    PostgreSQL's (``[postgresql]``)."""
    if (
        metafunc.definition.get_closest_marker("each_database")
        and "database_url" in metafunc.fixturenames
        and "database_kind" not in metafunc.fixturenames
    ):
        metafunc.parametrize("database_url", EACH_DATABASE, indirect=True)


@pytest.fixture
def database_url(migrated_template, instance, monkeypatch, request) -> str:
    """This test's migrated database: a copy of the migrated SQLite file, or under ``each_database`` a fresh
    PostgreSQL database too; DATABASE_URL names it."""
    instance.mkdir(parents=True, exist_ok=True)
    if getattr(request, "param", "sqlite") == "postgresql":
        url = request.getfixturevalue("migrated_postgres_url")
    else:
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
    app = threaded_app(database_url)
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


@pytest.fixture
def host(client):
    assert login(client).status_code == 302
    return client


@pytest.fixture
def postgres_url():
    """A brand-new PostgreSQL database for one test, dropped afterwards (required when CI=true)."""
    yield from _postgres_database()


@pytest.fixture(scope="session")
def migrated_postgres_template():
    """A PostgreSQL database migrated once per run, which each test's migrated database copies (CREATE DATABASE
    ... TEMPLATE takes a quarter of a second; running the migrations, more than a second a test)."""
    for url in _postgres_database("vtt_template_"):
        upgrade(url)
        yield url.rsplit("/", 1)[1]


@pytest.fixture
def migrated_postgres_url(migrated_postgres_template):
    """A PostgreSQL database at the migrations' head for one test, dropped afterwards."""
    yield from _postgres_database(template=migrated_postgres_template)


def _postgres_database(prefix: str = "vtt_test_", template: str | None = None):
    """A new PostgreSQL database (a copy of ``template`` when given) while the generator runs, then dropped."""
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    name = f"{prefix}{uuid.uuid4().hex[:10]}"
    try:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else "")))
    except Exception as exc:
        admin.dispose()
        unavailable(f"no PostgreSQL at {POSTGRES_ADMIN_URL}: {exc}")
    url = POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    yield url
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_kind(request) -> str:
    """Each database vtt runs on: a test that takes this, or a fixture below, runs once on each (``[sqlite]``,
    ``[postgresql]``; PostgreSQL is required when CI=true)."""
    return request.param


@pytest.fixture
def empty_database_url(database_kind, tmp_path, request) -> str:
    """A database without any table yet, on each database: what the migrations start from."""
    if database_kind == "sqlite":
        return f"sqlite:///{tmp_path / 'empty.db'}"
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def migrated_database_url(database_kind, request, monkeypatch) -> str:
    """This test's migrated database, on each database; DATABASE_URL names it (for ``run`` and a served app)."""
    if database_kind == "sqlite":
        return request.getfixturevalue("database_url")
    url = request.getfixturevalue("migrated_postgres_url")
    monkeypatch.setenv("DATABASE_URL", url)
    return url


@pytest.fixture
def backend(migrated_database_url):
    """(app, db_factory) on each database."""
    app = threaded_app(migrated_database_url)
    engine = make_engine(migrated_database_url)
    yield app, make_db_factory(engine)
    app.extensions["vtt.hub"].stop()
    engine.dispose()


@pytest.fixture
def redis_url():
    """Redis for the tests of several processes (required when CI=true), emptied before and after."""
    import redis

    server = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
    try:
        server.flushdb()
    except redis.RedisError as exc:
        unavailable(f"no Redis at {REDIS_URL}: {exc}")
    yield REDIS_URL
    server.flushdb()


@pytest.fixture
def nginx_binary() -> str:
    if not os.access(NGINX, os.X_OK):
        unavailable(f"no {NGINX}: install Debian's nginx (scripts/system-deps.sh) to run the cluster test")
    return NGINX


@pytest.fixture
def poppler() -> None:
    """poppler-utils, which reads the PDFs back (required when CI=true)."""
    require_poppler()


@pytest.fixture
def lan_address(monkeypatch) -> str:
    """This machine's LAN address, as ``vtt.netaddr`` finds it, is 192.168.7.23 for the test."""
    import vtt.netaddr

    monkeypatch.setattr(vtt.netaddr, "lan_address", lambda: "192.168.7.23")
    return "192.168.7.23"


@pytest.fixture
def threaded_serving(monkeypatch) -> None:
    """``vtt serve`` (vtt.serving.server) builds its app in threading mode: no gevent in the test process."""
    import vtt.serving.server
    from vtt.app import create_app

    monkeypatch.setattr(
        vtt.serving.server,
        "create_app",
        lambda overrides: create_app({**overrides, "SOCKETIO_ASYNC_MODE": "threading"}),
    )


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium through Playwright (required when CI=true), one per test module."""
    from tests.support.browser import launched_chromium

    with launched_chromium() as chromium:
        yield chromium


@pytest.fixture
def served_env() -> dict[str, str]:
    """More environment for the ``served`` app: a test module overrides this fixture (e.g. with its media folder)."""
    return {}


@pytest.fixture
def served(database_url, served_env):
    """``python run.py`` (gevent) on this test's database; no traceback in its output by the end."""
    with ServedApp({"DATABASE_URL": database_url, **served_env}) as app:
        yield app
    assert "Traceback" not in app.output, app.output


@pytest.fixture(scope="session", params=["firefox", "webkit"])
def engine_browser(request):
    """Firefox ESR or WebKitGTK (tests/support/browser_engines.py), started once per test run (required when
    CI=true)."""
    from tests.support.browser_engines import EngineUnavailable, start_engine

    try:
        browser = start_engine(request.param)
    except EngineUnavailable as exc:
        unavailable(str(exc))
    yield browser
    browser.quit()


class EnginePages:
    """A test's pages in one engine, each fresh, all closed when the test ends."""

    def __init__(self, browser):
        self.browser = browser
        self.name = browser.engine
        self.pages = []

    def new_page(self, viewport: dict):
        page = self.browser.new_page(viewport["width"], viewport["height"])
        self.pages.append(page)
        return page

    def close(self) -> None:
        for page in self.pages:
            page.close()


@pytest.fixture
def engine(engine_browser):
    """``engine.new_page(PHONE)``: a fresh page of this test's engine (``engine.name``: "firefox" or "webkit")."""
    pages = EnginePages(engine_browser)
    yield pages
    pages.close()
