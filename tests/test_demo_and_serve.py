"""What `make run` does: migrate, load the demo twice (no duplicates), serve with gevent."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import urllib.request

from click.testing import CliRunner
from sqlalchemy import func, select

from tests.support.apps import HOST_PASSWORD
from tests.support.paths import ROOT
from tests.support.served import ServedApp, free_port
from vtt.cli import main
from vtt.db import head_revision
from vtt.models import Player, PlayerKind, Question, QuestionBank, SessionQuestion, VttSession


def test_demo_loads_once(database_url, db):
    runner = CliRunner()
    first = runner.invoke(main, ["demo", "load"], catch_exceptions=False).output
    second = runner.invoke(main, ["demo", "load"], catch_exceptions=False).output
    assert "demo bank 'Demo drama bank': 30 questions imported" in first
    assert "demo session 'Demo VTT session': created, join code" in first
    assert "demo bank 'Demo drama bank': already there" in second
    assert "demo session 'Demo VTT session': already there" in second
    assert db.scalar(select(func.count()).select_from(QuestionBank)) == 1
    assert db.scalar(select(func.count()).select_from(Question)) == 30
    assert db.scalar(select(func.count()).select_from(VttSession)) == 1
    session = db.scalar(select(VttSession))
    assert (session.rounds, session.questions_per_round, session.seed) == (5, 6, 2021)
    assert [r.theme for r in session.round_states][0] == "emotion recognition"
    kinds = db.scalars(select(Player.kind).where(Player.session_id == session.id)).all()
    assert kinds.count(PlayerKind.AI) == 1 and kinds.count(PlayerKind.HUMAN) == 4
    # The demo bank's round column fills every round, so the session keeps it.
    placed = db.execute(
        select(SessionQuestion.round, Question.suggested_round).join(
            Question, SessionQuestion.question_id == Question.id
        )
    ).all()
    assert len(placed) == 30 and all(r == suggested for r, suggested in placed)


def test_run_py_serves_with_gevent(tmp_path, instance):
    env = {"DATABASE_URL": f"sqlite:///{tmp_path / 'served.db'}"}
    for step in (["db", "upgrade"], ["demo", "load"]):
        subprocess.run(
            [sys.executable, "-m", "vtt.cli", *step],
            env={**os.environ, **env},
            check=True,
            capture_output=True,
            timeout=120,
            cwd=ROOT,
        )
    with ServedApp(env) as served:
        with urllib.request.urlopen(f"{served.url}/host/login", timeout=5) as response:
            assert b"Host login" in response.read()
        # Engine.IO answers its handshake: the websocket server is there.
        with urllib.request.urlopen(f"{served.url}/socket.io/?EIO=4&transport=polling", timeout=5) as response:
            assert b'"sid"' in response.read()
    assert f"Host password: {HOST_PASSWORD}" in served.output
    assert f"Host console: {served.url}/host/login" in served.output
    assert "(gevent, gevent)" in served.output


def test_serving_an_unmigrated_database_says_what_to_do(tmp_path):
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'empty.db'}", "VTT_ASYNC_MODE": "gevent"}
    result = subprocess.run(
        [sys.executable, "run.py", "--port", "1"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1
    assert (
        f"the database is at revision base (empty), this code needs {head_revision()}: run `vtt db upgrade` first"
    ) in result.stderr


def test_a_busy_port_is_one_line_not_a_traceback(database_url):
    env = {**os.environ, "VTT_ASYNC_MODE": "gevent"}  # VTT_INSTANCE_PATH and DATABASE_URL come from the fixtures
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "run.py", "--port", str(port)],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode != 0
    assert "Traceback" not in result.stdout + result.stderr
    assert "Host console" not in result.stdout
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1, message
    assert f"port {port} is busy on 127.0.0.1" in message
    assert f"make run PORT={port + 1}" in message and f"--port {port + 1}" in message


def test_the_banner_on_all_interfaces_shows_the_lan_address(
    database_url, monkeypatch, capsys, tmp_path, lan_address, threaded_serving
):
    """``vtt serve --host 0.0.0.0`` prints an address phones can use, not 127.0.0.1."""
    import vtt.serving.server

    served = {}
    monkeypatch.delenv("VTT_BASE_URL", raising=False)
    # No real serving: keep the app the server would run.
    monkeypatch.setattr(
        vtt.serving.server, "serve_forever", lambda app, host, port: served.update(app=app, host=host, port=port)
    )
    port = free_port()
    log = str(tmp_path / "audit.jsonl")
    vtt.serving.server.serve("0.0.0.0", port, audit_log=log)
    output = capsys.readouterr().out
    assert f"Host console: http://192.168.7.23:{port}/host/login" in output
    assert f"Serving on http://0.0.0.0:{port}" in output
    assert (served["host"], served["port"]) == ("0.0.0.0", port)
    assert served["app"].config["AUDIT_LOG"] == log
    assert (served["app"].config["SERVE_HOST"], served["app"].config["SERVE_PORT"]) == ("0.0.0.0", port)

    monkeypatch.setenv("VTT_BASE_URL", "https://vtt.example.org")
    vtt.serving.server.serve("0.0.0.0", port)
    assert "Host console: https://vtt.example.org/host/login" in capsys.readouterr().out


def test_a_port_taken_after_the_check_is_still_one_line(database_url, monkeypatch, threaded_serving):
    import errno

    import click
    import pytest

    import vtt.serving.server

    def taken(app, host, port):
        raise OSError(errno.EADDRINUSE, "Address already in use")

    monkeypatch.setattr(vtt.serving.server, "serve_forever", taken)
    port = free_port()
    with pytest.raises(click.ClickException, match=f"port {port} is busy on 127.0.0.1"):
        vtt.serving.server.serve("127.0.0.1", port)
