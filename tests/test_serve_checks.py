"""What `vtt serve` checks before serving (gevent patched first, a psycopg that yields), and /healthz's queue."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import urllib.request

import click
import pytest

import vtt.serving.server
from tests.support.apps import host_api_token, login, threaded_app
from tests.support.paths import ROOT
from tests.support.served import ServedApp, free_port
from tests.support.waiting import wait_until
from vtt.extensions import socketio


def vtt_serve_after(imports: str, database_url: str) -> subprocess.CompletedProcess:
    """`vtt serve` run from a script that imports ``imports`` first, as a careless launcher would."""
    script = f"import {imports}\nfrom vtt.cli import main\nmain(['serve', '--port', '{free_port()}'])"
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": database_url, "VTT_ASYNC_MODE": "gevent"},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("imported", "named"), [("redis", "redis"), ("psycopg", "psycopg"), ("psycopg, redis", "redis, psycopg")]
)
def test_serve_refuses_when_redis_or_psycopg_came_before_the_patch(imported, named, database_url):
    result = vtt_serve_after(imported, database_url)
    assert result.returncode == 1, result.stdout + result.stderr
    # the last line (gevent warns before it about ssl, imported by redis too)
    assert result.stderr.strip().splitlines()[-1:] == [
        f"Error: {named} imported before gevent's monkey patch (each call would block every connection): "
        "serve with `vtt serve` or `python run.py`, or make `from gevent import monkey; monkey.patch_all()` "
        "the first lines of your own script"
    ]
    assert "Serving on" not in result.stdout


def test_redis_and_psycopg_imported_after_the_patch_pass_the_check():
    script = (
        "from gevent import monkey\nmonkey.patch_all()\nimport redis, psycopg, sqlalchemy, socketio\n"
        "from vtt.serving.server import PATCH_FIRST, check_patched_first, imported_before_the_patch\n"
        "check_patched_first()\nprint(imported_before_the_patch(PATCH_FIRST))"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stdout) == (0, "[]\n"), result.stderr


def test_serve_refuses_gevent_without_the_patch():
    """This test process never patched: serving it with gevent would block on every socket."""
    with pytest.raises(click.ClickException) as refused:
        vtt.serving.server.check_patched_first()
    assert refused.value.message == (
        "gevent has not monkey-patched socket, threading, select: serve with `vtt serve` or `python run.py`, "
        "which patch before anything else is imported"
    )


@pytest.mark.parametrize(
    ("version", "blocks"),
    [
        ("3.0.18", True),
        ("3.1.9", True),  # 9 < 14: compared as numbers, not text
        ("3.1.13", True),
        ("3.1.14", False),
        ("3.1.20", False),
        ("3.2.0.dev1", False),
        ("3.3.9", False),
        ("4", False),
    ],
)
def test_psycopg_releases_before_3_1_14_block_greenlets(version, blocks):
    assert vtt.serving.server.psycopg_blocks_greenlets(version) is blocks


def test_serve_refuses_an_old_psycopg_for_postgresql_only(monkeypatch):
    monkeypatch.setattr(vtt.serving.server.metadata, "version", {"psycopg": "3.1.13"}.__getitem__)
    with pytest.raises(click.ClickException) as refused:
        vtt.serving.server.check_psycopg("postgresql+psycopg://postgres@127.0.0.1:5432/vtt")
    assert refused.value.message == (
        "psycopg 3.1.13 blocks every connection while a query runs under gevent: "
        "install psycopg >= 3.1.14 (pip install 'psycopg[binary]>=3.1.14')"
    )
    vtt.serving.server.check_psycopg("sqlite:///instance/vtt.db")  # no psycopg involved: no complaint

    monkeypatch.setattr(vtt.serving.server.metadata, "version", {"psycopg": "3.1.14"}.__getitem__)
    vtt.serving.server.check_psycopg("postgresql+psycopg://postgres@127.0.0.1:5432/vtt")


def test_healthz_without_a_message_queue_reports_none(client):
    response = client.get("/healthz")
    assert (response.status_code, response.json["status"], response.json["queue"]) == (200, "ok", {"kind": "none"})


def test_a_served_process_reports_its_redis_listener_and_its_timers(database_url, redis_url):
    def health():
        with urllib.request.urlopen(f"{served.url}/healthz", timeout=10) as response:
            return response.status, json.load(response)

    with ServedApp({"DATABASE_URL": database_url, "REDIS_URL": redis_url}) as served:
        status, reply = health()
        # The writer starts with the server; on SQLite its one process runs the session timers from its first tick.
        timers = wait_until(lambda: health()[1]["timers"], timeout=10, message="the timers held")
    assert (status, reply["status"], reply["queue"]) == (200, "ok", {"kind": "redis", "listening": True})
    assert timers is True
    assert "Traceback" not in served.output, served.output


def test_healthz_answers_503_when_the_queue_listener_has_died(database_url, redis_url):
    app = threaded_app(database_url, REDIS_URL=redis_url)
    try:
        manager = socketio.server.manager
        stop = threading.Event()

        def listen_until_stopped():
            """Redis's listen() returning: python-socketio's listener logs it and ends, and nothing restarts it."""
            stop.wait(30)
            yield from ()

        manager._listen = listen_until_stopped
        vtt.serving.server.start_queue_listener(socketio.server)  # as `vtt serve` does
        client = app.test_client()
        alive = client.get("/healthz")
        assert (alive.status_code, alive.json["queue"]) == (200, {"kind": "redis", "listening": True})

        stop.set()
        wait_until(lambda: not manager.thread.is_alive(), timeout=10, message="the listener to end")
        dead = client.get("/healthz")
        assert (dead.status_code, dead.json["status"], dead.json["queue"]) == (
            503,
            "queue listener dead",
            {"kind": "redis", "listening": False},
        )
    finally:
        app.extensions["vtt.hub"].stop()


def test_only_the_host_resets_the_loop_s_worst_stall(app, client):
    """Found: ``GET /healthz?reset=1`` reset ``max_stall_ms`` for anyone, so an anonymous caller
    could wipe the operator's figure (a stall hidden by a reset a moment later).  An anonymous reset is refused
    (403) and the figure stays; the host's login or API token resets it."""
    watch = app.extensions["vtt.hub"].loop_watch
    watch.worst = 0.25  # a stall of 250 ms seen by this process
    refused = client.get("/healthz?reset=1")
    assert refused.status_code == 403, refused.json
    assert "host" in refused.json["error"] and "loop" not in refused.json
    assert client.get("/healthz").json["loop"]["max_stall_ms"] == 250.0  # the figure stays
    wrong = client.get("/healthz?reset=1", headers={"Authorization": "Bearer not-the-token"})
    assert wrong.status_code == 403 and watch.worst == 0.25

    by_token = client.get("/healthz?reset=1", headers={"Authorization": f"Bearer {host_api_token()}"})
    assert by_token.status_code == 200 and by_token.json["loop"]["max_stall_ms"] == 250.0  # the window it closed
    assert client.get("/healthz").json["loop"]["max_stall_ms"] < 250.0
    watch.worst = 0.25
    assert login(client).status_code == 302
    assert client.get("/healthz?reset=1").status_code == 200
    assert watch.worst < 0.25
