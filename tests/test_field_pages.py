"""The pages' refusal path in Chromium: a link the server refuses says so and stops trying (socket.io-client reads
the refusal's code from ``err.data``); a link the host replaces closes the page that had it; the host's console
lists open joins and removes a juror; the keyed stage shows the door code; one juror's two tabs stay in step."""

from __future__ import annotations

import json
import time

import pytest
import socketio
from sqlalchemy import update

from tests.support.apps import host_api_token
from tests.support.browser import PHONE, WAIT_MS, host_console, wait_connected
from tests.support.live import TO_JUDGING, make_session
from tests.support.served import ServedApp
from vtt.access.admission import door_code, stage_key
from vtt.config import Settings
from vtt.db import transaction
from vtt.models import Juror

pytestmark = pytest.mark.browser


def test_a_refused_link_says_so_and_stops_connecting(browser, database_url, db_factory):
    """The page is connected; while the server is down the juror's token changes in the database; the page's
    reconnect is refused with bad_token, which socket.io-client hands over as err.data.code."""
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1)
    first = ServedApp({"DATABASE_URL": database_url}).__enter__()
    second = None
    try:
        page = browser.new_page(viewport=PHONE)
        page.goto(f"{first.url}/jury/{people.jurors['J1']}")
        wait_connected(page)
        first.process.kill()
        first.process.wait()
        with transaction(db_factory) as db:
            db.execute(update(Juror).where(Juror.token == people.jurors["J1"]).values(token="replaced-behind-its-back"))
        second = ServedApp({"DATABASE_URL": database_url})
        second.port, second.url = first.port, first.url
        second.__enter__()
        page.wait_for_function(
            "document.getElementById('phase').textContent.includes('Ask the host for yours')", timeout=WAIT_MS
        )
        page.wait_for_timeout(1500)  # it stays refused: no "reconnecting" later
        assert page.inner_text("#connection") == "Not connected."
        assert "This link does not work" in page.inner_text("#phase")
    finally:
        for app in (first, second):
            if app is not None and app.process.poll() is None:
                app.__exit__(None, None, None)


def test_a_replaced_link_closes_its_page_and_a_removed_juror_is_told(browser, served, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1, open_join=True)
    player = browser.new_page(viewport=PHONE)
    player.goto(f"{served.url}/play/{people.players['Mina']}")
    wait_connected(player)
    stranger = browser.new_page(viewport=PHONE)
    stranger.goto(f"{served.url}/join/{people.code}")
    stranger.fill("#nickname", "Stranger")
    stranger.click("button[type=submit]")
    wait_connected(stranger)

    host = host_console(browser, served.url, people)
    host.wait_for_selector("#jurors li:has-text('Stranger')", timeout=WAIT_MS)
    assert "open join" in host.inner_text("#jurors li:has-text('Stranger')")
    assert "1 of them joined openly" in host.inner_text("#jury-summary")
    host.on("dialog", lambda dialog: dialog.accept())
    host.click("#jurors button[data-remove='Stranger']")
    host.wait_for_selector("#jurors li.removed:has-text('Stranger')", timeout=WAIT_MS)
    stranger.wait_for_function(
        "document.getElementById('phase').textContent.includes('replaced or removed')", timeout=WAIT_MS
    )

    client = socketio.Client(reconnection=False)
    client.connect(
        served.url,
        auth={"code": people.code, "role": "host", "host_token": host_api_token()},
        transports=["websocket"],
        wait_timeout=10,
    )
    try:
        reply = client.call(
            "host", {"id": "new-link-mina", "action": "new_link", "player": people.player_ids["Mina"]}, timeout=10
        )
    finally:
        client.disconnect()
    assert reply["ok"], reply
    player.wait_for_function(
        "document.getElementById('phase').textContent.includes('replaced or removed')", timeout=WAIT_MS
    )
    assert player.inner_text("#connection") == "Not connected."
    assert (
        json.loads(player.evaluate("document.getElementById('vtt-boot').textContent"))["auth"]["token"]
        == people.players["Mina"]
    )  # the page had the old link


def test_the_stage_opened_with_its_key_shows_the_door_code_and_puts_it_in_the_qr(
    browser,
    served,
    db_factory,
):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=0, open_join=True)
    secret = Settings.from_env().secret_key
    stage = browser.new_page(viewport={"width": 1920, "height": 1080})
    stage.goto(f"{served.url}/stage/{people.code}?key={stage_key(secret, people.session_id)}")
    stage.wait_for_function("document.getElementById('door-code').textContent.length === 4", timeout=WAIT_MS)
    door = stage.inner_text("#door-code")
    assert door in {door_code(secret, people.session_id, time.time() + shift) for shift in (-5, 0, 5)}
    assert stage.get_attribute("#join img", "src").endswith(f"join-qr.svg?door={door}")
    unkeyed = browser.new_page(viewport={"width": 1920, "height": 1080})
    answer = unkeyed.goto(f"{served.url}/stage/{people.code}")  # the join code alone opens no stage
    assert answer.status == 403 and "stage link from the host" in unkeyed.inner_text("main")


def test_a_vote_cast_in_one_tab_shows_in_the_other(browser, served, db_factory):
    """The same juror in two tabs: the second tab's vote and note reach the first (``mine``), no reload."""
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1)
    host = socketio.Client(reconnection=False)
    host.connect(
        served.url,
        auth={"code": people.code, "role": "host", "host_token": host_api_token()},
        transports=["websocket"],
        wait_timeout=10,
    )
    try:
        for number, move in enumerate((*TO_JUDGING, "open_vote")):
            assert host.call("host", {"id": f"move-{number}", "action": move}, timeout=10)["ok"], move
    finally:
        host.disconnect()
    tabs = [browser.new_page(viewport=PHONE) for _ in range(2)]
    for tab in tabs:
        tab.goto(f"{served.url}/jury/{people.jurors['J1']}")
        tab.wait_for_selector("#vote-submit", timeout=WAIT_MS)
    first, second = tabs
    alias = second.get_attribute("input[name=slot-1]:not([value=''])", "value")
    second.check(f"input[name=slot-1][value='{alias}']")
    second.fill("#vote-reason", "from the second tab")
    second.click("#vote-submit")
    first.wait_for_function("document.getElementById('vote-submit').textContent === 'Change my vote'", timeout=WAIT_MS)
    assert first.is_checked(f"input[name=slot-1][value='{alias}']")
    assert first.input_value("#vote-reason") == "from the second tab"
