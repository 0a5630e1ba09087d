"""The Korean host console after "Stop the session now", in Chromium at 1366 px: the Next step
card links to the results, the Agents panel says what the AI player's agent did (its time in Korean), and open join
is off and closed with no door code. The rules are tested under Node (tests/js/host_end.test.mjs) and on the server
(tests/test_host_after_end.py); this checks that the console draws them."""

from __future__ import annotations

import pytest
import socketio

from tests.support.browser import WAIT_MS, host_console, no_sideways_scroll, screenshot_dir
from tests.support.live import make_session
from tests.support.served import ServedApp

pytestmark = pytest.mark.browser


class Agent:
    """The AI player's agent over a real Socket.IO connection: it reports and answers as `vtt agent` does."""

    def __init__(self, url: str, token: str):
        self.question = None
        self.client = socketio.Client()
        self.client.on("snapshot", self._snapshot)
        self.client.on("question", self._question)
        self.client.connect(url, auth={"token": token}, transports=["websocket"], wait_timeout=10)

    def _snapshot(self, data) -> None:
        self.question = data.get("question") or self.question

    def _question(self, data) -> None:
        self.question = data

    def send(self, event: str, payload: dict) -> dict:
        reply = self.client.call(event, payload, timeout=10)
        assert reply and reply.get("ok"), reply
        return reply


def step(host, action: str) -> None:
    host.click(f"#flow button[data-action={action}]")


def test_the_korean_console_after_the_session_was_stopped(browser, database_url, db_factory, instance, tmp_path):
    people = make_session(db_factory, rounds=2, per_round=1, jurors=1, open_join=True)
    shots = screenshot_dir(tmp_path)
    with ServedApp({"DATABASE_URL": database_url}) as served:
        host = host_console(browser, served.url, people)
        host.goto(f"{served.url}/host/sessions/{people.session_id}/live?lang=ko")
        host.wait_for_selector("#flow button[data-action=open_lobby]", timeout=WAIT_MS)
        host.check("#join-door")  # open join with the stage's door code
        host.wait_for_selector("#door-line:not([hidden])", timeout=WAIT_MS)
        agent = Agent(served.url, people.players["Agent"])
        agent.send("agent", {"id": "a-ready", "status": "ready", "message": "ready: replay answers.csv"})
        for action in ("open_lobby", "start_round", "show_question", "open_answering"):
            step(host, action)
            host.wait_for_selector(f"#flow button[data-action]:not([data-action={action}])", timeout=WAIT_MS)
        host.wait_for_selector("#flow button[data-action=close_answering]", timeout=WAIT_MS)
        question = agent.question
        answer = {"choice": 0} if question["type"] == "mcq" else {"text": "She is upset."}
        agent.send(
            "answer",
            {
                "id": "a-1",
                "question": question["id"],
                **answer,
                "provenance": {"backend": "replay", "model": None, "settings": {}},
            },
        )
        agent.send("agent", {"id": "a-done", "status": "answered", "message": f"question {question['qid']}: x"})
        host.once("dialog", lambda dialog: dialog.accept())
        step(host, "force-finish")
        host.wait_for_selector("#see-results", timeout=WAIT_MS)
        agent.client.disconnect()  # the agent leaves when the session has finished
        agents = host.locator("#agents li.agent")
        host.wait_for_function(
            "document.querySelector('#agents li.agent').textContent.includes('세션이 끝났고')", timeout=WAIT_MS
        )

        flow = host.inner_text("#flow")
        assert "세션이 끝났습니다" in flow and "결과 보기" in flow
        assert host.get_attribute("#see-results", "href") == f"/host/sessions/{people.session_id}/results/"
        said = agents.inner_text()
        assert "에이전트가 보낸 답변: 1개 · 진행자가 입력한 답변: 0개" in said, said
        assert "마지막 보고: " in said and ("오전" in said or "오후" in said) and "에 답변함" in said, said
        assert "PM" not in said and "AM" not in said and "question q" not in said, said
        assert not agents.locator("pre.agent-command").count()  # nothing left to run
        assert "아직 이 AI 참가자를 실행하는 프로그램이 없습니다" not in said
        assert not host.is_checked("#open-join") and host.is_disabled("#open-join")
        assert host.is_disabled("#join-door") and host.is_disabled("#join-cap")
        assert host.is_visible("#join-closed") and not host.is_visible("#door-line")
        assert "공개 참여가 닫혀" in host.inner_text("#join-closed")
        no_sideways_scroll(host)
        host.screenshot(path=str(shots / "host-console-after-the-end-1366-ko.png"), full_page=True)
