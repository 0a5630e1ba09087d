"""The host console's answer table lists every player of the question's round, "(no answer)" for those without
one: a player who did not answer is not left out (in Chromium against a served gevent app)."""

from __future__ import annotations

import json
import re

import pytest

from tests.support.apps import login
from tests.support.browser import PLAYERS, WAIT_MS, host_console, host_step, screenshot_dir
from tests.support.live import make_session

pytestmark = pytest.mark.browser


def answer_rows(host) -> list[list[str]]:
    return host.evaluate("""[...document.querySelectorAll('#answers table tbody tr')].map(
        (tr) => [tr.className, ...[...tr.cells].map((td) => td.innerText.trim())])""")


def test_the_answer_table_lists_players_without_an_answer(browser, served, db_factory, tmp_path):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1, players=PLAYERS)
    host = host_console(browser, served.url, people)
    for label in ("Open the lobby", "Start round 1", "Show question 1", "Open answering"):
        host_step(host, label)
    host.wait_for_selector("#answers table tr.no-answer", timeout=WAIT_MS)
    rows = answer_rows(host)
    assert len(rows) == 3 and all(row[0] == "no-answer" and row[3] == "(no answer)" for row in rows), rows
    # The AI player's answer arrives (typed in by the host in the Agents panel): the two people stay listed.
    form = host.locator("#agents .agent-typed")
    if form.locator("select").count():
        form.locator("select").select_option(index=1)
    else:
        form.locator("textarea").fill("She is scared of the dark.")
    host.get_by_role("button", name="Enter this answer").click()
    host.wait_for_function("document.querySelectorAll('#answers tr.no-answer').length === 2", timeout=WAIT_MS)
    host_step(host, "Close answering")
    host.wait_for_selector("#answers .missing[role=alert]", timeout=WAIT_MS)
    rows = answer_rows(host)
    assert len(rows) == 3, rows
    by_player = {row[2].split()[0]: row for row in rows}
    assert set(by_player) == {"Mina", "Grace", "Agent"}
    for name in ("Mina", "Grace"):
        assert by_player[name][0] == "no-answer" and by_player[name][3] == "(no answer)"
        assert by_player[name][1]  # the alias the jury sees "no answer" under
    assert by_player["Agent"][0] != "no-answer" and "(no answer)" not in by_player["Agent"][3]
    assert [row[1] for row in rows] == sorted(row[1] for row in rows)  # in alias order, as the jury sees them
    host.screenshot(path=str(screenshot_dir(tmp_path) / "host-console-answer-table.png"), full_page=True)


def test_the_no_answer_words_are_translated(app, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1, players=PLAYERS)
    client = app.test_client()
    login(client)

    def words(language: str) -> dict:
        page = client.get(f"/host/sessions/{people.session_id}/live?lang={language}").get_data(as_text=True)
        return json.loads(
            re.search(r'<script type="application/json" id="vtt-strings">(.*?)</script>', page, re.S).group(1)
        )

    assert words("ko")["no_answer"] == "(답변 없음)"
    assert words("en")["no_answer"] == "(no answer)"
