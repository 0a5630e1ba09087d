"""The live pages in a real Chromium against a served gevent app: a host, two human players, an AI player
(a small socket client in the test) and two jurors play one round to the tally and a reveal."""

from __future__ import annotations

import json
import re

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
    page_text,
    screenshot_dir,
    wait_connected,
)
from tests.support.live import make_session

pytestmark = pytest.mark.browser


def open_the_lobby_every_page_naming_its_session(host, sockets: list[str], code: str) -> None:
    """The lobby opens; every page names its session on its Socket.IO URL (nginx routes by it)."""
    host_step(host, "Open the lobby")
    assert len(sockets) >= 5 and all(f"session={code}" in socket for socket in sockets), sockets


def players_answer_on_a_phone_and_a_laptop(host, players: dict) -> None:
    """Round 1's question opens for answering; each player answers on their page, which fits its width."""
    host_step(host, "Start round 1")
    host_step(host, "Show question 1")
    host_step(host, "Open answering")
    for name, page in players.items():
        page.wait_for_selector("#answer-form input[name=choice]:not([disabled])", timeout=WAIT_MS)
        assert page.inner_text("#phase").startswith("Round 1 of 1"), page.inner_text("#phase")  # playing
        page.locator("#answer-form .pill").nth(2 if name == "Mina" else 1).click()
        page.get_by_role("button", name="Send my answer").click()
        page.wait_for_selector("#answer-state.received", timeout=WAIT_MS)
        no_sideways_scroll(page)


def the_host_enters_the_failed_agents_answer(host, agent, agent_questions: list, shots) -> None:
    """The agent fails: its error is on the host's Agents panel; the host types its answer there (on a phone too),
    and the agent, back too late, does not undo it; the three answers reach the host."""
    question = agent_questions[-1]
    assert question["qid"]  # players (agents) get the bank's qid
    failed = agent.call(
        "agent", {"id": "agent-status-1", "status": "error", "message": "model server down"}, timeout=10
    )
    assert failed["ok"] is True
    host.wait_for_selector("#agents .agent-error", timeout=WAIT_MS)
    assert "model server down" in host.inner_text("#agents .agent-error")
    host.set_viewport_size(PHONE)
    host.locator("#agents .agent-typed select").select_option(index=2)  # the placeholder, then A, B...
    host.get_by_role("button", name="Enter this answer").click()
    host.wait_for_selector("#agents .agent-result.received", timeout=WAIT_MS)
    host.wait_for_selector("#agents .agent-info .badge:not(.ai)", timeout=WAIT_MS)  # "entered by the host"
    no_sideways_scroll(host)
    host.screenshot(path=str(shots / "host-console-phone-agents.png"), full_page=True)
    host.set_viewport_size(LAPTOP)
    ack = agent.call("answer", {"id": "agent-1", "question": question["id"], "choice": 2}, timeout=10)
    assert ack["error"]["code"] == "host_answered"  # the agent, back too late, does not undo the host's answer
    host.wait_for_function("document.querySelectorAll('#answers tbody tr').length === 3", timeout=WAIT_MS)
    assert {"Mina", "Grace", "Agent"} <= set(re.findall(r"Mina|Grace|Agent", host.inner_text("#answers")))


def the_jury_reads_the_answers_blinded(host, phone, stage) -> list[str]:
    """The answers revealed to the jury under aliases A, B, C; no player's name reaches a juror's page or the
    stage. Returns the aliases in the sheet's order."""
    host_step(host, "Close answering")
    host_step(host, "Reveal the answers to the jury")
    phone.wait_for_selector(".sheet-line", timeout=WAIT_MS)
    assert phone.locator(".sheet-line").count() == 3
    aliases = phone.locator(".sheet-line .alias").all_inner_texts()
    assert sorted(aliases) == ["A", "B", "C"]
    for name in ("Mina", "Grace", "Agent"):  # blinding: no name reaches a juror's page
        assert name not in page_text(phone) and name not in page_text(stage)
    return aliases


def a_jurors_note_survives_a_reload(phone, shots) -> None:
    """The juror types a note and reloads before it is saved: the draft is kept, then saved."""
    note = phone.locator(".sheet-line").first.locator("textarea")
    note.fill("answers like a quiz book")
    phone.locator(".sheet-line").first.locator(".pill").nth(1).click()
    phone.reload()
    phone.wait_for_selector(".sheet-line", timeout=WAIT_MS)
    assert phone.locator(".sheet-line").first.locator("textarea").input_value() == "answers like a quiz book"
    phone.wait_for_selector(".sheet-line .line-state.saved", timeout=WAIT_MS)
    no_sideways_scroll(phone)
    phone.screenshot(path=str(shots / "juror-phone-sheet.png"), full_page=True)


def both_jurors_vote_and_the_count_reaches_host_and_stage(host, jurors: dict, stage, suspect: str) -> None:
    """The vote opens; each juror picks ``suspect`` and is told the vote is in; host and stage count 2 of 2."""
    host_step(host, "Open the vote")
    stage.wait_for_selector("#count:not([hidden])", timeout=WAIT_MS)
    for page in jurors.values():
        page.wait_for_selector("#vote:not([hidden]) input[name=slot-1]:not([disabled])", timeout=WAIT_MS)
        page.locator("#vote-form .suspects .pill").filter(has=page.locator(f"input[value='{suspect}']")).click()
        page.locator("#vote-form .likeness .pill").nth(3).click()
        page.get_by_role("button", name="Cast my vote").click()
        page.wait_for_function(
            "document.getElementById('vote-state').textContent.startsWith('Your vote is in')", timeout=WAIT_MS
        )
    host.wait_for_function("document.getElementById('votes').textContent.startsWith('2 of 2')", timeout=WAIT_MS)
    stage.wait_for_function("document.getElementById('vote-count').textContent.startsWith('2 of 2')", timeout=WAIT_MS)


def the_tally_and_identities_show_the_vote(host, phone, stage, suspect: str, shots) -> None:
    """The tally gives ``suspect`` both votes (the stage hides its join QR now); the reveal names it."""
    host_step(host, "Close the vote")
    host_step(host, "Show the tally")
    phone.wait_for_selector(".tally .bars li", timeout=WAIT_MS)
    votes = dict(
        zip(
            phone.locator(".tally .bar-alias").all_inner_texts(),
            phone.locator(".tally .bar-votes").all_inner_texts(),
        )
    )
    assert votes[suspect] == "2" and sum(int(v) for v in votes.values()) == 2
    stage.wait_for_selector(".tally .bars li", timeout=WAIT_MS)
    assert not stage.locator("#join").is_visible()  # the join QR is for the lobby (and open joins) only
    stage.screenshot(path=str(shots / "stage-tally.png"))
    host_step(host, "Reveal identities")
    phone.wait_for_selector(".identities li", timeout=WAIT_MS)
    revealed = phone.inner_text(".identities")
    assert suspect in revealed
    host.screenshot(path=str(shots / "host-console.png"), full_page=True)
    no_sideways_scroll(host)


def the_jurors_note_and_vote_are_stored(db_factory, people, alias: str) -> None:
    """J1's note, likeness and vote for ``alias`` are in the database."""
    with db_factory() as db:
        from sqlalchemy import select

        from vtt.models import Juror, SheetEntry, Vote

        j1 = db.scalar(select(Juror.id).where(Juror.session_id == people.session_id, Juror.label == "J1"))
        line = db.scalar(select(SheetEntry).where(SheetEntry.juror_id == j1, SheetEntry.alias == alias))
        assert (line.note, line.human_likeness) == ("answers like a quiz book", 2)
        assert db.scalar(select(Vote.alias).where(Vote.juror_id == j1)) == alias


def test_one_round_from_lobby_to_reveal_in_chromium(browser, served, db_factory, tmp_path):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=2, players=PLAYERS)
    shots = screenshot_dir(tmp_path)
    url = served.url

    host = host_console(browser, url, people)

    sockets: list[str] = []  # every page names its session on its Socket.IO URL (nginx routes by it)
    players = {}
    for name in ("Mina", "Grace"):
        players[name] = browser.new_page(viewport=PHONE if name == "Mina" else LAPTOP)
        players[name].on("websocket", lambda socket: sockets.append(socket.url))
        players[name].goto(f"{url}/play/{people.players[name]}")
    jurors = {"J1": browser.new_page(viewport=PHONE), "J2": browser.new_page(viewport=LAPTOP)}
    for label, page in jurors.items():
        page.on("websocket", lambda socket: sockets.append(socket.url))
        page.goto(f"{url}/jury/{people.jurors[label]}")
        wait_connected(page)
    stage = browser.new_page(viewport={"width": 1280, "height": 720})
    stage.on("websocket", lambda socket: sockets.append(socket.url))
    stage.goto(f"{url}{people.stage_path}")

    agent = socketio.Client()
    agent_questions = []
    agent.on("question", lambda question: agent_questions.append(question))
    agent.connect(url, auth={"token": people.players["Agent"]}, transports=["websocket"])
    try:
        open_the_lobby_every_page_naming_its_session(host, sockets, people.code)
        players_answer_on_a_phone_and_a_laptop(host, players)
        the_host_enters_the_failed_agents_answer(host, agent, agent_questions, shots)
        players["Mina"].screenshot(path=str(shots / "player-phone.png"))
        phone = jurors["J1"]
        first = the_jury_reads_the_answers_blinded(host, phone, stage)[0]
        a_jurors_note_survives_a_reload(phone, shots)
        both_jurors_vote_and_the_count_reaches_host_and_stage(host, jurors, stage, first)
        the_tally_and_identities_show_the_vote(host, phone, stage, first, shots)
    finally:
        agent.disconnect()

    the_jurors_note_and_vote_are_stored(db_factory, people, first)


def test_the_juror_page_speaks_korean_and_passes_an_accessibility_audit(browser, served, db_factory):
    from axe_playwright_python.sync_playwright import Axe

    people = make_session(db_factory, rounds=1, per_round=1, jurors=1, players=PLAYERS)
    page = browser.new_page(viewport=PHONE)
    page.goto(f"{served.url}/jury/{people.jurors['J1']}?lang=ko")
    page.wait_for_function("document.getElementById('me').textContent !== ''", timeout=WAIT_MS)
    assert page.evaluate("document.documentElement.lang") == "ko"
    assert "배심원" in page.inner_text("#me")  # "You are juror J1." in Korean
    results = Axe().run(page)
    serious = [v for v in results.response["violations"] if v["impact"] in ("serious", "critical")]
    assert serious == [], json.dumps(serious, indent=1)[:2000]
    no_sideways_scroll(page)


def test_opening_a_join_link_creates_nothing_until_the_person_presses_join(browser, served, db_factory):
    from sqlalchemy import func, select

    from vtt.models import Juror

    people = make_session(db_factory, rounds=1, per_round=1, jurors=0, players=PLAYERS, open_join=True)

    def count() -> int:
        return db_factory().scalar(select(func.count()).select_from(Juror).where(Juror.session_id == people.session_id))

    page = browser.new_page(viewport=PHONE)
    page.goto(f"{served.url}/join/{people.code}")
    assert count() == 0
    page.fill("#nickname", "Kim")
    page.get_by_role("button", name="Join").click()
    page.wait_for_url(re.compile(r"/jury/"), timeout=WAIT_MS)
    page.wait_for_function("document.getElementById('me').textContent.includes('Kim')", timeout=WAIT_MS)
    assert count() == 1


def test_the_host_is_warned_before_the_reveal_about_players_without_an_answer(
    browser,
    served,
    db_factory,
    tmp_path,
):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1, players=PLAYERS)
    host = host_console(browser, served.url, people)
    for label in ("Open the lobby", "Start round 1", "Show question 1", "Open answering"):
        host_step(host, label)
    assert host.locator("#answers .missing").count() == 0  # answering is still open: no alarm yet
    host_step(host, "Close answering")
    warning = host.wait_for_selector("#answers .missing[role=alert]", timeout=WAIT_MS).inner_text()
    assert "Mina" in warning and "Grace" in warning and "Agent (AI)" in warning
    host.screenshot(path=str(screenshot_dir(tmp_path) / "host-console-missing-answers.png"), full_page=True)
    host.set_viewport_size(PHONE)
    no_sideways_scroll(host)
    host.screenshot(path=str(screenshot_dir(tmp_path) / "host-console-missing-answers-phone.png"), full_page=True)
    host.set_viewport_size(LAPTOP)
    # The agent failed: the host enters its answer in the Agents panel; only the people are left in the warning.
    form = host.locator("#agents .agent-typed")
    if form.locator("select").count():
        form.locator("select").select_option(index=1)
    else:
        form.locator("textarea").fill("She is scared of the dark.")
    host.get_by_role("button", name="Enter this answer").click()
    host.wait_for_function(
        "!document.querySelector('#answers .missing').textContent.includes('Agent (AI)')", timeout=WAIT_MS
    )
    assert "Mina" in host.inner_text("#answers .missing")


def test_each_juror_page_saves_only_at_its_own_save_slots(browser, served, db_factory, tmp_path):
    """Thousands of pages start typing at the same reveal, so a page saves only at its own slots: one every
    sheet_save_seconds (1 s here), at a phase drawn per page (Math.random pinned: J1 on whole seconds, J2 on
    half seconds). The pages' clocks are paused and run by hand: a keystroke every 250 ms for 4 s, then none."""
    people = make_session(db_factory, rounds=1, per_round=1, jurors=2, players=PLAYERS)
    host = host_console(browser, served.url, people)
    jurors = {}
    for label, phase in (("J1", 0), ("J2", 0.5)):
        page = jurors[label] = browser.new_page(viewport=PHONE)
        page.add_init_script(f"Math.random = () => {phase};")
        page.clock.install()
        page.goto(f"{served.url}/jury/{people.jurors[label]}")
    players = []
    try:
        for token in people.players.values():
            player = socketio.Client()
            player.questions = []
            player.on("question", player.questions.append)
            player.connect(served.url, auth={"token": token}, transports=["websocket"])
            players.append(player)
        for label in ("Open the lobby", "Start round 1", "Show question 1", "Open answering"):
            host_step(host, label)
        for number, player in enumerate(players):
            ack = player.call(
                "answer", {"id": f"answer-{number}", "question": player.questions[-1]["id"], "choice": 1}, timeout=10
            )
            assert ack["ok"] is True, ack
        host_step(host, "Close answering")
        host_step(host, "Reveal the answers to the jury")
    finally:
        for player in players:
            player.disconnect()

    step = 250
    saves = {}
    for label, page in jurors.items():
        page.wait_for_selector(".sheet-line textarea", timeout=WAIT_MS)
        start = (page.evaluate("Date.now()") // 10_000 + 2) * 10_000  # on a whole second
        page.clock.pause_at(start)
        note, state = page.locator(".sheet-line").first.locator("textarea"), page.locator(".line-state").first
        saves[label], was_saving = [], False
        for elapsed in range(0, 8000, step):
            if elapsed < 4000:
                note.fill(f"types on and on {elapsed}")
                was_saving = False
            page.clock.run_for(step)
            saving = bool(re.search(r"\b(saving|saved)\b", state.get_attribute("class")))
            if saving and not was_saving:
                saves[label].append(elapsed + step)
            was_saving = saving
        page.wait_for_selector(".line-state.saved", timeout=WAIT_MS)
        no_sideways_scroll(page)
    shots = screenshot_dir(tmp_path)
    jurors["J1"].screenshot(path=str(shots / "juror-phone-saved.png"), full_page=True)
    jurors["J2"].set_viewport_size(LAPTOP)
    no_sideways_scroll(jurors["J2"])
    jurors["J2"].screenshot(path=str(shots / "juror-laptop-saved.png"), full_page=True)
    # Typing on: saved at the first slot after 2 s; then at the first slot after the last keystroke + 1 s.
    assert saves == {"J1": [3000, 5000], "J2": [2500, 5500]}

    from sqlalchemy import select

    from vtt.models import Juror, SheetEntry

    with db_factory() as db:
        notes = db.execute(
            select(Juror.label, SheetEntry.note)
            .join(SheetEntry, SheetEntry.juror_id == Juror.id)
            .where(Juror.session_id == people.session_id)
        ).all()
    assert sorted(notes) == [("J1", "types on and on 3750"), ("J2", "types on and on 3750")]
