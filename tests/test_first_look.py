"""What a new host sees on a first try, in Chromium against a served app: options numbered where aliases are
letters, the console's words while a clip plays, the stage's end screen, the setup form and the session page."""

from __future__ import annotations

import pytest

from tests.support.apps import HOST_PASSWORD
from tests.support.browser import (
    FULL_HD,
    LAPTOP,
    PHONE,
    PLAYERS,
    WAIT_MS,
    host_console,
    host_step,
    screenshot_dir,
    wait_connected,
)
from tests.support.live import make_session

MARKERS = "(selector) => [...document.querySelectorAll(selector)].map((list) => getComputedStyle(list).listStyleType)"


@pytest.mark.browser
def test_options_are_numbered_wherever_aliases_are_letters(browser, served, db_factory, tmp_path):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1, players=PLAYERS)
    url = served.url
    host = host_console(browser, url, people)
    player = browser.new_page(viewport=PHONE)
    player.goto(f"{url}/play/{people.players['Mina']}")
    juror = browser.new_page(viewport=PHONE)
    juror.goto(f"{url}/jury/{people.jurors['J1']}")
    stage = browser.new_page(viewport=FULL_HD)
    stage.goto(f"{url}{people.stage_path}")
    host_step(host, "Open the lobby")
    host_step(host, "Start round 1")
    host_step(host, "Show question 1")
    host_step(host, "Open answering")

    player.wait_for_selector("#answer-form .pill", timeout=WAIT_MS)
    labels = player.locator("#answer-form .pill span").all_inner_texts()
    assert len(labels) >= 3 and [label.split(".")[0] for label in labels] == [
        str(n) for n in range(1, len(labels) + 1)
    ], labels
    for page in (juror, stage, host):
        page.wait_for_selector(".choices li", timeout=WAIT_MS)
        assert set(page.evaluate(MARKERS, ".choices")) == {"decimal"}, page.url
    # The host's typed answer for the AI player names the options by number too.
    host.wait_for_selector("#agents .agent-typed select", timeout=WAIT_MS)
    options = host.locator("#agents .agent-typed select option").all_inner_texts()[1:]
    assert [option.split(" · ")[0] for option in options] == [str(n) for n in range(1, len(options) + 1)], options
    player.screenshot(path=str(screenshot_dir(tmp_path) / "player-numbered-options.png"))


@pytest.mark.browser
def test_the_console_says_each_step_once_and_offers_the_next_while_the_clip_plays(browser, served, db_factory):
    people = make_session(db_factory, rounds=2, per_round=1, jurors=1, players=PLAYERS)
    host = host_console(browser, served.url, people)
    host_step(host, "Open the lobby")
    host_step(host, "Start round 1")
    assert host.inner_text("#phase") == "Round 1 of 2 is starting."
    host_step(host, "Show question 1")
    host.get_by_role("button", name="Play the clip for everyone", exact=True).click()
    host.wait_for_selector("#flow button[data-action=open_answering]:not(.secondary)", timeout=WAIT_MS)
    main = host.locator("#flow button:not(.secondary):not(.danger)").all_inner_texts()
    assert main == ["Open answering"], main  # the replay is there, but not as the main button
    assert host.locator("#flow button[data-action=play_clip]").inner_text() == "Replay the clip"
    # "Done." answers the move just made, and does not linger as if it were news about the next one.
    host.wait_for_function("document.getElementById('flow-state').textContent === ''", timeout=6_000)


# Each answer mode's box and its words' first line: box left, right, middle; text left; line top, bottom.
MODE_LINES = """() => [...document.querySelectorAll('fieldset.modes label')].filter((label) => label.offsetParent)
  .map((label) => {
    const box = label.querySelector('input').getBoundingClientRect();
    const words = document.createRange();
    words.selectNodeContents(label);
    words.setStartAfter(label.querySelector('input'));
    const line = words.getClientRects()[0];
    return [box.left, box.right, (box.top + box.bottom) / 2, line.left, line.top, line.bottom];
  })"""


@pytest.mark.browser
@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["laptop", "phone"])
def test_the_setup_page_s_answer_modes_sit_beside_their_words_and_say_what_spoken_does(
    browser, served, viewport, tmp_path
):
    page = browser.new_page(viewport=viewport)
    page.goto(f"{served.url}/host/login?next=/host/sessions/new")
    page.fill("#password", HOST_PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_selector("fieldset.modes label", timeout=WAIT_MS)
    page.wait_for_load_state("load")  # the form's stylesheet applied: measured before it, the boxes are unstyled
    lines = page.evaluate(MODE_LINES)
    assert len(lines) >= 3
    for box_left, box_right, box_middle, text_left, line_top, line_bottom in lines:
        assert box_right <= text_left, lines  # the box before its words...
        assert line_top <= box_middle <= line_bottom + 8, lines  # ...on their first line
        assert text_left - box_left < 60, lines
    assert "not recorded yet" not in page.inner_text("main")
    assert "the page records it" in page.inner_text("fieldset.modes")
    page.screenshot(path=str(screenshot_dir(tmp_path) / f"setup-modes-{viewport['width']}.png"))


def finish_by_socket(url: str, code: str) -> None:
    """The host takes the usual move (no replay, no extension) until the session has finished."""
    import uuid

    import socketio

    from tests.support.apps import host_api_token

    host = socketio.Client()
    host.connect(url, auth={"code": code, "role": "host", "host_token": host_api_token()}, transports=["websocket"])
    try:
        while moves := [m for m in host.call("snapshot", timeout=10)["snapshot"]["status"]["moves"] if m != "extend"]:
            move = next((m for m in moves if m != "play_clip"), moves[0])
            assert host.call("host", {"id": uuid.uuid4().hex, "action": move}, timeout=10)["ok"], move
    finally:
        host.disconnect()


@pytest.mark.browser
@pytest.mark.parametrize("viewport", [{"width": 1366, "height": 768}, FULL_HD], ids=["1366", "1920"])
def test_the_stage_s_end_screen_shows_every_round(browser, served, db_factory, viewport, tmp_path):
    people = make_session(db_factory, rounds=3, per_round=1, jurors=1, reveal="end", players=PLAYERS)
    stage = browser.new_page(viewport=viewport)
    stage.goto(f"{served.url}{people.stage_path}")
    wait_connected(stage)
    finish_by_socket(served.url, people.code)
    stage.wait_for_function("document.querySelectorAll('.end-round').length === 3", timeout=WAIT_MS)
    for number in (1, 2, 3):
        card = stage.locator(f".end-round[data-round='{number}']")
        assert card.locator("li").count() == 3
        assert card.locator("li.is-ai").count() == 1 and "AI" in card.locator("li.is-ai").inner_text()
        assert "0 votes" in card.inner_text()
    assert stage.evaluate("document.documentElement.scrollHeight <= window.innerHeight")  # a projector: no scrolling
    stage.screenshot(path=str(screenshot_dir(tmp_path) / f"stage-end-{viewport['width']}.png"))


def test_korean_host_pages_name_a_session_s_status_and_a_player_s_kind_in_korean(host, db_factory):
    from vtt.db import transaction
    from vtt.kinds import SessionStatus
    from vtt.models import VttSession

    drafted = make_session(db_factory, rounds=1, per_round=1, jurors=1, players=PLAYERS, name="Drafted")
    finished = make_session(db_factory, rounds=1, per_round=1, jurors=1, players=PLAYERS, name="Finished")
    with transaction(db_factory) as db:
        db.get(VttSession, finished.session_id).status = SessionStatus.FINISHED
    dashboard = host.get("/host/?lang=ko").get_data(as_text=True)
    assert '<span class="badge">준비 중</span>' in dashboard and '<span class="badge">종료</span>' in dashboard
    assert (
        '<span class="badge">draft</span>' not in dashboard and '<span class="badge">finished</span>' not in dashboard
    )
    page = host.get(f"/host/sessions/{drafted.session_id}").get_data(as_text=True)
    assert '<span class="badge">준비 중</span>' in page
    assert '<span class="badge human">인간</span>' in page and '<span class="badge human">human</span>' not in page


ROWS_CUT = """() => { const box = document.querySelector('.clips-table'); const b = box.getBoundingClientRect();
  return [...box.querySelectorAll('tbody tr')].map((row) => row.getBoundingClientRect())
    .filter((r) => r.top < b.bottom - 1 && r.bottom > b.bottom + 1).length; }"""
NAMES_BROKEN = """() => [...document.querySelectorAll('tr[data-player] td:first-child')].filter((cell) => {
  const words = document.createRange(); words.selectNodeContents(cell); return words.getClientRects().length > 1; })
  .map((cell) => cell.textContent)"""


@pytest.mark.browser
def test_names_stay_whole_and_the_clip_list_ends_between_rows(browser, served, db_factory):
    people = make_session(
        db_factory, rounds=2, per_round=6, jurors=1, players=[*PLAYERS, {"name": "Tomás", "kind": "human", "age": 14}]
    )
    host = host_console(browser, served.url, people)
    for width, height in ((1366, 768), (1024, 768), (1920, 1080)):
        host.set_viewport_size({"width": width, "height": height})
        host.goto(f"{served.url}/host/sessions/{people.session_id}/live")
        host.wait_for_selector("#clips-table tbody tr", timeout=WAIT_MS)
        assert host.evaluate(ROWS_CUT) == 0, width  # no row, and no Preview button, cut by the list's edge
        host.goto(f"{served.url}/host/sessions/{people.session_id}")
        assert host.evaluate(NAMES_BROKEN) == [], width
