"""A read-aloud player's page in a real Chromium (a young child: answer modes ["text", "read_aloud"]), with the
browser's speech synthesis replaced by a recorder (``page.add_init_script``): every utterance's text and language is
kept, and the voices are what the test says. The server side of answer modes is tests/test_answer_modes.py."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from tests.support.browser import LAPTOP, PHONE, WAIT_MS, host_console, host_step, no_sideways_scroll, screenshot_dir
from tests.support.live import make_session
from vtt.models import Answer, Player

pytestmark = pytest.mark.browser

PLAYERS = [
    {"name": "Mina", "kind": "human", "age": 4, "stage": "pre-operational", "answer_modes": ["text", "read_aloud"]},
    {"name": "Grace", "kind": "human", "age": 31},
    {"name": "Agent", "kind": "ai"},
]

# The page's speech synthesis, recorded: `window.__spoken` gets {text, lang, voice} per utterance, in order.
# VOICES: the voices getVoices() gives; null: the browser has no speech synthesis at all. `window.__voicesArrive(list)`:
# the voices load late and, as in Safari, without a voiceschanged event.
FAKE_SPEECH = """
(() => {
  let voices = %s;
  window.__spoken = [];
  window.__voicesArrive = (list) => { voices = list; };
  if (voices === null) {
    Object.defineProperty(window, "speechSynthesis", { value: undefined, configurable: true });
    return;
  }
  const synth = {
    getVoices: () => voices,
    speak(utterance) {
      const voice = utterance.voice ? utterance.voice.name : null;
      window.__spoken.push({ text: utterance.text, lang: utterance.lang, voice });
      setTimeout(() => { if (utterance.onend) utterance.onend({}); }, 0);
    },
    cancel() {}, pause() {}, resume() {},
    speaking: false, pending: false, paused: false,
    addEventListener() {}, removeEventListener() {},
  };
  class Utterance { constructor(text) { this.text = text; this.lang = ""; this.voice = null; } }
  Object.defineProperty(window, "speechSynthesis", { value: synth, configurable: true });
  Object.defineProperty(window, "SpeechSynthesisUtterance", { value: Utterance, configurable: true, writable: true });
})();
"""
ENGLISH = [{"name": "Fake English", "lang": "en-US", "default": True, "localService": True, "voiceURI": "fake-en"}]


def spoken(page) -> list[dict]:
    return page.evaluate("window.__spoken")


def player_page(browser, url: str, token: str, voices, *, viewport=PHONE, lang: str | None = None, problems=None):
    """The player's page with its speech synthesis faked; ``problems``: a list that gets the page's script errors and
    Content-Security-Policy refusals, the policy then enforced (the browser fixture bypasses it; the clip's 404 is
    expected: the demo's clips are not in this test's media folder)."""
    page = browser.new_page(viewport=viewport, bypass_csp=problems is None)
    if problems is not None:
        page.on("console", lambda line: problems.append(line.text) if "Content Security Policy" in line.text else None)
        page.on("pageerror", lambda error: problems.append(str(error)))
    page.add_init_script(FAKE_SPEECH % json.dumps(voices))
    page.goto(f"{url}/play/{token}" + (f"?lang={lang}" if lang else ""))
    page.wait_for_selector("#connection:not(:empty)", timeout=WAIT_MS)
    return page


def test_a_read_aloud_player_hears_the_question_and_each_option_and_answers_with_big_buttons(
    browser, served, db_factory, tmp_path
):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1, players=PLAYERS)
    shots = screenshot_dir(tmp_path)
    host = host_console(browser, served.url, people)
    mina = player_page(browser, served.url, people.players["Mina"], ENGLISH)
    grace = player_page(browser, served.url, people.players["Grace"], ENGLISH, viewport=LAPTOP)
    for label in ("Open the lobby", "Start round 1", "Show question 1"):
        host_step(host, label)
    mina.wait_for_selector(".big-option", timeout=WAIT_MS)
    assert spoken(mina) == []  # not over the clip: the reading starts when answering opens
    host_step(host, "Open answering")

    question = mina.inner_text(".question-text")
    options = mina.locator(".big-option .option-text").all_inner_texts()
    assert len(options) >= 2
    expected = [question] + [f"Number {n}: {option}" for n, option in enumerate(options, 1)]
    mina.wait_for_function(f"window.__spoken.length >= {len(expected)}", timeout=WAIT_MS)
    assert [(line["text"], line["lang"], line["voice"]) for line in spoken(mina)] == [
        (text, "en", "Fake English") for text in expected
    ]
    assert mina.locator(".big-option .option-number").all_inner_texts() == [str(n) for n in range(1, len(options) + 1)]
    box = mina.locator(".big-option").first.bounding_box()
    assert box["height"] >= 64 and box["width"] >= 300  # a child's finger finds it
    from axe_playwright_python.sync_playwright import Axe

    serious = [v for v in Axe().run(mina).response["violations"] if v["impact"] in ("serious", "critical")]
    assert serious == [], json.dumps(serious, indent=1)[:2000]

    # Touching option 2 reads it again and selects it: it does not answer.
    mina.locator(".big-option").nth(1).click()
    mina.wait_for_function(f"window.__spoken.length === {len(expected) + 1}", timeout=WAIT_MS)
    assert spoken(mina)[-1]["text"] == f"Number 2: {options[1]}"
    assert mina.get_attribute(".big-option >> nth=1", "aria-pressed") == "true"
    assert mina.inner_text("#pick-hint").startswith("Number 2 is selected")
    assert mina.inner_text("#answer-state") == ""
    mina.wait_for_timeout(300)
    with db_factory() as db:
        child = db.scalar(select(Player.id).where(Player.token == people.players["Mina"]))
        assert db.scalar(select(Answer).where(Answer.player_id == child)) is None
    no_sideways_scroll(mina)
    mina.screenshot(path=str(shots / "read-aloud-player-390.png"), full_page=True)
    mina.set_viewport_size(LAPTOP)
    no_sideways_scroll(mina)
    mina.screenshot(path=str(shots / "read-aloud-player-1366.png"), full_page=True)
    mina.set_viewport_size(PHONE)

    # "Read it again" reads the whole question again.
    mina.get_by_role("button", name="Read it again").click()
    mina.wait_for_function(f"window.__spoken.length === {2 * len(expected) + 1}", timeout=WAIT_MS)
    assert [line["text"] for line in spoken(mina)[-len(expected) :]] == expected

    # The big Choose button answers with option 2; the server has it, and the host sees it.
    mina.get_by_role("button", name="Choose", exact=True).click()
    mina.wait_for_selector("#answer-state.received", timeout=WAIT_MS)
    mina.wait_for_selector(".big-option.chosen >> nth=0", timeout=WAIT_MS)
    assert mina.get_attribute(".big-option >> nth=1", "class").split() == ["big-option", "chosen"]
    with db_factory() as db:
        assert db.scalar(select(Answer.choice_index).where(Answer.player_id == child)) == 1
    host.wait_for_function(
        "[...document.querySelectorAll('#answers tbody tr')].some((row) => row.textContent.includes('Mina')"
        f" && row.textContent.includes({json.dumps(options[1])}))",
        timeout=WAIT_MS,
    )
    assert "read aloud" in host.inner_text("#people")  # the host knows whose page reads aloud
    assert host.locator("#speech-notices").is_hidden()  # Mina's page has its voice
    mina.screenshot(path=str(shots / "read-aloud-player-answered-390.png"), full_page=True)

    # A text player's page is today's: radio options, no reading, no big buttons.
    grace.wait_for_selector("#answer-form input[name=choice]:not([disabled])", timeout=WAIT_MS)
    assert grace.locator(".big-option, #read-again, #voice-note").count() == 0
    assert spoken(grace) == []
    assert "reads-aloud" not in (grace.get_attribute("body", "class") or "")


@pytest.mark.parametrize("voices", [[], None], ids=["no-voice", "no-speech-synthesis"])
def test_a_read_aloud_page_without_a_voice_says_so_and_the_host_console_shows_it(
    browser, served, db_factory, voices, tmp_path
):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1, players=PLAYERS)
    host = host_console(browser, served.url, people)
    problems: list[str] = []  # this page runs under the app's Content-Security-Policy
    mina = player_page(browser, served.url, people.players["Mina"], voices, lang="ko", problems=problems)
    note = host.wait_for_selector("#speech-notices:not([hidden])", timeout=WAIT_MS)
    assert note.inner_text().splitlines()[-1] == "Mina's page has no voice for ko: read the questions aloud yourself."
    assert mina.inner_text("#voice-note").startswith("이 기기는 이 언어로 소리 내어")  # in Korean, as the page is
    case = "no-speech-synthesis" if voices is None else "no-voice"
    host.screenshot(path=str(screenshot_dir(tmp_path) / f"host-console-{case}.png"))

    # The child still picks with big buttons (the host reads): a touch selects, a second touch answers.
    for label in ("Open the lobby", "Start round 1", "Show question 1", "Open answering"):
        host_step(host, label)
    mina.wait_for_selector(".big-option:not([disabled])", timeout=WAIT_MS)
    assert mina.locator("#read-again").is_hidden()
    no_sideways_scroll(mina)
    mina.screenshot(path=str(screenshot_dir(tmp_path) / f"read-aloud-player-{case}-390.png"), full_page=True)
    mina.locator(".big-option").first.click()
    assert mina.inner_text("#answer-state") == ""
    mina.locator(".big-option").first.click()
    mina.wait_for_selector("#answer-state.received", timeout=WAIT_MS)
    assert spoken(mina) == []
    assert problems == []


def test_a_voice_that_loads_after_the_wait_reads_the_open_question_by_itself(browser, served, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1, players=PLAYERS)
    host = host_console(browser, served.url, people)
    mina = player_page(browser, served.url, people.players["Mina"], [])
    mina.wait_for_selector("#voice-note:not([hidden])", timeout=WAIT_MS)  # no voice within the page's wait
    for label in ("Open the lobby", "Start round 1", "Show question 1", "Open answering"):
        host_step(host, label)
    mina.wait_for_selector(".big-option:not([disabled])", timeout=WAIT_MS)
    host.wait_for_selector("#speech-notices:not([hidden])", timeout=WAIT_MS)
    assert spoken(mina) == []

    mina.evaluate("(voices) => window.__voicesArrive(voices)", ENGLISH)  # seconds late, and no event says so
    mina.wait_for_function("window.__spoken.length >= 1", timeout=WAIT_MS)
    assert spoken(mina)[0] == {"text": mina.inner_text(".question-text"), "lang": "en", "voice": "Fake English"}
    assert mina.locator("#voice-note").is_hidden() and mina.locator("#read-again").is_visible()
    host.wait_for_selector("#speech-notices", state="hidden", timeout=WAIT_MS)  # the host need not read for Mina
