""" "Check this device" in a real Chromium whose microphone and camera are fakes that need no permission prompt: a
juror and a spoken player run the check on their phones before the session opens, and the host's console shows
each one's readiness as it arrives; the stage plays the test clip from its lobby screen. The server side is
tests/test_device_check.py."""

from __future__ import annotations

import json

import pytest

from tests.support.browser import (
    PHONE,
    WAIT_MS,
    host_console,
    launched_chromium,
    no_sideways_scroll,
    screenshot_dir,
)
from tests.support.live import make_session
from tests.support.served import ServedApp

pytestmark = pytest.mark.browser

PLAYERS = [
    {"name": "Mina", "kind": "human", "age": 6, "answer_modes": ["spoken"]},
    {"name": "Grace", "kind": "human", "age": 31},
    {"name": "Agent", "kind": "ai"},
]


@pytest.fixture(scope="module")
def media_browser():
    """Chromium with a fake microphone (a beep) granted without asking."""
    with launched_chromium("--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream") as chromium:
        yield chromium


def readiness_of(host, person: str) -> str:
    return host.inner_text(f"#readiness li[data-person='{person}']")


def start_check(page, heard: bool) -> None:
    """The person's touch, the clip played to its end, and their answer to "Did you hear the tone?"."""
    page.click("#check-device")
    page.wait_for_selector("#check-heard", state="visible", timeout=WAIT_MS)
    page.click("#check-heard" if heard else "#check-not-heard")


def run_check(page, heard: bool, heard_self: bool | None = None) -> None:
    """The person's whole check, from the touch to the result on their page; ``heard_self``: a spoken player's
    answer to "Did you hear your own voice?" once the two seconds recorded play back."""
    start_check(page, heard)
    if heard_self is not None:
        page.wait_for_selector("#check-heard-self", state="visible", timeout=WAIT_MS)
        assert page.locator(".check-playback").is_visible()
        assert not page.locator("#check-result p").count()  # nothing is sent before the person has said
        page.click("#check-heard-self" if heard_self else "#check-not-heard-self")
    page.wait_for_selector("#check-result p", timeout=WAIT_MS)


def test_a_juror_and_a_spoken_player_check_their_phones_and_the_host_sees_their_readiness_live(
    media_browser, database_url, db_factory, instance, tmp_path
):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=2, players=PLAYERS)
    audit = tmp_path / "audit.jsonl"
    shots = screenshot_dir(tmp_path)
    with ServedApp({"DATABASE_URL": database_url, "VTT_AUDIT_LOG": str(audit)}) as served:
        host = host_console(media_browser, served.url, people)
        mina_id = people.player_ids["Mina"]
        host.wait_for_selector(f"#readiness li[data-person='player-{mina_id}']", timeout=WAIT_MS)
        assert "not checked" in readiness_of(host, f"player-{mina_id}")
        assert "not checked" in readiness_of(host, "juror-J1")
        assert host.locator("#readiness li").count() == 4  # the two human players and the two jurors, no AI
        assert host.inner_text("#readiness-summary") == "0 ready, 0 with a problem, 4 not checked."

        # the juror's phone, before the session opens: the clip plays, the juror heard nothing
        juror = media_browser.new_page(viewport=PHONE)
        juror.goto(f"{served.url}/jury/{people.jurors['J1']}")
        juror.wait_for_selector("#connection:not(:empty)", timeout=WAIT_MS)
        assert juror.inner_text("#check-title") == "Check this device"
        run_check(juror, heard=False)
        assert "No sound heard" in juror.inner_text("#check-result")
        assert juror.evaluate("document.querySelector('.check-video').currentSrc").endswith("check-tone.phone.mp4")
        host.wait_for_function(
            "document.querySelector(\"#readiness li[data-person='juror-J1']\").textContent.includes('No sound heard')",
            timeout=WAIT_MS,
        )
        juror.screenshot(path=str(shots / "device-check-juror-390.png"), full_page=True)
        no_sideways_scroll(juror)

        # the spoken player's phone: the clip heard, two seconds recorded and played back, and the child asked
        # whether they heard themselves (found: the check never asked, and sent "ok" for a silent recording)
        mina = media_browser.new_page(viewport=PHONE)
        mina.goto(f"{served.url}/play/{people.players['Mina']}")
        mina.wait_for_selector("#check-device", timeout=WAIT_MS)
        run_check(mina, heard=True, heard_self=False)
        assert "The recording was not heard when played back" in mina.inner_text("#check-result")
        host.wait_for_function(
            f"document.querySelector(\"#readiness li[data-person='player-{mina_id}']\").textContent"
            ".includes('The recording was not heard when played back')",
            timeout=WAIT_MS,
        )
        run_check(mina, heard=True, heard_self=True)  # checked again: heard this time
        result = mina.inner_text("#check-result")
        assert "This device is ready" in result, result
        assert mina.locator(".check-playback").is_visible()  # the two seconds, to hear again
        host.wait_for_function(
            f"document.querySelector(\"#readiness li[data-person='player-{mina_id}']\").textContent.includes('ready')",
            timeout=WAIT_MS,
        )
        assert host.inner_text("#readiness-summary") == "1 ready, 1 with a problem, 2 not checked."
        mina.screenshot(path=str(shots / "device-check-spoken-player-390.png"), full_page=True)
        no_sideways_scroll(mina)
        host.locator("#readiness-card").screenshot(path=str(shots / "device-check-host-readiness.png"))

        # the juror checks again and hears it this time: the host's line turns ready
        start_check(juror, heard=True)
        host.wait_for_function(
            "document.querySelector(\"#readiness li[data-person='juror-J1']\").textContent.includes('ready')",
            timeout=WAIT_MS,
        )

        # the stage's lobby screen plays the test clip (the hall's speakers); it leaves once the session runs
        stage = media_browser.new_page(viewport={"width": 1280, "height": 720})
        stage.goto(f"{served.url}{people.stage_path}")
        stage.wait_for_selector("#test-clip:not([hidden]) #play-test-clip", timeout=WAIT_MS)
        stage.click("#play-test-clip")
        stage.wait_for_function("document.querySelector('#test-clip video').ended === true", timeout=WAIT_MS)
        assert stage.evaluate("document.querySelector('#test-clip video').muted") is False

    lines = [json.loads(line) for line in audit.read_text(encoding="utf-8").splitlines()]
    sent = [line for line in lines if line["event"] in ("readiness", "ack:device_check")]
    assert {line["audience"] for line in sent if line["event"] == "readiness"} == {"host"}
    for line in lines:
        if line["audience"] in ("juror", "stage") and not line["event"].startswith("ack:"):
            assert "readiness" not in json.dumps(line["payload"]) and "microphone" not in json.dumps(line["payload"])


def test_a_microphone_that_never_answers_is_said_and_the_check_goes_on(
    media_browser, database_url, db_factory, tmp_path
):
    """Found: the check waited for the browser's answer to the microphone's request for ever (a prompt left
    open, a browser that never asks), the page saying "Say something now" and the host never told.  Now the page
    says the microphone is not answering, and the check goes on without it: the host sees "Recording failed"."""
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1, players=PLAYERS)
    with ServedApp({"DATABASE_URL": database_url}) as served:
        mina = media_browser.new_page(viewport=PHONE)
        mina.add_init_script("navigator.mediaDevices.getUserMedia = () => new Promise(() => {});")
        mina.goto(f"{served.url}/play/{people.players['Mina']}")
        mina.wait_for_selector("#check-device", timeout=WAIT_MS)
        start_check(mina, heard=True)
        mina.wait_for_function(
            "document.querySelector('.device-check').textContent.includes('The microphone is not answering')",
            timeout=WAIT_MS,
        )
        mina.screenshot(path=str(screenshot_dir(tmp_path) / "device-check-microphone-waiting-390.png"))
        no_sideways_scroll(mina)
        mina.wait_for_selector("#check-result p", timeout=20_000)  # the check gives the microphone up at 12 s
        assert "Recording failed" in mina.inner_text("#check-result")
