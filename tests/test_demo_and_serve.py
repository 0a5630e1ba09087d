"""What `make run` does: migrate, load the demo twice (no duplicates), serve with gevent."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.request

from click.testing import CliRunner
from sqlalchemy import func, select

from vtt.cli import main
from vtt.models import Player, PlayerKind, Question, QuestionBank, SessionQuestion, VttSession
from tests.conftest import HOST_PASSWORD, ROOT, ServedApp


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
    placed = db.execute(select(SessionQuestion.round, Question.suggested_round)
                        .join(Question, SessionQuestion.question_id == Question.id)).all()
    assert len(placed) == 30 and all(r == suggested for r, suggested in placed)


def test_run_py_serves_with_gevent(tmp_path, instance):
    env = {"DATABASE_URL": f"sqlite:///{tmp_path / 'served.db'}"}
    for step in (["db", "upgrade"], ["demo", "load"]):
        subprocess.run([sys.executable, "-m", "vtt.cli", *step], env={**os.environ, **env}, check=True,
                       capture_output=True, timeout=120, cwd=ROOT)
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
    result = subprocess.run([sys.executable, "run.py", "--port", "1"], env=env, cwd=ROOT, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 1
    assert "the database is at revision base (empty), this code needs 0001: run `vtt db upgrade` first" in result.stderr
