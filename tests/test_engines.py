"""The live pages in Firefox ESR and WebKitGTK (tests/support/browser_engines.py) against a served gevent app, at a
phone's 390x844: a juror watches the clip, fills the sheet, votes and changes the vote; a player answers with an option
and in words; the Korean pages; a player's page joins the host's screening with the lobby tap and starts in step with
``starts_at`` (the offset is printed per engine); read-aloud with the engine's speech synthesis and without any; a
spoken answer recorded where the engine fakes a microphone, the "no microphone" message where it cannot.

The host is a Socket.IO client with the host's API token; the other players, small Socket.IO clients. Each page's
script errors must be none. Screenshots go to VTT_SCREENSHOTS (else the test's folder), named by engine.
"""

from __future__ import annotations

import time
import uuid

import av
import pytest
import socketio
from sqlalchemy import select

from tests.support.apps import host_api_token
from tests.support.browser import PHONE, PLAYERS, screenshot_dir, wait_connected
from tests.support.live import make_session
from tests.support.media import make_clip
from tests.support.served import ServedApp
from vtt.models import Answer, Juror, Player, Question, Recording, SessionQuestion, SheetEntry, Vote

pytestmark = pytest.mark.browser

WAIT = 15  # seconds
# When the page's video fired "playing" (ms since the epoch: the pages and the test share this machine's clock).
RECORD_PLAYING = """(selector) => {
  window.playingAt = [];
  document.querySelector(selector).addEventListener("playing", () =>
    window.playingAt.push(performance.timeOrigin + performance.now()));
}"""


class SocketHost:
    """The host's moves over Socket.IO (the console's own protocol), with the host's API token."""

    def __init__(self, url: str, code: str):
        self.client = socketio.Client(reconnection=False)
        self.client.connect(
            url, auth={"code": code, "role": "host", "host_token": host_api_token()}, transports=["websocket"]
        )

    def moves(self) -> list[str]:
        return self.client.call("snapshot", timeout=10)["snapshot"]["status"]["moves"]

    def move(self, action: str) -> None:
        reply = self.client.call("host", {"id": uuid.uuid4().hex, "action": action}, timeout=10)
        assert reply["ok"], (action, reply)

    def until(self, action: str) -> None:
        """The usual moves (no replay, no extension) until ``action`` is one of them, then ``action``."""
        for _ in range(30):
            moves = self.moves()
            if action in moves:
                return self.move(action)
            self.move(next(m for m in moves if m not in ("extend", "play_clip", "replay_clip")))
        raise AssertionError(f"{action} never came among the host's moves")

    def close(self) -> None:
        self.client.disconnect()


class SocketPlayers:
    """Players answering by socket: the first option, or a sentence."""

    def __init__(self, url: str, tokens: list[str]):
        self.clients = []
        for token in tokens:
            client = socketio.Client(reconnection=False)
            client.questions = []
            client.on("question", client.questions.append)
            client.connect(url, auth={"token": token}, transports=["websocket"])
            self.clients.append(client)

    def answer(self) -> None:
        for number, client in enumerate(self.clients):
            question = client.questions[-1]
            reply = {"choice": 0} if question["type"] == "mcq" else {"text": "She wants to go home."}
            ack = client.call("answer", {"id": f"a-{uuid.uuid4().hex}-{number}", "question": question["id"], **reply})
            assert ack["ok"], ack

    def close(self) -> None:
        for client in self.clients:
            client.disconnect()


@pytest.fixture
def clips(db_factory, tmp_path):
    """A media folder with an H.264/AAC clip (640x360) for every question of the database's sessions."""

    def make(session_id: int):
        media = tmp_path / "media"
        with db_factory() as db:
            rows = db.execute(
                select(Question.clip_source, Question.clip_end)
                .join(SessionQuestion, SessionQuestion.question_id == Question.id)
                .where(SessionQuestion.session_id == session_id)
            ).all()
        for source, end in rows:
            if not (media / source).exists():
                make_clip(media / source, "h264", seconds=(end or 5) + 2, fps=10, size=(640, 360))
        return media

    return make


@pytest.fixture
def app_with_clips(database_url, tmp_path):
    """``start(people, clips)``: the served app with the clips' media folder; its output has no traceback."""
    servers = []

    def start(media):
        server = ServedApp({"DATABASE_URL": database_url, "VTT_MEDIA_DIR": str(media)}).__enter__()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.__exit__(None, None, None)
        assert "Traceback" not in server.output, server.output


def shoot(page, tmp_path, name: str) -> None:
    page.screenshot(screenshot_dir(tmp_path) / f"{page.engine}-{name}-390.png")


def no_errors(*pages) -> None:
    for page in pages:
        assert page.errors() == [], (page.engine, page.errors())


def playing(selector: str) -> str:
    return (
        f"(() => {{ const v = document.querySelector({selector!r}); return !!v && !v.paused && v.currentTime > 0; }})()"
    )


def test_a_juror_on_a_phone_watches_the_clip_fills_the_sheet_votes_and_changes_the_vote(
    engine, db_factory, clips, app_with_clips, tmp_path
):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1, players=PLAYERS)
    served = app_with_clips(clips(people.session_id))
    host = SocketHost(served.url, people.code)
    players = SocketPlayers(served.url, list(people.players.values()))
    juror = engine.new_page(PHONE)
    try:
        juror.goto(f"{served.url}/jury/{people.jurors['J1']}")
        wait_connected(juror)
        for action in ("open_lobby", "start_round", "show_question"):
            host.move(action)
        # The juror's clip: the phone's, with its controls, started by the juror's own tap.
        juror.wait_for("document.querySelector('#question video')?.readyState >= 1")
        video = juror.evaluate(
            "(() => { const v = document.querySelector('#question video');"
            " return {src: v.currentSrc, paused: v.paused, controls: v.controls, width: v.videoWidth}; })()"
        )
        assert "rendition=phone" in video["src"] and video["paused"] and video["controls"], video
        juror.click("#question video")
        juror.wait_for(playing("#question video"), message="the juror's clip to play after a tap")
        shoot(juror, tmp_path, "juror-clip")
        juror.no_sideways_scroll()

        host.move("open_answering")
        players.answer()
        host.until("reveal")
        juror.wait_for_selector(".sheet-line textarea")
        assert juror.count(".sheet-line") == 3
        aliases = juror.evaluate("[...document.querySelectorAll('.sheet-line .alias')].map((n) => n.textContent)")
        assert sorted(aliases) == ["A", "B", "C"]
        for name in people.players:  # blind: no name on the juror's page
            assert name not in juror.text("main")
        juror.fill(".sheet-line textarea", "answers like a quiz book")
        juror.click(".sheet-line .likeness .pill", 1)
        juror.wait_for("document.querySelector('.sheet-line .line-state').classList.contains('saved')")
        shoot(juror, tmp_path, "juror-sheet")

        host.move("open_vote")
        juror.wait_for_selector("#vote input[name=slot-1]:not([disabled])")
        assert juror.text("#vote-submit") == "Cast my vote"
        suspects = juror.evaluate(
            "[...document.querySelectorAll('#vote-form .suspects input[name=slot-1]')].map((i) => i.value)"
        )
        juror.click("#vote-form .suspects .pill", 0)
        juror.click("#vote-submit")
        juror.wait_for("document.getElementById('vote-state').textContent.startsWith('Your vote is in')")
        assert juror.text("#vote-submit") == "Change my vote"
        shoot(juror, tmp_path, "juror-voted")
        with db_factory() as db:
            mine = db.scalar(select(Juror.id).where(Juror.session_id == people.session_id, Juror.label == "J1"))
            assert db.scalar(select(Vote.alias).where(Vote.juror_id == mine)) == suspects[0]

        # The juror changes the vote before it closes: the new one replaces the old.
        juror.click("#vote-form .suspects .pill", 1)
        juror.click("#vote-submit")
        juror.wait_for(
            "(a) => document.querySelector(`#vote-form input[name=slot-1][value='${a}']`).checked"
            " && document.getElementById('vote-state').textContent.startsWith('Your vote is in')",
            suspects[1],
        )
        with db_factory() as db:
            assert db.scalars(select(Vote.alias).where(Vote.juror_id == mine)).all() == [suspects[1]]
            line = db.scalar(select(SheetEntry).where(SheetEntry.juror_id == mine, SheetEntry.alias == aliases[0]))
            assert (line.note, line.human_likeness) == ("answers like a quiz book", 2)
        host.move("close_vote")
        juror.wait_for_selector("#vote .vote-closed")
        assert juror.text("#vote .vote-closed") == "The vote is closed."
        juror.no_sideways_scroll()
        no_errors(juror)
    finally:
        host.close()
        players.close()


def test_a_player_answers_in_words_and_with_an_option(engine, db_factory, clips, app_with_clips, tmp_path):
    people = make_session(db_factory, rounds=1, per_round=3, jurors=1, players=PLAYERS)  # an open question, then mcq
    served = app_with_clips(clips(people.session_id))
    host = SocketHost(served.url, people.code)
    grace = engine.new_page(PHONE)
    try:
        grace.goto(f"{served.url}/play/{people.players['Grace']}")
        wait_connected(grace)
        for action in ("open_lobby", "start_round", "show_question", "open_answering"):
            host.move(action)
        grace.wait_for_selector("#answer-form textarea:not([disabled])")
        grace.fill("#answer-form textarea", "She is waiting for her sister.")
        grace.click_text("#answer-form button", "Send my answer")
        grace.wait_for("document.getElementById('answer-state').classList.contains('received')")
        shoot(grace, tmp_path, "player-text-answer")
        host.move("close_answering")
        host.until("show_question")
        host.move("open_answering")
        grace.wait_for_selector("#answer-form input[name=choice]:not([disabled])")
        grace.click("#answer-form .pill", 2)
        grace.click_text("#answer-form button", "Send my answer")
        grace.wait_for(
            "document.getElementById('answer-state').classList.contains('received')"
            " && document.querySelector('#answer-form input[name=choice]:checked')?.value === '2'"
        )
        grace.no_sideways_scroll()
        shoot(grace, tmp_path, "player-option-answer")
        with db_factory() as db:
            mine = db.scalar(select(Player.id).where(Player.token == people.players["Grace"]))
            answers = db.execute(
                select(SessionQuestion.position, Answer.text, Answer.choice_index)
                .join(SessionQuestion, SessionQuestion.id == Answer.session_question_id)
                .where(Answer.player_id == mine)
                .order_by(SessionQuestion.position)
            ).all()
        assert [tuple(row) for row in answers] == [(1, "She is waiting for her sister.", None), (2, "", 2)]
        no_errors(grace)
    finally:
        host.close()


def test_the_korean_pages(engine, db_factory, served, tmp_path):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1, players=PLAYERS)
    host = SocketHost(served.url, people.code)
    players = SocketPlayers(served.url, [people.players["Grace"], people.players["Agent"]])
    try:
        juror = engine.new_page(PHONE)
        juror.goto(f"{served.url}/jury/{people.jurors['J1']}?lang=ko")
        mina = engine.new_page(PHONE)
        mina.goto(f"{served.url}/play/{people.players['Mina']}?lang=ko")
        juror.wait_for("document.getElementById('me').textContent !== ''")
        assert juror.evaluate("document.documentElement.lang") == "ko"
        assert "배심원" in juror.text("#me")
        for action in ("open_lobby", "start_round", "show_question", "open_answering"):
            host.move(action)
        mina.wait_for_selector("#answer-form input[name=choice]:not([disabled])")
        assert mina.evaluate("document.documentElement.lang") == "ko"
        mina.click("#answer-form .pill", 0)
        mina.click("#answer-form button[type=submit]")
        mina.wait_for("document.getElementById('answer-state').classList.contains('received')")
        assert mina.text("#answer-form button[type=submit]") != "Send my answer"  # in Korean
        shoot(mina, tmp_path, "player-ko")
        players.answer()
        host.until("open_vote")
        juror.wait_for_selector("#vote input[name=slot-1]:not([disabled])")
        assert "투표" in juror.text("#phase") and juror.text("#vote-submit") == "투표하기"
        juror.click("#vote-form .suspects .pill", 0)
        juror.click("#vote-submit")
        juror.wait_for("document.getElementById('vote-submit').textContent === '투표 바꾸기'")
        host.move("close_vote")
        juror.wait_for_selector("#vote .vote-closed")
        assert juror.text("#vote .vote-closed") == "투표가 마감되었습니다."
        juror.no_sideways_scroll()
        mina.no_sideways_scroll()
        shoot(juror, tmp_path, "juror-ko")
        no_errors(juror, mina)
    finally:
        host.close()
        players.close()


def screening_start(db_factory, session_id: int) -> float:
    """When the server said the screening starts (ms since the epoch)."""
    with db_factory() as db:
        moment = db.scalar(
            select(SessionQuestion.clip_started_at).where(
                SessionQuestion.session_id == session_id, SessionQuestion.clip_started_at.is_not(None)
            )
        )
    return moment.timestamp() * 1000


SCREEN_STATE = """(() => { const v = document.querySelector('#clip video'); return {muted: v.muted, paused: v.paused,
  sound: !document.querySelector('#clip .clip-sound').hidden, width: v.videoWidth}; })()"""


def test_a_player_joins_the_screening_with_the_lobby_tap_and_it_starts_on_time(
    engine, db_factory, clips, app_with_clips, tmp_path
):
    """Grace taps "Tap to join the screening" before the round; Mina's page is never touched, so the engine's own
    autoplay rule keeps it from sound: it plays muted with "Tap for sound" (which shows that rule holds here)."""
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1, players=PLAYERS)
    served = app_with_clips(clips(people.session_id))
    host = SocketHost(served.url, people.code)
    grace, mina = engine.new_page(PHONE), engine.new_page(PHONE)
    try:
        grace.goto(f"{served.url}/play/{people.players['Grace']}")
        mina.goto(f"{served.url}/play/{people.players['Mina']}")
        # Before the round: the tap that lets the page play with sound (the video has no source yet).
        grace.wait_for_selector(".clip-join")
        grace.click_text(".clip-join", "Tap to join the screening")
        grace.wait_for("document.querySelector('.clip-join').hidden")
        for action in ("open_lobby", "start_round", "show_question"):
            host.move(action)
        for page in (grace, mina):
            assert page.evaluate("document.visibilityState") == "visible"  # two phones, both in the hand
            page.wait_for("document.querySelector('#clip video')?.readyState >= 1")
            assert "starts when the host plays it" in page.text("#clip")
            assert page.evaluate("document.querySelector('#clip video').paused")
            page.evaluate(RECORD_PLAYING, "#clip video")

        host.move("play_clip")
        starts_at = screening_start(db_factory, people.session_id)
        late_ms = {}
        for name, page in (("Grace", grace), ("Mina", mina)):
            page.wait_for(playing("#clip video"), message="the screening to play")
            late_ms[name] = page.evaluate("window.playingAt[0]") - starts_at
        first = grace.evaluate("document.querySelector('#clip video').currentTime")
        grace.wait_for("(t) => document.querySelector('#clip video').currentTime - t >= 0.5", first)
        tapped, untapped = grace.evaluate(SCREEN_STATE), mina.evaluate(SCREEN_STATE)
        print(
            f"\n{engine.name} {engine.browser.version}: the screening started {late_ms['Grace']:.0f} ms "
            f"(tapped page) and {late_ms['Mina']:.0f} ms (untapped) after starts_at; the tapped page plays "
            + ("muted with 'Tap for sound'" if tapped["muted"] else "with sound")
        )
        shoot(grace, tmp_path, "player-screening")
        shoot(mina, tmp_path, "player-screening-untapped")
        assert all(-100 <= late <= 1000 for late in late_ms.values()), late_ms
        for state in (tapped, untapped):
            assert not state["paused"] and state["width"] == 640, state  # never frozen
        assert untapped["muted"] and untapped["sound"], untapped  # the engine's autoplay rule holds
        if tapped["muted"]:  # the engine did not count the lobby tap: muted, with the way to sound on screen
            assert tapped["sound"], tapped
        for page in (grace, mina):  # a touch of "Tap for sound" gives sound, and the clip plays on
            if page.evaluate("document.querySelector('#clip video').muted"):
                page.click("#clip .clip-sound")
                page.wait_for("!document.querySelector('#clip video').muted")
            assert not page.evaluate("document.querySelector('#clip video').paused")
        no_errors(grace, mina)
    finally:
        host.close()


READ_ALOUD = [
    {"name": "Mina", "kind": "human", "age": 4, "stage": "pre-operational", "answer_modes": ["text", "read_aloud"]},
    {"name": "Grace", "kind": "human", "age": 31},
    {"name": "Agent", "kind": "ai"},
]
# The page's speech, recorded on its way to the engine's own synthesis (installed after the page has loaded: the
# reading starts only when answering opens).
RECORD_SPEECH = """() => {
  window.spokenTexts = [];
  const speak = speechSynthesis.speak.bind(speechSynthesis);
  speechSynthesis.speak = (utterance) => { window.spokenTexts.push(utterance.text); speak(utterance); };
}"""
NO_VOICE = "This device cannot read aloud in this language. The host will read the questions to you."
NO_SPEECH_SYNTHESIS = """() => {
  Object.defineProperty(window, "speechSynthesis", { value: undefined, configurable: true });
}"""


def test_read_aloud_with_the_engine_s_speech_and_without_any(engine, db_factory, served, tmp_path):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1, players=READ_ALOUD)
    host = SocketHost(served.url, people.code)
    try:
        mina = engine.new_page(PHONE)
        mina.goto(f"{served.url}/play/{people.players['Mina']}")
        wait_connected(mina)
        if mina.evaluate("!!window.speechSynthesis"):
            mina.evaluate(RECORD_SPEECH)
        for action in ("open_lobby", "start_round", "show_question", "open_answering"):
            host.move(action)
        mina.wait_for_selector(".big-option:not([disabled])")
        # The page's own verdict: it reads the question and its options, or it says it has no voice.
        verdict = mina.wait_for(
            "window.spokenTexts?.length >= 2 ? 'reads aloud'"
            " : document.querySelector('#voice-note.warning:not([hidden])') ? 'no voice' : null",
            message="the page to read aloud or to say it has no voice",
        )
        voices = mina.evaluate("window.speechSynthesis ? speechSynthesis.getVoices().map((v) => v.lang) : null")
        print(f"\n{engine.name}: {verdict} (voices: {voices})")
        if verdict == "reads aloud":
            assert mina.evaluate("window.spokenTexts[0]") == mina.text(".question-text")
            assert mina.evaluate("window.spokenTexts[1]").startswith("Number 1: ")
            assert mina.is_visible("#read-again")
        else:
            assert mina.text("#voice-note") == NO_VOICE
            assert not mina.is_visible("#read-again")
        mina.click(".big-option", 1)
        mina.click_text("button", "Choose")
        mina.wait_for("document.getElementById('answer-state').classList.contains('received')")
        shoot(mina, tmp_path, "read-aloud")
        with db_factory() as db:
            mine = db.scalar(select(Player.id).where(Player.token == people.players["Mina"]))
            assert db.scalar(select(Answer.choice_index).where(Answer.player_id == mine)) == 1
        no_errors(mina)

        # A browser without any speech synthesis: the page says so (Firefox: the API taken away before the page's
        # scripts; WebKit's classic WebDriver cannot run a script before them, so there it is taken after load and
        # the page reloaded... which would restore it: only Firefox checks this).
        if engine.name == "firefox":
            bare = engine.new_page(PHONE)
            bare.add_init_script(NO_SPEECH_SYNTHESIS)
            bare.goto(f"{served.url}/play/{people.players['Mina']}?lang=ko")
            bare.wait_for_selector("#voice-note")
            assert bare.text("#voice-note").startswith("이 기기는 이 언어로 소리 내어")
            no_errors(bare)
    finally:
        host.close()


SPOKEN = [
    {"name": "Mina", "kind": "human", "age": 4, "stage": "pre-operational", "answer_modes": ["spoken", "read_aloud"]},
    {"name": "Grace", "kind": "human", "age": 31},
    {"name": "Agent", "kind": "ai"},
]


def test_a_spoken_answer_is_recorded_where_the_engine_has_a_microphone(engine, db_factory, served, instance, tmp_path):
    """Firefox's fake microphone (a tone) records a take the server keeps; WebKitGTK here has no capture device:
    the page says the microphone is off and keeps its button to ask again."""
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1, players=SPOKEN)
    host = SocketHost(served.url, people.code)
    try:
        mina = engine.new_page(PHONE)
        mina.goto(f"{served.url}/play/{people.players['Mina']}")
        for action in ("open_lobby", "start_round", "show_question", "open_answering"):
            host.move(action)
        mina.wait_for_selector("#record:not([disabled])")
        state = "document.getElementById('spoken-answer').dataset.state"
        mina.click("#record")
        try:  # the tap is seen at once ("asking" and on): a page still "idle" did not get it
            mina.wait_for(f"{state} !== 'idle'", timeout=5)
        except AssertionError:  # WebKitGTK's driver now and then loses a click made as the question lays out
            print(f"\n{engine.name}: the first tap on #record did not reach the page; tapped again")
            mina.click("#record")
        # WebKitGTK asks GStreamer for capture devices: its first question is asked as the browser starts
        # (WebKitBrowser.warm_capture: a fresh machine's took over a minute), this one answers in milliseconds
        warmed = getattr(engine.browser, "capture", None)
        try:
            answer = mina.wait_for(f"['recording', 'no_microphone'].includes({state}) && {state}", timeout=45)
        except AssertionError as exc:  # "idle": the tap did not reach the button; "not_answering": the browser
            raise AssertionError(f"{exc}: the page is {mina.evaluate(state)!r}; first question: {warmed}") from None
        has_microphone = answer == "recording"
        first = f"; its first question for capture devices at its start: {warmed}" if warmed else ""
        print(f"\n{engine.name}: {'records a take' if has_microphone else 'no microphone'}{first}")
        if has_microphone:
            mina.wait_for(f"{state} === 'recording'")
            time.sleep(1.5)  # a take of 1.5 s: the sleep is the take's length
            mina.click("#stop-recording")
            longest_ms = 5000
            try:  # the page leaves 'recording' at once on a stop ('sending'): one still recording did not get it
                mina.wait_for(f"{state} !== 'recording'", timeout=5)
            except AssertionError:
                print(f"\n{engine.name}: the tap on #stop-recording did not reach the page; tapped again")
                mina.click("#stop-recording")
                longest_ms = 12000
            try:
                mina.wait_for(f"{state} === 'sent'", timeout=30)
            except AssertionError as exc:  # 'sending': the upload has not been answered
                raise AssertionError(f"{exc}: the page is {mina.evaluate(state)!r}") from None
            assert mina.text("#recording-state").startswith("✓ We have your answer.")
            with db_factory() as db:
                takes = db.scalars(select(Recording)).all()
            assert len(takes) == 1 and takes[0].mime == "audio/webm", takes  # the page's first choice, as Chromium's
            assert 1000 < takes[0].duration_ms < longest_ms
            with av.open(str(instance / "recordings" / takes[0].file)) as recording:
                stream = recording.streams.audio[0]
                assert stream.codec_context.name == "opus"
                seconds = sum(frame.samples for frame in recording.decode(stream)) / stream.codec_context.sample_rate
            assert 1 < seconds < 5, seconds
        else:
            assert mina.text("#recording-state").startswith("The microphone is off. Ask the host to allow it")
            assert mina.is_visible("#record")  # it asks again on the next touch
            with db_factory() as db:
                assert db.scalars(select(Recording)).all() == []
        shoot(mina, tmp_path, "spoken")
        mina.no_sideways_scroll()
        no_errors(mina)
    finally:
        host.close()
