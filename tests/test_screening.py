"""The demo's clips in Chromium against a served gevent app, as `make run` leaves them: the host plays a clip
from the console and it starts on the stage and two players' pages together (the spread is measured and
printed), a page that reloads mid-clip joins where the screening is, answering opens when the clip has played,
and a juror's phone gets the light rendition, not started by itself.

The demo is loaded by the real command (`vtt demo load`), which generates its clips into the media folder.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from sqlalchemy import select

from tests.support.browser import FULL_HD, PHONE, WAIT_MS, host_console, host_step, no_sideways_scroll, screenshot_dir
from tests.support.paths import ROOT
from tests.support.served import ServedApp
from vtt.access.admission import stage_key
from vtt.config import Settings

pytestmark = pytest.mark.browser

# Every page records when its video fires "playing" (one clock: the pages share this machine), and the page's
# clock offset to the server's.
RECORD_PLAYING = """(selector) => {
    window.playingAt = [];
    document.querySelector(selector).addEventListener("playing", () =>
        window.playingAt.push(performance.timeOrigin + performance.now()));
}"""
START_SPREAD_MS = 250  # two players' pages start the clip within this of each other (measured: see the output)


@pytest.fixture
def demo(database_url, tmp_path):
    """`vtt demo load` into a fresh database and media folder; the session's id, code and people's tokens."""
    media = tmp_path / "media"
    env = {"DATABASE_URL": database_url, "VTT_MEDIA_DIR": str(media)}
    done = subprocess.run(
        [sys.executable, "-m", "vtt.cli", "demo", "load"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    from vtt.db import make_db_factory, make_engine
    from vtt.models import Juror, Player, VttSession

    engine = make_engine(database_url)
    with make_db_factory(engine)() as db:
        session = db.scalar(select(VttSession))
        players = {p.name: p.token for p in db.scalars(select(Player).where(Player.session_id == session.id))}
        juror = db.scalar(select(Juror).where(Juror.session_id == session.id, Juror.label == "J01"))
        people = type(
            "Demo",
            (),
            {
                "session_id": session.id,
                "code": session.join_code,
                "players": players,
                "juror": juror.token,
                "media": media,
                "env": env,
            },
        )
    engine.dispose()
    return people


def video_state(page, selector: str) -> dict:
    return page.eval_on_selector(
        selector,
        """(v) => ({t: v.currentTime, paused: v.paused, muted: v.muted,
        ready: v.readyState, width: v.videoWidth, height: v.videoHeight, src: v.currentSrc, hidden: v.hidden,
        controls: v.controls})""",
    )


def wait_playing(page, selector: str) -> None:
    page.wait_for_function(
        """(s) => { const v = document.querySelector(s);
        return v && !v.paused && v.currentTime > 0 && v.readyState >= 2; }""",
        arg=selector,
        timeout=WAIT_MS,
    )


# The media rule of Safari and iOS (WebKit), the strictest of the three engines (docs/design.md, "Media rules per
# engine"): an element may play with sound only once it has itself been played inside the person's touch; a touch
# elsewhere on the page unlocks nothing, and sound turned on without one pauses the element. Headless Chromium lets
# every page start a video with sound whatever --autoplay-policy says, and reports every page as activated, so the
# pages get the rule from this script. A touch is a real (trusted) pointer, click or key event: while its handlers
# run (and their promise reactions), a play() unlocks that element. `window.unlockedMedia(element)` says whether
# the element has been unlocked.
MEDIA_RULE = """(() => {
    let touching = false;
    for (const kind of ["pointerdown", "pointerup", "touchend", "click", "keydown"]) {
        window.addEventListener(kind, (event) => {
            if (!event.isTrusted) return;
            touching = true;
            setTimeout(() => { touching = false; }, 0);
        }, true);
    }
    const unlocked = new WeakSet();
    window.unlockedMedia = (element) => unlocked.has(element);
    const media = HTMLMediaElement.prototype;
    const play = media.play;
    media.play = function () {
        if (touching) unlocked.add(this);
        if (!this.muted && !unlocked.has(this)) {
            return Promise.reject(new DOMException("sound needs a touch on this element", "NotAllowedError"));
        }
        return play.call(this);
    };
    const muted = Object.getOwnPropertyDescriptor(media, "muted");
    Object.defineProperty(media, "muted", {
        configurable: true,
        get() { return muted.get.call(this); },
        set(value) {
            muted.set.call(this, value);
            if (!value && !unlocked.has(this) && !this.paused) this.pause();
        },
    });
})();"""


class StrictBrowser:
    """Pages under MEDIA_RULE, opened as ``browser.new_page(viewport=...)`` opens them."""

    def __init__(self, browser):
        self.context = browser.new_context()
        self.context.add_init_script(MEDIA_RULE)

    def new_page(self, viewport: dict):
        page = self.context.new_page()
        page.set_viewport_size(viewport)
        return page


@pytest.fixture
def strict_browser(browser):
    strict = StrictBrowser(browser)
    yield strict
    strict.context.close()


def test_the_host_plays_a_demo_clip_for_the_room(strict_browser, demo, tmp_path):
    browser = strict_browser
    shots = screenshot_dir(tmp_path)
    with ServedApp(demo.env) as app:
        host = host_console(browser, app.url, demo)
        stage = browser.new_page(viewport=FULL_HD)
        stage.goto(f"{app.url}/stage/{demo.code}?key={stage_key(Settings.from_env().secret_key, demo.session_id)}")
        players = []
        for name in ("Lena", "Grace"):
            page = browser.new_page(viewport=PHONE)
            page.goto(f"{app.url}/play/{demo.players[name]}")
            # before the round: the tap that lets the page play with sound
            page.get_by_role("button", name="Tap to join the screening").click()
            page.wait_for_selector(".clip-join", state="hidden", timeout=WAIT_MS)
            players.append(page)
        # a player who never taps it: the clip plays muted with "Tap for sound"
        untapped = browser.new_page(viewport=PHONE)
        untapped.goto(f"{app.url}/play/{demo.players['Tomás']}")
        untapped.wait_for_selector(".clip-join", state="visible", timeout=WAIT_MS)
        juror = browser.new_page(viewport=PHONE)
        juror.goto(f"{app.url}/jury/{demo.juror}")

        # The console's preflight: every demo clip is there and plays in browsers.
        host.wait_for_function(
            "document.getElementById('clips-summary').textContent.includes('30 clips ready')", timeout=60_000
        )
        host_step(host, "Open the lobby")
        host_step(host, "Start round 1")
        host_step(host, "Show question 1")
        question = host.evaluate("""() => { const rows = [...document.querySelectorAll('#clips-table tbody tr')];
            return rows[0].dataset.qid; }""")
        for page in players:
            page.wait_for_selector("#clip video", timeout=WAIT_MS)
            page.wait_for_function("document.querySelector('#clip video').readyState >= 1", timeout=WAIT_MS)
            state = video_state(page, "#clip video")
            assert state["paused"] and not state["controls"], state  # the host starts it
            assert "starts when the host plays it" in page.inner_text("#clip")
            page.evaluate(RECORD_PLAYING, "#clip video")
        stage.wait_for_function("document.querySelector('#question video')?.readyState >= 1", timeout=WAIT_MS)
        stage.evaluate(RECORD_PLAYING, "#question video")
        for page in (*players, untapped, stage, juror):  # inline on a phone, never the fullscreen player
            media = page.eval_on_selector_all(
                "video, audio",
                "(all) => all.map((m) => [m.hasAttribute('playsinline'), m.hasAttribute('webkit-playsinline')])",
            )
            assert media and all(all(flags) for flags in media), (page.url, media)

        host_step(host, "Play the clip for everyone")
        starts_at = screening_start(demo)
        for page in players:
            wait_playing(page, "#clip video")
        wait_playing(stage, "#question video")
        wait_playing(host, "#clip-preview video")
        started = [page.evaluate("window.playingAt[0]") for page in players]
        spread_ms = abs(started[0] - started[1])
        late_ms = [moment - starts_at for moment in started]
        print(
            f"\nscreening of {question}: players started {spread_ms:.0f} ms apart, "
            f"{late_ms[0]:.0f} and {late_ms[1]:.0f} ms after the server's start"
        )
        assert spread_ms <= START_SPREAD_MS
        assert all(-100 <= late <= 1000 for late in late_ms), late_ms

        # It plays, from the span's start, with sound on the pages that were tapped, muted on the untapped stage.
        first = [video_state(page, "#clip video") for page in players]
        players[0].wait_for_timeout(800)
        later = [video_state(page, "#clip video") for page in players]
        for page, before, after in zip(players, first, later):
            assert after["t"] - before["t"] >= 0.5, (before, after)
            assert not after["muted"], after
            assert "rendition=phone" in after["src"] and after["width"] < 640, after  # a phone: the light clip
            assert page.evaluate("unlockedMedia(document.querySelector('#clip video'))")  # the lobby's tap did it
        # The page nobody touched: muted, not frozen, until the person taps for sound.
        wait_playing(untapped, "#clip video")
        alone = video_state(untapped, "#clip video")
        assert alone["muted"] and not alone["paused"], alone
        untapped.get_by_role("button", name="Tap for sound").click()
        untapped.wait_for_function("!document.querySelector('#clip video').muted", timeout=WAIT_MS)
        untapped.wait_for_timeout(300)
        heard = video_state(untapped, "#clip video")
        assert not heard["muted"] and not heard["paused"], heard
        assert untapped.locator(".clip-sound").is_hidden()
        staged = video_state(stage, "#question video")
        assert staged["muted"] and not staged["paused"], staged  # never frozen: muted rather than stopped
        assert "rendition" not in staged["src"] and staged["width"] == 640, staged  # the projector: the clip itself
        stage.get_by_role("button", name="Tap for sound").click()  # someone touches the projector's laptop
        stage.wait_for_function("!document.querySelector('#question video').muted", timeout=WAIT_MS)
        stage.wait_for_timeout(300)
        assert not video_state(stage, "#question video")["paused"]
        stage.screenshot(path=str(shots / "stage-screening-1080p.png"))
        players[0].screenshot(path=str(shots / "player-screening-phone.png"))

        # The host replays it; a player who reloads meanwhile joins where the screening is (within the drift the
        # pages allow).
        host_step(host, "Replay the clip")
        players[1].reload()
        players[1].get_by_role("button", name="Tap to join the screening").click()
        wait_playing(players[1], "#clip video")
        players[1].wait_for_timeout(600)
        assert not video_state(players[1], "#clip video")["muted"]  # joined mid-clip, with sound
        positions = [page.evaluate("document.querySelector('#clip video').currentTime") for page in players]
        assert abs(positions[0] - positions[1]) <= 0.6, positions

        # The juror's phone: the question with the clip in its light rendition, not started by itself.
        juror.wait_for_selector("#question video", timeout=WAIT_MS)
        juror.wait_for_function("document.querySelector('#question video').readyState >= 1", timeout=WAIT_MS)
        mine = video_state(juror, "#question video")
        assert "rendition=phone" in mine["src"] and mine["paused"] and mine["controls"], mine
        assert mine["width"] < 640, mine  # the phone rendition, not the projector's
        no_sideways_scroll(juror)
        juror.screenshot(path=str(shots / "juror-clip-phone.png"))

        # When the clip has played, answering opens by itself.
        for page in players:
            page.wait_for_function("document.getElementById('phase').textContent.includes('answering')", timeout=30_000)
            page.wait_for_function("document.getElementById('clip').innerText.includes('has played')", timeout=WAIT_MS)
            assert video_state(page, "#clip video")["paused"]  # its last frame stays
        assert "Traceback" not in app.output


def screening_start(demo) -> float:
    """When the server said the screening starts (ms since the epoch), from the database."""
    from vtt.db import make_db_factory, make_engine
    from vtt.models import SessionQuestion

    engine = make_engine(demo.env["DATABASE_URL"])
    with make_db_factory(engine)() as db:
        moment = db.scalar(
            select(SessionQuestion.clip_started_at).where(
                SessionQuestion.session_id == demo.session_id, SessionQuestion.clip_started_at.is_not(None)
            )
        )
    engine.dispose()
    return moment.timestamp() * 1000
