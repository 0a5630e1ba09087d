"""The demo's AI player plays without writing code: the console shows the one `vtt agent` line, and that very
line, run as it is from another folder, answers the demo's questions from the answers the demo ships."""

from __future__ import annotations

import asyncio
import html
import http.cookiejar
import json
import os
import re
import shlex
import subprocess
import urllib.parse
import urllib.request

from sqlalchemy import select

from tests.support.agent import Host, Sitting
from tests.support.apps import HOST_PASSWORD
from tests.support.served import ServedApp
from vtt.db import transaction
from vtt.models import Player, PlayerKind, VttSession
from vtt.sessions.demo import AI_ANSWERS_FILE, load_demo


def signed_in(url: str) -> urllib.request.OpenerDirector:
    """An HTTP client signed in to the host console of the server at ``url``."""
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    login = opener.open(f"{url}/host/login").read().decode()
    token = re.search(r'name="csrf_token" value="([^"]+)"', login).group(1)
    opener.open(f"{url}/host/login", urllib.parse.urlencode({"password": HOST_PASSWORD, "csrf_token": token}).encode())
    return opener


def console_commands(url: str, session_id: int) -> dict[str, dict]:
    page = signed_in(url).open(f"{url}/host/sessions/{session_id}/live").read().decode()
    found = re.search(r"data-commands='([^']*)'", page)
    assert found, "the console names no command for the AI player"
    return json.loads(html.unescape(found.group(1)))


def test_the_command_the_console_shows_plays_the_demo_ai(database_url, db_factory, tmp_path):
    with transaction(db_factory) as db:
        load_demo(db)  # the bank and session; the replayed answers need no clip
    with db_factory() as db:
        session = db.scalar(select(VttSession))
        agent = next(p for p in session.players if p.kind is PlayerKind.AI)
        human = db.scalar(select(Player.id).where(Player.session_id == session.id, Player.kind == PlayerKind.HUMAN))
        sitting = Sitting(session.id, session.join_code, agent.token, agent.id, human)

    with ServedApp({"DATABASE_URL": database_url}) as served:
        line = console_commands(served.url, sitting.session_id)[str(sitting.agent_id)]
        assert line["ready"] and str(AI_ANSWERS_FILE) in line["command"]
        assert f"--session {sitting.code}" in line["command"]  # routed to the session's process behind nginx
        log = tmp_path / "agent.log"
        elsewhere = tmp_path / "elsewhere"  # not the checkout: the line holds every path it needs
        elsewhere.mkdir()
        env = {key: value for key, value in os.environ.items() if not key.startswith(("VTT_", "DATABASE_URL"))}
        with log.open("w") as output:
            process = subprocess.Popen(
                shlex.split(line["command"]), cwd=elsewhere, env=env, stdout=output, stderr=subprocess.STDOUT
            )
            try:
                answer = asyncio.run(first_answer(served.url, sitting))
            finally:
                process.terminate()
                process.wait(10)
    assert answer["provenance"]["backend"] == "replay", answer
    assert answer["provenance"]["model"] == AI_ANSWERS_FILE.name
    assert answer["choice"] is not None or answer["text"], answer
    assert "backend=replay answer=" in log.read_text(), log.read_text()


async def first_answer(url: str, sitting: Sitting) -> dict:
    """The host opens the demo's first question; the AI player's answer as the host sees it."""
    async with Host(url, sitting) as driver:
        await driver.start_round(1)
        shown = await driver.ask()
        return await driver.wait_agent_answer(shown["id"], timeout=60)
