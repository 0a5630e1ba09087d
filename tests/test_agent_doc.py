"""docs/agents.md: its schemas are the server's, and its example agent really plays (against a live server)."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

from tests.support.agent import CLIP, Host, agent_answers, make_clip, make_sitting
from tests.support.live import published_schemas
from tests.support.served import ServedApp
from vtt.agents.schemas import agent_schemas

DOC = Path(__file__).resolve().parent.parent / "docs" / "agents.md"


def test_the_published_agent_schemas_are_the_ones_the_server_uses():
    assert published_schemas(DOC) == agent_schemas(), "regenerate: python -m vtt.agents.schemas"
    assert set(agent_schemas()) == {"auth", "answer", "agent"}
    assert "provenance" in agent_schemas()["answer"]["properties"]


def example_agent() -> str:
    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"<!-- example agent: .*? -->\n```python\n(.*?)\n```", text, re.S)
    assert block, "docs/agents.md lost its example agent"
    return block.group(1)


def test_the_example_agent_is_about_thirty_lines():
    lines = [line for line in example_agent().splitlines() if line.strip()]
    assert 25 <= len(lines) <= 40, len(lines)


def test_the_example_agent_answers_questions_on_a_live_server(database_url, db_factory, tmp_path):
    script = tmp_path / "agent.py"
    script.write_text(example_agent(), encoding="utf-8")
    sitting = make_sitting(db_factory, tmp_path)
    media = tmp_path / "media"
    make_clip(media / CLIP)
    with ServedApp({"DATABASE_URL": database_url, "VTT_MEDIA_DIR": str(media)}) as served:
        process = subprocess.Popen(
            [sys.executable, str(script), served.url, sitting.agent_token],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:

            async def host() -> list[dict]:
                async with Host(served.url, sitting) as driver:
                    await driver.until(lambda: driver.agent_reports(sitting.agent_id), 30, "the example's ready")
                    return await driver.play_round(1)

            answers = asyncio.run(host())
            output, _ = process.communicate(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
    assert process.returncode == 0, output
    assert len(answers) == 3
    rows = agent_answers(db_factory, sitting)
    assert set(rows) == set(sitting.questions)
    for number, row in rows.items():
        assert row.provenance == {"backend": "example", "model": "always-first", "settings": {}}
        assert row.client_key == f"agent-{number}"
        qid = sitting.questions[number]["qid"]
        assert re.search(rf"^{qid} \{{'ok': True, .*'question': {number}", output, re.M), output
