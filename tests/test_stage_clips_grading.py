"""In Chromium against a served gevent app: the stage screen on a 1920x1080 projector, a clip that is missing or
cannot play (player page and stage), and the grading page taking in new answers while the session runs.

The host's moves go through a small Socket.IO client signed in with the browser's login cookie, the players'
answers and the jurors' votes through clients of their own: only the pages under test are in the browser.
"""

from __future__ import annotations

import itertools
import secrets
from pathlib import Path

import pytest
import socketio
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.support.apps import HOST_PASSWORD
from tests.support.browser import FULL_HD, HD, screenshot_dir
from vtt.access.admission import stage_key
from vtt.config import Settings

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1366, "height": 900}
WAIT_MS = 15_000
# One round of three questions, each with a clip: one that plays, one whose file is missing, one that is no video.
BANK = """qid,question,type,choices,answer,video,start,end,round
c1,What colour fills the screen at first?,open,,red,clips/colours.webm,0,1.5,1
c2,What does the missing clip show?,open,,nothing,clips/missing.mp4,,,1
c3,Which of these is a colour?,mcq,Red|Table|Chair|Window,0,clips/broken.mp4,,,1
"""
PLAYERS = [
    {"name": "Mina", "kind": "human", "age": 10},
    {"name": "Grace", "kind": "human", "age": 31},
    {"name": "Agent", "kind": "ai"},
]
# A long answer: the stage shrinks its type to keep every answer on screen, never below 40 %.
LONG_ANSWER = (
    "At first the whole screen is a strong, even red, with nothing else in the picture; after about one "
    "second it turns blue, the same flat blue everywhere, and it stays blue until the clip ends. There "
    "are no people, no objects and no sound, only the two colours one after the other."
)
_ids = itertools.count(1)


def action_id(prefix: str) -> str:
    return f"{prefix}-{next(_ids)}-{secrets.token_hex(3)}"


def make_clip(path: Path) -> None:
    """Two seconds of VP8 video (red, then blue): a WebM every Chromium plays."""
    import av
    import numpy as np

    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libvpx", rate=10)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        for index in range(20):
            image = np.zeros((48, 64, 3), np.uint8)
            image[:] = (220, 30, 30) if index < 10 else (30, 30, 220)
            for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)


@pytest.fixture
def media(tmp_path) -> Path:
    folder = tmp_path / "media"
    make_clip(folder / "clips" / "colours.webm")
    (folder / "clips" / "broken.mp4").write_bytes(b"this is not a video at all " * 40)
    return folder


@pytest.fixture
def served_env(media) -> dict[str, str]:
    return {"VTT_MEDIA_DIR": str(media)}


@pytest.fixture
def clip_session(db_factory, tmp_path):
    """The three-question session (open join on, two jurors); its id, code and tokens."""
    from sqlalchemy import select

    from vtt.banks import import_bank, read_bank
    from vtt.db import transaction
    from vtt.models import Juror, Player
    from vtt.sessions.create import SessionConfig, create_session

    bank = tmp_path / "clips.csv"
    bank.write_text(BANK, encoding="utf-8")
    with transaction(db_factory) as db:
        import_bank(db, read_bank(bank), "Clip bank")
        config = SessionConfig.from_dict(
            {
                "name": "Projector night",
                "bank": "Clip bank",
                "rounds": 1,
                "questions_per_round": 3,
                "seed": 7,
                "reveal_policy": "per-round",
                "players": PLAYERS,
                "open_join": True,
            }
        )
        vtt_session = create_session(db, config)
        for label in ("J1", "J2"):
            db.add(Juror(session_id=vtt_session.id, label=label, token=secrets.token_urlsafe(12)))
        db.flush()
        players = {p.name: p.token for p in db.scalars(select(Player).where(Player.session_id == vtt_session.id))}
        jurors = {j.label: j.token for j in db.scalars(select(Juror).where(Juror.session_id == vtt_session.id))}
        return {"id": vtt_session.id, "code": vtt_session.join_code, "players": players, "jurors": jurors}


class Driver:
    """The host's flow (a Socket.IO client with the browser's login cookie) and the players' and jurors' moves."""

    def __init__(self, url: str, people: dict, cookie: str):
        self.url, self.people = url, people
        self.host = self._client({"code": people["code"], "role": "host"}, cookie)
        self.players = {name: self._client({"token": token}) for name, token in people["players"].items()}
        self.questions: list[dict] = []
        self.players["Mina"].on("question", self.questions.append)

    def _client(self, auth: dict, cookie: str | None = None) -> socketio.Client:
        client = socketio.Client()
        client.connect(
            self.url, auth=auth, transports=["websocket"], headers={"Cookie": cookie} if cookie else {}, wait_timeout=10
        )
        return client

    def step(self, action: str, **args) -> None:
        reply = self.host.call("host", {"id": action_id("h"), "action": action, **args}, timeout=10)
        assert reply["ok"], (action, reply)

    def answer(self, name: str, question: dict, **given) -> None:
        reply = self.players[name].call(
            "answer", {"id": action_id("a"), "question": question["id"], **given}, timeout=10
        )
        assert reply["ok"], reply

    def vote(self, label: str, alias: str | None) -> None:
        juror = self._client({"token": self.people["jurors"][label]})
        try:
            round_number = 1
            reply = juror.call(
                "vote", {"id": action_id("v"), "round": round_number, "alias": alias, "confidence": 4}, timeout=10
            )
            assert reply["ok"], reply
        finally:
            juror.disconnect()

    def close(self) -> None:
        for client in [self.host, *self.players.values()]:
            client.disconnect()


def sign_in(browser, url: str, next_path: str):
    page = browser.new_page(viewport=LAPTOP)
    page.goto(f"{url}/host/login?next={next_path}")
    page.fill("#password", HOST_PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"**{next_path}**", timeout=WAIT_MS)
    cookie = "; ".join(f"{c['name']}={c['value']}" for c in page.context.cookies())
    return page, cookie


def fits(page) -> dict:
    """The page's scroll size against its viewport: a projector shows no scrollbars, a phone no sideways scroll."""
    return page.evaluate("""() => ({width: document.documentElement.scrollWidth, height:
        document.documentElement.scrollHeight, innerWidth: innerWidth, innerHeight: innerHeight})""")


def assert_no_scrollbars(page) -> None:
    size = fits(page)
    assert size["width"] <= size["innerWidth"] and size["height"] <= size["innerHeight"], size


def assert_no_sideways_scroll(page) -> None:
    size = fits(page)
    assert size["width"] <= size["innerWidth"], (page.url, size)


def in_view(page, selector: str) -> dict:
    """Where an element is and its type size; ``inside`` when it lies wholly within the viewport."""
    return page.eval_on_selector(
        selector,
        """(node) => { const r = node.getBoundingClientRect();
        return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height, width: r.width,
                font: parseFloat(getComputedStyle(node).fontSize),
                inside: r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth}; }""",
    )


def clip_state(page, container: str) -> str:
    """``missing`` (the notice is shown), ``video`` (a player that loaded) or ``waiting``."""
    return page.evaluate(
        """(container) => {
        const box = document.querySelector(container);
        if (!box) return "waiting";
        if (box.querySelector(".clip-missing:not([hidden])")) return "missing";
        const video = box.querySelector("video");
        return video && video.readyState >= 1 ? "video" : "waiting"; }""",
        container,
    )


# A clip's first bytes or its error: a CI run on a busy machine once passed 15 s without either (cause unknown;
# the message below says what the page had), while every other wait of the test held.
CLIP_WAIT_MS = 2 * WAIT_MS


def wait_clip(page, container: str, expected: str) -> None:
    """Until the clip box shows what ``expected`` says; on a timeout the message says what the page had."""
    try:
        page.wait_for_function(
            """([container, expected]) => {
            const box = document.querySelector(container);
            if (!box) return false;
            if (expected === "missing") return !!box.querySelector(".clip-missing:not([hidden])");
            const video = box.querySelector("video");
            return !box.querySelector(".clip-missing:not([hidden])") && video && video.readyState >= 1; }""",
            arg=[container, expected],
            timeout=CLIP_WAIT_MS,
        )
    except PlaywrightTimeout:
        seen = page.evaluate(
            """(container) => { const box = document.querySelector(container);
            const video = box && box.querySelector("video");
            return box && {notice: !!box.querySelector(".clip-missing:not([hidden])"), video: video && {
                src: video.currentSrc, readyState: video.readyState, networkState: video.networkState,
                error: video.error && video.error.code, hidden: video.hidden}}; }""",
            container,
        )
        raise AssertionError(
            f"{page.url} {container}: waited {CLIP_WAIT_MS} ms for {expected!r}; the page has {seen}"
        ) from None


EXPECTED_CLIP = {"clips/colours.webm": "video", "clips/missing.mp4": "missing", "clips/broken.mp4": "missing"}


def check_lobby(stage, small_stage, shots) -> None:
    """The lobby: the join QR, code and link in large type, no scrollbars."""
    for page in (stage, small_stage):
        page.wait_for_selector("#join:not([hidden])", timeout=WAIT_MS)
        page.wait_for_function("document.querySelector('#join img').complete", timeout=WAIT_MS)
        assert_no_scrollbars(page)
        qr, code = in_view(page, "#join img"), in_view(page, ".join-code")
        assert qr["inside"] and qr["height"] >= 0.3 * page.viewport_size["height"], qr
        assert code["inside"] and code["font"] >= 0.05 * page.viewport_size["width"], code
        assert in_view(page, ".join-url")["inside"]
    stage.screenshot(path=str(shots / "stage-1080p-lobby.png"))


def start_grading(grading) -> None:
    """The grader names themself; the page then listens for answers."""
    grading.fill("#grader-input", "Kim")
    grading.get_by_role("button", name="Start grading").click()
    grading.wait_for_selector("#grader-name", timeout=WAIT_MS)
    grading.wait_for_function("document.getElementById('live-status').textContent.startsWith('Live')", timeout=WAIT_MS)
    grading.evaluate("window.notReloaded = true")


def check_question_screens(player, stage, small_stage, question: dict, position: int, shots) -> None:
    """The clip on the player's phone and on the stage (a player that loads, or the notice), and the question in
    large type, everything on the projector without scrollbars."""
    expected = EXPECTED_CLIP[question["clip"]["src"]]
    wait_clip(player, "#clip", expected)
    wait_clip(stage, "#question", expected)
    if expected == "missing":
        assert "Clip not available." in player.inner_text("#clip")
        assert "Clip not available." in stage.inner_text("#question")
        # the page keeps its one video element (a tap unlocked it) but hides it
        assert player.locator("#clip video:visible").count() == 0
        assert stage.locator("#question video:visible").count() == 0
        notice = in_view(stage, ".clip-missing-title")
        assert notice["font"] >= 32, notice  # read from the back of the room
    for page in (stage, small_stage):
        page.wait_for_selector("#question:not([hidden]) .question-text", timeout=WAIT_MS)
        assert_no_scrollbars(page)
        text = in_view(page, "#question .question-text")
        assert text["inside"] and text["font"] >= 0.025 * page.viewport_size["width"], text
        if question["type"] == "mcq":
            assert in_view(page, "#question .choices")["inside"]
            assert in_view(page, "#question .choices li:last-child")["inside"]
    assert_no_sideways_scroll(player)
    stage.screenshot(path=str(shots / f"stage-1080p-question-{position}.png"))
    if expected == "missing":
        player.screenshot(path=str(shots / f"player-phone-clip-missing-{position}.png"))
    small_stage.screenshot(path=str(shots / f"stage-720p-question-{position}.png"))


def grade_while_answers_arrive(drive, grading, question: dict) -> None:
    """Answers reach the grading page live: the grader starts marking Mina's answer; Grace's arrives meanwhile and
    the mark is kept; an edit before answering closes is merged in, not reloaded."""
    count = f"#q-{question['id']} li.answer"
    assert grading.locator(count).count() == 0
    drive.answer("Mina", question, text="red, then blue")
    grading.wait_for_function(f"document.querySelectorAll('{count}').length === 1", timeout=WAIT_MS)
    assert "red, then blue" in grading.inner_text(count)
    grading.locator(f"{count} input[name=correct][value='1']").first.check()
    drive.answer("Grace", question, text="red")
    grading.wait_for_function(f"document.querySelectorAll('{count}').length === 2", timeout=WAIT_MS)
    assert grading.locator(f"{count}.arrived").count() >= 1
    assert grading.locator(f"{count} input[name=correct][value='1']").first.is_checked()
    drive.answer("Grace", question, text="red at first")  # an edit before answering closes
    grading.wait_for_function(
        f"[...document.querySelectorAll('{count} .answer-text')].some((node) => node.textContent === 'red at first')",
        timeout=WAIT_MS,
    )
    assert grading.evaluate("window.notReloaded") is True  # merged in, not reloaded
    assert "new answer" in grading.inner_text("#live-status")
    drive.answer("Agent", question, text=LONG_ANSWER)


def check_revealed_answers(stage, small_stage, shots) -> None:
    """The reveal: the three answers in large type, on screen together."""
    for page in (stage, small_stage):
        page.wait_for_selector("#answers:not([hidden]) .answers-grid .card", timeout=WAIT_MS)
        assert page.locator("#answers-grid .card").count() == 3
        assert_no_scrollbars(page)
        for index in range(3):
            card = in_view(page, f"#answers-grid .card:nth-child({index + 1})")
            assert card["inside"] and card["font"] >= 0.4 * 0.022 * page.viewport_size["width"], card
        assert LONG_ANSWER in page.inner_text("#answers-grid")
    stage.screenshot(path=str(shots / "stage-1080p.png"))
    small_stage.screenshot(path=str(shots / "stage-720p-answers.png"))


def check_vote_tally_and_identities(drive, stage, small_stage, shots) -> None:
    """The vote count, the tally and the identities in large type, inside the screen."""
    drive.step("open_vote")
    stage.wait_for_selector("#count:not([hidden])", timeout=WAIT_MS)
    drive.vote("J1", "A")
    drive.vote("J2", None)
    for page in (stage, small_stage):
        page.wait_for_function(
            "document.getElementById('vote-count').textContent.startsWith('2 of 2')", timeout=WAIT_MS
        )
        assert_no_scrollbars(page)
        count = in_view(page, "#vote-count")
        assert count["inside"] and count["font"] >= 0.04 * page.viewport_size["width"], count
    drive.step("close_vote")
    drive.step("show_tally")
    for page in (stage, small_stage):
        page.wait_for_selector(".tally .bars li", timeout=WAIT_MS)
        assert_no_scrollbars(page)
        assert in_view(page, ".tally")["inside"] and in_view(page, ".tally .bars li:last-child")["inside"]
        assert not page.locator("#join").is_visible()
    stage.screenshot(path=str(shots / "stage-1080p-tally.png"))
    drive.step("reveal_identities")
    for page in (stage, small_stage):
        page.wait_for_selector(".identities li", timeout=WAIT_MS)
        assert_no_scrollbars(page)
        assert in_view(page, ".identities")["inside"] and in_view(page, ".tally .bars li:last-child")["inside"]
    stage.screenshot(path=str(shots / "stage-1080p-identities.png"))


def test_stage_at_1080p_clips_that_fail_and_live_grading(browser, served, clip_session, tmp_path):
    people, url = clip_session, served.url
    shots = screenshot_dir(tmp_path)
    grading, cookie = sign_in(browser, url, f"/host/sessions/{people['id']}/grading/")
    stage = browser.new_page(viewport=FULL_HD)
    stage_link = f"{url}/stage/{people['code']}?key={stage_key(Settings.from_env().secret_key, people['id'])}"
    stage.goto(stage_link)
    small_stage = browser.new_page(viewport=HD)
    small_stage.goto(stage_link)
    player = browser.new_page(viewport=PHONE)
    player.goto(f"{url}/play/{people['players']['Grace']}")
    drive = Driver(url, people, cookie)
    try:
        drive.step("open_lobby")
        check_lobby(stage, small_stage, shots)
        start_grading(grading)
        drive.step("start_round")
        seen_clips = set()
        open_question = None
        for position in (1, 2, 3):
            drive.step("show_question")
            player.wait_for_function(
                f"document.getElementById('phase').textContent.includes('Question {position}')", timeout=WAIT_MS
            )
            question = drive.questions[-1]
            seen_clips.add(question["clip"]["src"])
            check_question_screens(player, stage, small_stage, question, position, shots)
            drive.step("open_answering")
            if question["type"] == "open":
                open_question = open_question or question
                grade_while_answers_arrive(drive, grading, question)
            else:
                for name in ("Mina", "Grace", "Agent"):
                    drive.answer(name, question, choice=0)
            drive.step("close_answering")
            drive.step("reveal")
            if question["type"] == "open" and question is open_question:
                check_revealed_answers(stage, small_stage, shots)
        assert seen_clips == set(EXPECTED_CLIP)
        check_vote_tally_and_identities(drive, stage, small_stage, shots)
    finally:
        drive.close()

    # The grading page at 390 px: no sideways scroll with the answers in.
    phone = browser.new_page(viewport=PHONE)
    phone.context.add_cookies(grading.context.cookies())
    phone.goto(f"{url}/host/sessions/{people['id']}/grading/")
    assert phone.locator("li.answer").count() == 6  # two open questions, three players
    assert_no_sideways_scroll(phone)


def test_pages_touched_fit_a_phone(browser, served, clip_session):
    """The new-session form (paper juror ticks), the grading page and a flash message at 390 px."""
    page, _cookie = sign_in(browser, served.url, "/host/sessions/new")
    phone = browser.new_page(viewport=PHONE)
    phone.context.add_cookies(page.context.cookies())
    for path in ("/host/sessions/new", f"/host/sessions/{clip_session['id']}/grading/", "/host/"):
        phone.goto(f"{served.url}{path}")
        assert_no_sideways_scroll(phone)
    phone.goto(f"{served.url}/host/sessions/new")
    phone.locator("input[name=jurors_source][value=list]").check()
    assert phone.locator("input[name='jurors-0-paper']").is_visible()
    assert_no_sideways_scroll(phone)
    phone.locator("[data-add-row=juror]").click()
    assert phone.locator("input[name='jurors-4-paper']").count() == 1  # an added row has the tick too
    phone.goto(f"{served.url}/host/sessions/{clip_session['id']}/results/files/tallies.pdf")  # a flash: no votes
    flash = phone.locator(".flash-error[role=alert]")
    assert flash.count() == 1 and "tallies.pdf" in flash.inner_text()
    assert_no_sideways_scroll(phone)
