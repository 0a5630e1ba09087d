"""A displaced juror in Chromium on a phone (390 px): their link opens the finished session's rounds one at a time;
they fill a sheet line, answer the attention line, vote in each round and get their completion code; a reload
restores it all from the snapshot; nothing scrolls sideways.  And the open link: Start makes a juror and opens
their page, and Finish sends them back to the crowd platform with their code.  Screenshots go to VTT_SCREENSHOTS."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from tests.support.apps import HOST_PASSWORD
from tests.support.browser import LAPTOP, PHONE, WAIT_MS, no_sideways_scroll, screenshot_dir, wait_connected
from tests.support.review import play_session
from vtt.engine.displaced import attention_value
from vtt.juries.displaced import create_jurors, open_link
from vtt.models import Juror, SheetEntry, Vote, VttSession

pytestmark = pytest.mark.browser


@pytest.fixture
def finished(app, db_factory):
    """A session played to the end (two rounds; Mina, Grace and the AI Agent)."""
    return play_session(app, db_factory)


def stored_task(db_factory, token: str):
    with db_factory() as db:
        juror = db.scalar(select(Juror).where(Juror.token == token))
        votes = db.execute(select(Vote.round, Vote.alias, Vote.confidence).where(Vote.juror_id == juror.id)).all()
        sheet = db.execute(
            select(SheetEntry.alias, SheetEntry.human_likeness, SheetEntry.looks_like_ai, SheetEntry.note).where(
                SheetEntry.juror_id == juror.id
            )
        ).all()
        return juror.id, juror.completion_code, juror.attention_passed, sorted(votes), sheet


def wait_saved(page, selector: str) -> None:
    page.wait_for_function(
        "(selector) => document.querySelector(selector)?.textContent === 'Saved'", arg=selector, timeout=WAIT_MS
    )


def test_a_displaced_juror_judges_every_round_on_a_phone_and_a_reload_keeps_it(
    browser, served, finished, db_factory, tmp_path
):
    shots = screenshot_dir(tmp_path)
    with db_factory() as db:
        (made,) = create_jurors(db, db.get(VttSession, finished.session_id), 1, attention=True)
        db.commit()
    page = browser.new_page(viewport=PHONE)
    page.goto(f"{served.url}/jury/{made.token}")
    wait_connected(page)
    page.wait_for_selector("#round:not([hidden]) .displaced-question", timeout=WAIT_MS)
    assert page.inner_text("#phase") == "Round 1 of 2"
    assert page.inner_text("#me") == "You are juror D001."
    videos = page.locator(".displaced-question video")
    assert videos.count() == 2 and videos.first.get_attribute("playsinline") is not None
    assert "rendition=phone" in videos.first.get_attribute("src")  # the light clip on a phone
    lines = page.locator(".displaced-question").first.locator(".sheet-line:not(.attention-line)")
    assert lines.count() == 3
    first_alias = lines.first.get_attribute("data-alias")
    assert not page.is_disabled("#vote-submit") and page.is_disabled("#next")
    no_sideways_scroll(page)

    # a sheet line: likeness 2, looks like the AI, a note; saved through `sheet`, and it says so
    question = int(page.locator(".displaced-question").first.get_attribute("data-question"))
    line = lines.first
    line.locator(".likeness label").nth(1).click()
    line.locator(".check input").check()
    line.locator("textarea").fill("too smooth")
    wait_saved(page, f'[data-line-state="{question}/{first_alias}"]')
    # the attention line asks for the juror's own number
    juror_id, code, _passed, _votes, sheet = stored_task(db_factory, made.token)
    asks = attention_value(juror_id)
    attention = page.locator("#attention")
    assert f"choose {asks} here" in attention.inner_text()
    attention.locator("label").nth(asks - 1).click()
    wait_saved(page, "#attention-state")
    assert sheet == [(first_alias, 2, True, "too smooth")]

    # round 1's vote: the first alias, sure at 4
    suspect = page.locator("#vote-form .suspects input").first.get_attribute("value")
    page.locator("#vote-form .suspects label").first.click()
    page.locator("#vote-form .likeness label").nth(3).click()
    page.fill("#vote-reason", "tidy")
    page.click("#vote-submit")
    page.wait_for_function("!document.getElementById('next').disabled", timeout=WAIT_MS)
    assert "Your vote is saved" in page.inner_text("#vote-state")
    page.screenshot(path=str(shots / "displaced-round-1-390.png"), full_page=True)
    no_sideways_scroll(page)
    page.click("#next")
    page.wait_for_function("document.getElementById('phase').textContent === 'Round 2 of 2'", timeout=WAIT_MS)

    # a reload in round 2 comes back to round 2, and round 1 still holds the saved line, the attention and the vote
    page.reload()
    wait_connected(page)
    page.wait_for_function("document.getElementById('phase').textContent === 'Round 2 of 2'", timeout=WAIT_MS)
    assert page.is_disabled("#next") and page.inner_text("#next") == "Finish"
    page.click("#back")
    page.wait_for_function("document.getElementById('phase').textContent === 'Round 1 of 2'", timeout=WAIT_MS)
    restored = page.locator(f'.sheet-line[data-alias="{first_alias}"]').first
    assert restored.locator("textarea").input_value() == "too smooth"
    assert restored.locator(".check input").is_checked()
    assert restored.locator(".likeness input").nth(1).is_checked()
    assert page.inner_text(f'[data-line-state="{question}/{first_alias}"]') == "Saved"
    assert page.inner_text("#attention-state") == "Saved"
    assert page.locator("#vote-form .suspects input").first.is_checked()
    assert page.input_value("#vote-reason") == "tidy"
    page.click("#next")

    # round 2: abstain; the vote completes the task and Finish shows the completion code
    page.wait_for_function("document.getElementById('phase').textContent === 'Round 2 of 2'", timeout=WAIT_MS)
    page.locator("#vote-form .suspects label").last.click()
    page.click("#vote-submit")
    page.wait_for_function("!document.getElementById('next').disabled", timeout=WAIT_MS)
    page.click("#next")
    page.wait_for_selector("#done:not([hidden])", timeout=WAIT_MS)
    _id, code, passed, votes, _sheet = stored_task(db_factory, made.token)
    assert page.inner_text("#completion-code") == code and len(code) == 8
    assert "paste it into the crowd platform" in page.inner_text("#done")
    assert passed is True
    assert votes == [(1, suspect, 4), (2, None, None)]
    page.screenshot(path=str(shots / "displaced-done-390.png"), full_page=True)
    no_sideways_scroll(page)

    # a reload at the end shows the code again
    page.reload()
    page.wait_for_selector("#done:not([hidden])", timeout=WAIT_MS)
    assert page.inner_text("#completion-code") == code
    page.close()


def test_the_open_link_starts_a_juror_of_ones_own(browser, served, finished, db_factory, tmp_path):
    """From a crowd platform (Prolific's ids on the link): Start makes a juror, Finish sends them back to the
    platform's completion URL with their code, and the link opened again is their own juror, not another."""
    platform = f"{served.url}/platform-done?cc={{code}}"  # any http address: the server sends the juror there
    with db_factory() as db:
        link = open_link(db, db.get(VttSession, finished.session_id), 1, "2", complete_url=platform)
        db.commit()
        token = link.token
    page = browser.new_page(viewport=PHONE)
    page.goto(f"{served.url}/jury/open/{token}?PROLIFIC_PID=5f8a1b2c3d4e5f6a7b8c9d0e&STUDY_ID=S1&SESSION_ID=X1")
    assert "about 1 round" in page.inner_text("main")
    no_sideways_scroll(page)
    page.click("#start")
    page.wait_for_url(f"{served.url}/jury/**")
    wait_connected(page)
    page.wait_for_selector("#round:not([hidden]) .displaced-question", timeout=WAIT_MS)
    assert page.inner_text("#phase") == "Round 1 of 1" and page.inner_text("#me") == "You are juror D001."
    juror_url = page.url
    # the cap (1) is reached: the next visitor is told, with 410
    other = browser.new_page(viewport=LAPTOP)
    reply = other.goto(f"{served.url}/jury/open/{token}")
    assert reply.status == 410 and "This jury is full" in other.inner_text("#refusal")
    # round 2, abstained: Finish goes to the platform with the juror's code
    page.locator("#vote-form .suspects label").last.click()
    page.click("#vote-submit")
    page.wait_for_function("!document.getElementById('next').disabled", timeout=WAIT_MS)
    page.click("#next")
    page.wait_for_url(f"{served.url}/platform-done?cc=*", timeout=WAIT_MS)
    _id, code, _passed, _votes, _sheet = stored_task(db_factory, juror_url.rsplit("/", 1)[1])
    assert page.url == f"{served.url}/platform-done?cc={code}"
    with db_factory() as db:  # the ids Prolific put on the link came through Start
        juror = db.scalar(select(Juror).where(Juror.completion_code == code))
        assert (juror.participant_id, juror.platform_study_id, juror.platform_session_id) == (
            "5f8a1b2c3d4e5f6a7b8c9d0e",
            "S1",
            "X1",
        )
    # the same browser opens the link again: its own juror, the code and the way back shown
    page.goto(f"{served.url}/jury/open/{token}")
    assert page.url == juror_url
    page.wait_for_selector("#done:not([hidden])", timeout=WAIT_MS)
    assert page.inner_text("#completion-code") == code and page.is_visible("#return")
    page.close()
    other.close()


def test_the_host_card_and_the_jurors_page_fit_a_phone_and_a_laptop(browser, served, finished, db_factory, tmp_path):
    shots = screenshot_dir(tmp_path)
    with db_factory() as db:
        (made,) = create_jurors(db, db.get(VttSession, finished.session_id), 1)
        db.commit()
    for viewport in (PHONE, LAPTOP):
        host = browser.new_page(viewport=viewport)
        host.goto(f"{served.url}/host/login?next=/host/sessions/{finished.session_id}")
        host.fill("#password", HOST_PASSWORD)
        host.click("button[type=submit]")
        host.wait_for_selector("#displaced #make-jurors", timeout=WAIT_MS)
        host.fill("#dj-count", "3")
        host.click("#make-jurors button[type=submit]")
        host.wait_for_selector("#batch-links li", timeout=WAIT_MS)
        assert host.locator("#batch-links li").count() == 3
        host.click("#make-open-link button[type=submit]")
        host.wait_for_selector("table.open-links tr[data-open-link]", timeout=WAIT_MS)
        no_sideways_scroll(host)
        host.locator("#displaced").screenshot(path=str(shots / f"displaced-card-{viewport['width']}.png"))
        host.close()
        juror = browser.new_page(viewport=viewport)
        juror.goto(f"{served.url}/jury/{made.token}?lang=ko")
        juror.wait_for_selector("#round:not([hidden]) .displaced-question", timeout=WAIT_MS)
        assert juror.inner_text("#phase") == "1/2 라운드"
        if viewport is LAPTOP:
            assert "rendition" not in (juror.locator("video").first.get_attribute("src") or "")  # the clip itself
        no_sideways_scroll(juror)
        juror.screenshot(path=str(shots / f"displaced-ko-{viewport['width']}.png"))
        juror.close()
