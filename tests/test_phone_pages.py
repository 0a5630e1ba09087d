"""The live pages on a phone after a round's questions (a field test on real phones): the juror's ballot comes
first when the vote opens, its words follow the vote; players are told where the session is instead of seeing
the last question; the stage's heading says what happens; the join page after the finish."""

from __future__ import annotations

import os
import shutil

import pytest
import socketio

from tests.support.browser import (
    LAPTOP,
    PHONE,
    PLAYERS,
    WAIT_MS,
    host_console,
    host_step,
    no_sideways_scroll,
    screenshot_dir,
    wait_connected,
)
from tests.support.live import make_session

pytestmark = pytest.mark.browser

DOCS_SHOTS = os.environ.get("VTT_DOCS_SCREENSHOTS")  # set to docs/screenshots to refresh the pictures there


def new_page(browser, viewport):
    return browser.new_page(viewport=viewport)


def in_viewport(page, selector: str) -> bool:
    """Whether the top of ``selector`` (shown) is on screen."""
    return page.evaluate(
        """(selector) => {
      const node = document.querySelector(selector);
      if (!node || node.closest('[hidden]')) return false;
      const box = node.getBoundingClientRect();
      return box.height > 0 && box.top >= -2 && box.top < window.innerHeight - 40;
    }""",
        selector,
    )


def visible(page, selector: str) -> bool:
    return page.locator(selector).first.is_visible() if page.locator(selector).count() else False


def shoot(page, shots, name: str, full_page: bool = False) -> None:
    page.screenshot(path=str(shots / name), full_page=full_page)
    if DOCS_SHOTS:
        shutil.copy(shots / name, os.path.join(DOCS_SHOTS, name))


def the_stage_says_once_that_round_one_is_starting(host, stage) -> None:
    """The lobby opens and round 1 starts: the stage says so once."""
    host_step(host, "Open the lobby")
    host_step(host, "Start round 1")
    stage.wait_for_function("document.getElementById('phase').textContent.includes('is starting')", timeout=WAIT_MS)
    assert stage.inner_text("#phase") == "Round 1 of 2 is starting."  # said once


def everyone_answers_and_the_jury_gets_the_sheets(host, mina, others: list, jurors: dict) -> None:
    """Mina answers on her phone, the other two players through their sockets; the answers reach every juror."""
    host_step(host, "Show question 1")
    host_step(host, "Open answering")
    mina.wait_for_selector("#answer-form input[name=choice]:not([disabled])", timeout=WAIT_MS)
    mina.locator("#answer-form .pill").nth(1).click()
    mina.get_by_role("button", name="Send my answer").click()
    mina.wait_for_selector("#answer-state.received", timeout=WAIT_MS)
    for number, client in enumerate(others):
        ack = client.call(
            "answer", {"id": f"a-{number}", "question": client.questions[-1]["id"], "choice": 0}, timeout=10
        )
        assert ack["ok"] is True, ack
    host_step(host, "Close answering")
    host_step(host, "Reveal the answers to the jury")
    for page in jurors.values():
        page.wait_for_selector(".sheet-line", timeout=WAIT_MS)


def the_ballot_comes_first_when_the_vote_opens(host, jurors: dict, shots) -> None:
    """A juror deep in the sheets when the vote opens: the ballot is first on the page, the sheets stay open below
    it with the note kept, and a "Vote now" bar takes her to the ballot; a juror at the top sees it at once; the
    button, hint and heading say what to do (in Korean too)."""
    phone, j3 = jurors["J1"], jurors["J3"]
    phone.locator(".sheet-line textarea").first.fill("sounds like a quiz book")
    # The juror is deep in the sheets when the vote opens.
    phone.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")

    host_step(host, "Open the vote")
    for page in jurors.values():
        page.wait_for_selector("#vote:not([hidden]) input[name=slot-1]", timeout=WAIT_MS)
    # The ballot is first on the page, above the sheets, which stay open below it.
    order = phone.evaluate("[...document.querySelectorAll('main > section:not([hidden])')].map((s) => s.id)")
    assert order.index("vote") < order.index("sheet"), order
    assert phone.locator(".sheet-line textarea").first.is_enabled()
    assert phone.locator(".sheet-line textarea").first.input_value() == "sounds like a quiz book"
    # Scrolled down: a "Vote now" bar on screen takes the juror to the ballot.
    phone.wait_for_selector("#jump-bar:not([hidden])", timeout=WAIT_MS)
    assert in_viewport(phone, "#jump-bar") and phone.inner_text("#jump").startswith("Vote now")
    shoot(phone, shots, "juror-vote-bar-390.png")
    phone.click("#jump")
    assert in_viewport(phone, "#vote")
    phone.wait_for_selector("#jump-bar[hidden]", state="attached", timeout=WAIT_MS)
    # A juror at the top of the page sees the ballot at once.
    assert in_viewport(j3, "#vote") or in_viewport(j3, "#jump-bar")
    assert "투표" in j3.inner_text("#phase")
    for page in jurors.values():
        assert page.inner_text("#vote-submit") == ("투표하기" if page is j3 else "Cast my vote")
    assert phone.inner_text("#vote-hint") == "You can change it until the vote closes."
    assert "Question" not in phone.inner_text("#phase") and phone.inner_text("#phase").startswith(
        "Round 1 of 2 — vote: who is the AI?"
    )
    shoot(phone, shots, "juror-vote-390.png")
    shoot(jurors["J2"], shots, "juror-vote-1366.png")
    no_sideways_scroll(phone)


def the_stage_names_the_round_not_the_question(stage) -> None:
    """The stage names the round and what happens, not the last question."""
    stage.wait_for_selector("#count:not([hidden])", timeout=WAIT_MS)
    heading = stage.inner_text("#phase")
    assert heading.startswith("Round 1 of 2 — the jury votes") and "Question" not in heading, heading


def the_player_is_told_to_wait(mina, shots) -> None:
    """The player is told to wait; no question, clip or answer box."""
    mina.wait_for_selector("#notice:not([hidden])", timeout=WAIT_MS)
    assert "The jury is voting now" in mina.inner_text("#notice")
    assert not visible(mina, "#question") and not visible(mina, "#answer-form")
    assert not visible(mina, "textarea") and not visible(mina, ".clip-missing")
    no_sideways_scroll(mina)
    shoot(mina, shots, "player-voting-390.png")


def a_cast_vote_offers_a_change(jurors: dict, shots) -> None:
    """Each juror votes: the page says the vote is in, its button offers to change it, the hint goes."""
    j3 = jurors["J3"]
    for page in jurors.values():
        page.locator("#vote-form .suspects .pill").first.click()
        page.locator("#vote-form #vote-submit").click()
        page.wait_for_function(
            "document.getElementById('vote-state').textContent.includes('Your vote is in')"
            " || document.getElementById('vote-state').textContent.includes('접수')",
            timeout=WAIT_MS,
        )
        assert page.inner_text("#vote-submit") == ("투표 바꾸기" if page is j3 else "Change my vote")
        assert not visible(page, "#vote-hint")
    shoot(jurors["J1"], shots, "juror-voted-390.png")


def every_page_says_the_vote_is_closed(host, jurors: dict, stage) -> None:
    """The vote closes: no juror has a button left, each page says so (in Korean too) with the juror's vote; the
    stage says so, not the question."""
    phone, j3 = jurors["J1"], jurors["J3"]
    host_step(host, "Close the vote")
    for page in jurors.values():
        page.wait_for_selector("#vote .vote-closed", timeout=WAIT_MS)
        assert page.locator("#vote button").count() == 0
    assert phone.inner_text("#vote .vote-closed") == "The vote is closed."
    assert j3.inner_text("#vote .vote-closed") == "투표가 마감되었습니다."
    assert phone.inner_text("#vote-state").startswith("Your vote: ")
    stage.wait_for_function(
        "document.getElementById('phase').textContent.includes('the vote is closed')", timeout=WAIT_MS
    )
    assert "Question" not in stage.inner_text("#phase")


def the_tally_comes_first(host, jurors: dict, stage, mina, shots) -> None:
    """The tally: first on the juror's page, on screen at the top; the stage says it is round 1's votes; the player
    is told the round is over, with no question."""
    phone = jurors["J1"]
    host_step(host, "Show the tally")
    phone.wait_for_selector(".tally .bars li", timeout=WAIT_MS)
    order = phone.evaluate("[...document.querySelectorAll('main > section:not([hidden])')].map((s) => s.id)")
    assert order.index("results") < order.index("vote") < order.index("sheet"), order
    phone.evaluate("window.scrollTo(0, 0)")
    assert in_viewport(phone, "#results")
    shoot(phone, shots, "juror-tally-390.png")
    shoot(jurors["J2"], shots, "juror-tally-1366.png")
    stage.wait_for_selector(".tally .bars li", timeout=WAIT_MS)
    assert stage.inner_text("#phase") == "Round 1 — the votes"
    mina.wait_for_function(
        "document.getElementById('notice-text').textContent.includes('Round 1 is over')", timeout=WAIT_MS
    )
    assert not visible(mina, "#question")


def the_stage_says_who_was_who(host, phone, stage) -> None:
    """The identities revealed: on the juror's page and the stage, whose heading says so."""
    host_step(host, "Reveal identities")
    phone.wait_for_selector(".identities li", timeout=WAIT_MS)
    assert stage.wait_for_selector(".identities li", timeout=WAIT_MS)
    assert stage.inner_text("#phase") == "Round 1 — who was who"


def the_player_is_told_the_session_has_finished(host, mina, shots) -> None:
    """The host stops the session: the player is told it has finished, with no question, answer box or clip."""
    host.get_by_role("button", name="Stop the session now").click()
    mina.wait_for_function(
        "document.getElementById('notice-text').textContent.includes('has finished')", timeout=WAIT_MS
    )
    assert not visible(mina, "#question") and not visible(mina, "#answer-form") and not visible(mina, ".clip-join")
    shoot(mina, shots, "player-finished-390.png")


def a_fresh_player_link_after_the_finish_says_so(browser, url: str, people) -> None:
    """A player link opened fresh after the finish: the message, no answer box (in Korean too)."""
    fresh = new_page(browser, PHONE)
    fresh.goto(f"{url}/play/{people.players['Grace']}")
    fresh.wait_for_selector("#notice:not([hidden])", timeout=WAIT_MS)
    assert "The session has finished" in fresh.inner_text("#notice")
    assert not visible(fresh, "#question") and not visible(fresh, "textarea") and not visible(fresh, "#answer-form")
    korean = new_page(browser, PHONE)
    korean.goto(f"{url}/play/{people.players['Agent']}?lang=ko")
    korean.wait_for_selector("#notice:not([hidden])", timeout=WAIT_MS)
    assert "세션이 끝났어요" in korean.inner_text("#notice")


def test_after_the_questions_every_page_says_what_happens(browser, served, db_factory, tmp_path):
    people = make_session(db_factory, rounds=2, per_round=1, jurors=3, players=PLAYERS)
    shots = screenshot_dir(tmp_path)
    url = served.url
    host = host_console(browser, url, people)
    host.on("dialog", lambda dialog: dialog.accept())  # "stop the session now?"

    mina = new_page(browser, PHONE)
    mina.goto(f"{url}/play/{people.players['Mina']}")
    jurors = {"J1": new_page(browser, PHONE), "J2": new_page(browser, LAPTOP), "J3": new_page(browser, PHONE)}
    for label, page in jurors.items():
        page.goto(f"{url}/jury/{people.jurors[label]}" + ("?lang=ko" if label == "J3" else ""))
        page.wait_for_function("document.getElementById('me').textContent !== ''", timeout=WAIT_MS)
    stage = new_page(browser, {"width": 1280, "height": 720})
    stage.goto(f"{url}{people.stage_path}")

    others = []
    for name in ("Grace", "Agent"):
        client = socketio.Client()
        client.questions = []
        client.on("question", client.questions.append)
        client.connect(url, auth={"token": people.players[name]}, transports=["websocket"])
        others.append(client)
    try:
        the_stage_says_once_that_round_one_is_starting(host, stage)
        everyone_answers_and_the_jury_gets_the_sheets(host, mina, others, jurors)
        the_ballot_comes_first_when_the_vote_opens(host, jurors, shots)
        the_stage_names_the_round_not_the_question(stage)
        the_player_is_told_to_wait(mina, shots)
        a_cast_vote_offers_a_change(jurors, shots)
        every_page_says_the_vote_is_closed(host, jurors, stage)
        the_tally_comes_first(host, jurors, stage, mina, shots)
        the_stage_says_who_was_who(host, jurors["J1"], stage)
        the_player_is_told_the_session_has_finished(host, mina, shots)
    finally:
        for client in others:
            client.disconnect()

    a_fresh_player_link_after_the_finish_says_so(browser, url, people)


def test_the_join_page_after_the_finish_says_so_without_a_form(browser, served, db_factory, tmp_path):
    from sqlalchemy import update

    from vtt.models import Phase, VttSession

    people = make_session(db_factory, rounds=1, per_round=1, jurors=0, players=PLAYERS, open_join=True)
    with db_factory() as db:
        db.execute(update(VttSession).where(VttSession.id == people.session_id).values(phase=Phase.FINISHED))
        db.commit()
    page = new_page(browser, PHONE)
    page.goto(f"{served.url}/join/{people.code}")
    assert "This session has finished" in page.inner_text("main")
    assert page.locator("#nickname").count() == 0
    page.goto(f"{served.url}/join/{people.code}?lang=ko")
    assert "세션이 끝났습니다" in page.inner_text("main")
    assert page.locator("#nickname").count() == 0
    shoot(page, screenshot_dir(tmp_path), "join-finished-390.png")


def test_host_forms_and_console_fit_a_phone(browser, served, db_factory, tmp_path):
    """Badges and ids do not break mid-word, the file inputs show their text, the pass-rule select has room,
    the tell editor's box shows more than two clipped lines; at 390 px and 1366 px."""
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1, players=PLAYERS)
    shots = screenshot_dir(tmp_path)
    host = host_console(browser, served.url, people)
    agent = socketio.Client()
    questions = []
    agent.on("question", questions.append)
    agent.connect(served.url, auth={"token": people.players["Agent"]}, transports=["websocket"])
    try:
        for label in ("Open the lobby", "Start round 1", "Show question 1", "Open answering"):
            host_step(host, label)
        question = questions[-1]
        reply = {"choice": 0} if question["type"] == "mcq" else {"text": "As an AI language model I cannot watch it."}
        assert agent.call("answer", {"id": "a-1", "question": question["id"], **reply}, timeout=10)["ok"]
        host_step(host, "Close answering")
        host.wait_for_selector("#answers .badge", timeout=WAIT_MS)
    finally:
        agent.disconnect()
    for viewport in (PHONE, LAPTOP):
        for path, name in (
            (f"/host/sessions/{people.session_id}/live", "host-console"),
            ("/host/", "host-dashboard"),
            ("/host/sessions/new", "host-new-session"),
        ):
            host.set_viewport_size(viewport)
            host.goto(f"{served.url}{path}")
            if name == "host-console":
                host.wait_for_selector("#answers .badge", timeout=WAIT_MS)
                host.wait_for_selector("#clips-table td", timeout=WAIT_MS)
            no_sideways_scroll(host)
            # A badge is one line; a file input shows its whole text; a select shows its whole choice.
            broken = host.evaluate("""() => [...document.querySelectorAll('.badge')].filter((b) => b.offsetParent
              && b.getClientRects().length > 1 || b.offsetHeight > 2 * parseFloat(getComputedStyle(b).fontSize) + 6)
              .map((b) => b.textContent)""")
            assert broken == [], (name, broken)
            narrow = host.evaluate("""() => [...document.querySelectorAll('input[type=file], select')]
              .filter((i) => i.offsetParent && i.getBoundingClientRect().width < 300
                && i.getBoundingClientRect().width < i.scrollWidth)
              .map((i) => i.name)""")
            assert narrow == [], (name, narrow)
            if name == "host-console":  # the tell editor's box (an open answer's) shows its text, not two clipped lines
                fits = host.evaluate("""() => {
                  const box = Object.assign(document.createElement('textarea'), { rows: 2 });
                  box.value = 'As an AI language model I cannot watch videos, but I think she wants to remember to '
                    + 'buy more sticky notes for the office before the meeting starts tomorrow morning.';
                  const row = Object.assign(document.createElement('div'), { className: 'edit-row', id: 'probe' });
                  row.append(box);
                  document.getElementById('answers').append(row);
                  const fits = box.clientHeight > 70 && box.scrollHeight <= box.clientHeight + 2;
                  return fits;
                }""")
                assert fits, viewport
            shoot(host, shots, f"{name}-{viewport['width']}.png", full_page=True)


@pytest.mark.parametrize("lang, words", [("en", "Connecting…"), ("ko", "연결 중…")])
def test_a_page_says_it_is_connecting_before_its_scripts_connect(browser, served, db_factory, lang, words):
    """On a venue's slow Wi-Fi the scripts and the socket take seconds: until they connect, the line says so."""
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1, players=PLAYERS)
    page = new_page(browser, PHONE)
    page.route("**/socket.io/**", lambda route: route.abort())  # the connection never comes
    page.goto(f"{served.url}/jury/{people.jurors['J1']}?lang={lang}")
    shown = "getComputedStyle(document.getElementById('connection'), '::before').content"
    assert page.evaluate(shown) == f'"{words}"'
    assert page.evaluate("document.getElementById('connection')?.textContent") == ""
    page.unroute("**/socket.io/**")
    page.reload()
    wait_connected(page, "Connected" if lang == "en" else "연결됨")
    assert page.evaluate(shown) == "none"
    page.close()
