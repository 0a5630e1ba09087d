"""The host pages in a real Chromium (Debian's, driven by Playwright)."""

from __future__ import annotations

import threading

import pytest
from werkzeug.serving import make_server

from tests.support.apps import HOST_PASSWORD
from tests.support.browser import screenshot_dir
from tests.support.paths import DATA
from vtt.banks import import_bank, read_bank

pytestmark = pytest.mark.browser


@pytest.fixture
def live_url(app, db):
    import_bank(db, read_bank(DATA / "spec_examples.csv"), "Spec examples")
    db.commit()
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


@pytest.mark.parametrize(
    "viewport", [{"width": 390, "height": 844}, {"width": 1366, "height": 900}], ids=["phone", "laptop"]
)
def test_host_signs_in_and_browses_a_bank(browser, live_url, viewport, tmp_path):
    page = browser.new_page(viewport=viewport)
    requests = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(f"{live_url}/host/")
    assert page.locator("h1").inner_text() == "Host login"
    page.fill("#password", "wrong")
    page.click("button[type=submit]")
    assert page.locator("[role=alert]").inner_text() == "Wrong password."
    page.fill("#password", HOST_PASSWORD)
    page.click("button[type=submit]")
    page.click("text=Spec examples")
    assert page.locator("#balance").is_visible()
    assert page.locator('[data-element="Character"] .bar-count').inner_text() == "5"
    page.fill("input[name=element]", "Grasping")
    page.click("text=Filter")
    assert page.locator("#match-count").inner_text().startswith("2 questions match")
    assert page.locator("tr[data-qid]").count() == 2
    # Nothing overflows sideways on a phone, and nothing was fetched from outside.
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    assert all(url.startswith(live_url) for url in requests)
    page.screenshot(path=str(screenshot_dir(tmp_path) / f"bank-{viewport['width']}.png"), full_page=True)
    page.close()


LONG_WORD = "Supercalifragilistic" * 12  # 240 letters, no break
LONG_CLIP = "clips/" + "/".join(["AnotherMissOh01_episode_directory_with_a_long_name"] * 6) + "/shot_0001.mp4"


@pytest.fixture
def long_bank(db, tmp_path):
    """Six questions, one with a long unbroken word and a long clip path: enough for 2 rounds of 3."""
    rows = ["qid,question,type,choices,answer,video,clip,targets,contents,thinking"]
    rows.append(f"w1,What does {LONG_WORD} mean?,open,,A word,{LONG_CLIP},shot,Character,Identity,Recall")
    rows += [
        f"w{n},Plain question {n}?,mcq,yes|no,yes,clips/c{n}.mp4,scene,Object,Feature,Recognition" for n in range(2, 7)
    ]
    path = tmp_path / "long.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    import_bank(db, read_bank(path), "Long words")
    db.commit()


def sticking_out(page) -> list[str]:
    """The elements that reach past the window's right edge (empty when the page does not scroll sideways)."""
    page.wait_for_load_state()
    return page.evaluate("""() => {
        const width = window.innerWidth;
        if (document.documentElement.scrollWidth <= width + 1) return [];
        return [...document.querySelectorAll("body *")].filter(el => el.getBoundingClientRect().right > width + 1)
            .map(el => `${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}.${el.className}`).slice(0, 10);
    }""")


@pytest.mark.parametrize(
    "viewport", [{"width": 390, "height": 844}, {"width": 1366, "height": 900}], ids=["phone", "laptop"]
)
def test_host_creates_a_session_and_no_page_scrolls_sideways(browser, live_url, long_bank, viewport, tmp_path):
    shots = screenshot_dir(tmp_path)
    page = browser.new_page(viewport=viewport)
    page.goto(f"{live_url}/host/login")
    page.fill("#password", HOST_PASSWORD)
    page.click("button[type=submit]")
    page.click("text=New session")
    assert sticking_out(page) == []
    page.fill("#f-name", "Long words pilot")
    page.select_option("#f-bank", "Long words")
    page.fill("#f-rounds", "2")
    page.fill("#f-questions_per_round", "3")
    page.fill("#f-answer_seconds", "abc")
    page.fill("#f-players-0-name", "Minjun")
    page.fill("#f-players-1-name", LONG_WORD[:100])
    # More rows than the page started with: the sixth player is added by the button.
    for n in range(2, 5):
        page.fill(f"#f-players-{n}-name", f"Player {n}")
    page.click("[data-add-row=player]")
    page.fill("#f-players-5-name", "Agent")
    page.select_option("#f-players-5-kind", "ai")
    page.fill("#f-players-5-mcq", "mcq-model")
    assert page.locator("[data-juror-row]").first.is_hidden()  # numbered jurors: the list is not shown
    page.fill("#f-jurors_count", "3")
    page.click("text=Create the session")
    # The bad timer is named next to its field; nothing was created.
    assert page.locator("#f-answer_seconds[aria-invalid=true]").count() == 1
    assert "not 'abc'" in page.locator("#err-answer_seconds-1").inner_text()
    assert sticking_out(page) == []
    page.screenshot(path=str(shots / f"setup-errors-{viewport['width']}.png"), full_page=True)
    page.fill("#f-answer_seconds", "60")
    page.click("text=Create the session")
    assert page.locator("h1").inner_text().startswith("Long words pilot")
    assert page.locator("tr[data-juror]").count() == 3 and page.locator("tr[data-player]").count() == 6
    assert page.locator("tr[data-player='Agent'] .person-link").get_attribute("href").startswith(live_url + "/play/")
    assert page.get_by_text(LONG_WORD, exact=False).count() == 1
    assert sticking_out(page) == []
    page.screenshot(path=str(shots / f"session-{viewport['width']}.png"), full_page=True)

    page.click('dl.config a:text-is("Long words")')  # the bank, from the configuration
    assert sticking_out(page) == []
    if viewport["width"] < 640:  # table rows are cards there, and every field says what it is
        label = page.evaluate(
            "getComputedStyle(document.querySelector('tr[data-qid=w1] td[data-label=Clip]'), '::before').content"
        )
        assert label == '"Clip"'
    page.fill("input[name=element]", "Colour")
    page.click("text=Filter")
    assert page.locator("#match-count").inner_text() == "No questions match: “Colour” is not a CogME element."
    assert page.locator("tr[data-qid]").count() == 0
    page.goto(page.url.split("?")[0])
    assert sticking_out(page) == []
    page.screenshot(path=str(shots / f"bank-long-{viewport['width']}.png"), full_page=True)
    page.close()
