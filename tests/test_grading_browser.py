"""The grading page in Chromium under the app's Content-Security-Policy: a grader takes the judge's suggestions and
saves marks row after row without a page load, and a refused write is shown on its row."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import select

from tests.support.apps import HOST_PASSWORD
from tests.support.browser import LAPTOP, WAIT_MS
from tests.support.judge import WELL_FORMED, FakeJudge
from tests.support.review import open_answers, play_session
from tests.support.served import ServedApp
from vtt.judge.suggest import JudgeSettings, suggest
from vtt.models import GraderMark

pytestmark = pytest.mark.browser
MODEL = "judge-7b"


def test_a_grader_takes_and_saves_marks_row_by_row_without_a_page_load(app, browser, database_url, db_factory):
    played = play_session(app, db_factory)
    with FakeJudge({**WELL_FORMED, "Grace": {"verdict": "Hard to say.", "accuracy": "{'score': 2}"}}) as judge:
        settings = JudgeSettings.from_spec(f"http:{judge.url}", MODEL)
        with ThreadPoolExecutor(1) as thread:  # asyncio.run, beside the event loop of Playwright's thread
            thread.submit(suggest, db_factory, played.session_id, settings).result()
    answers = open_answers(db_factory, played)
    taken, by_hand, unread, refused = (
        answers[key] for key in (("Mina", "q05"), ("Grace", "q11"), ("Grace", "q05"), ("Agent", "q05"))
    )
    problems: list[str] = []
    with ServedApp({"DATABASE_URL": database_url}) as served:
        page = browser.new_page(bypass_csp=False, viewport=LAPTOP)  # the policy enforced
        page.on("console", lambda message: message.type == "error" and problems.append(message.text))
        page.on("pageerror", lambda error: problems.append(str(error)))
        grading = f"/host/sessions/{played.session_id}/grading/"
        page.goto(f"{served.url}/host/login?next={grading}")
        page.fill("#password", HOST_PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(f"**{grading}", timeout=WAIT_MS)
        page.fill("#grader-input", "Kim")
        page.get_by_role("button", name="Start grading").click()
        page.wait_for_selector("#grader-name", timeout=WAIT_MS)
        page.evaluate("window.notReloaded = true")
        loads: list[str] = []
        page.on("framenavigated", lambda frame: frame == page.main_frame and loads.append(frame.url))

        def kims_mark(answer_id: int) -> str:
            mark = page.locator(f"#answer-{answer_id} tr[data-grader=Kim]")
            mark.wait_for(timeout=WAIT_MS)
            return " ".join(mark.inner_text().split())

        # the judge's suggestion, taken with one click
        page.locator(f"#answer-{taken} .take-form button").click()
        assert kims_mark(taken) == "Kim ✓ correct 4 3 3 3 3"
        assert "Kim took judge-7b's mark" in page.inner_text(f"#answer-{taken} .row-status")
        assert page.evaluate("document.activeElement.closest('li.answer').id") == f"answer-{taken}"
        # a mark by hand on the next row, with a rubric score
        row = f"#answer-{by_hand}"
        page.check(f"#mark-{by_hand}-incorrect")
        page.click(f"{row} .mark-form details.rubric summary")
        page.select_option(f"#mark-{by_hand}-accuracy", "1")
        page.click(f"{row} .mark-form button[type=submit]")
        assert kims_mark(by_hand) == "Kim ✗ incorrect 1"
        # the judge's verdict could not be read: its scores, with Kim's verdict
        page.get_by_role("button", name="Take its scores: incorrect").first.click()
        assert kims_mark(unread) == "Kim ✗ incorrect 2 3 3 3 3"
        # the Agreement card follows: Kim has marked three answers
        assert " ".join(page.inner_text("#graders tbody").split()) == "Kim 3"

        # a refused write (a forged CSRF token) is shown on its row, and nothing else moves
        page.evaluate(f"document.querySelector('#answer-{refused} .mark-form [name=csrf_token]').value = 'forged'")
        page.check(f"#mark-{refused}-correct")
        page.click(f"#answer-{refused} .mark-form button[type=submit]")
        alert = page.locator(f"#answer-{refused} .row-status.problem[role=alert]")
        alert.wait_for(timeout=WAIT_MS)
        assert "Not saved" in alert.inner_text() and "expired" in alert.inner_text()
        assert page.locator(f"#answer-{refused} tr[data-grader=Kim]").count() == 0
        # the browser reports the refused request itself (HTTP 400); nothing else may be in the console
        problems[:] = [problem for problem in problems if "status of 400" not in problem]

        assert page.evaluate("window.notReloaded") is True and loads == []
        page.reload()  # what the server has is what the rows showed
        assert kims_mark(taken) == "Kim ✓ correct 4 3 3 3 3" and kims_mark(unread) == "Kim ✗ incorrect 2 3 3 3 3"
        page.close()
    assert "Traceback" not in served.output, served.output
    assert problems == []
    with db_factory() as db:
        marks = {m.answer_id: (m.grader, m.correct, m.accuracy) for m in db.scalars(select(GraderMark))}
    assert marks == {taken: ("Kim", True, 4), by_hand: ("Kim", False, 1), unread: ("Kim", False, 2)}
