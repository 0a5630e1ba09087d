"""A juror's phone that sleeps and comes back, against a served gevent app, in Chromium (Playwright) and in Firefox ESR
and WebKitGTK (the ``engine`` fixture, tests/support/browser_engines.py): each flow runs once for every engine.

The phone's link dies silently while it sleeps (tests/support/sleeping_phone.py: the socket stays "open" and carries
nothing, so the transport notices only at its ping timeout, 45 s), the page is hidden and frozen, and the host moves on
meanwhile: the reveal, the vote, the tally.  Seen again, the page must show where the session is within seconds (the
time is printed: docs/benchmarks.md), take a vote and say it is in only once the server has it.  The page also keeps
the screen on (Screen Wake Lock) while a clip plays and while the vote is open, and gives it back after.

The phone is played by tests/support/sleeping_phone.py, the same in every engine but for freezing: Firefox and WebKit
have no way to freeze a page, so there its main thread is held by a busy script while it sleeps.
"""

from __future__ import annotations

import time

import pytest
from sqlalchemy import select

from tests.support.browser import PHONE, wait_connected, wait_in_page
from tests.support.live import make_session
from tests.support.media import make_clip
from tests.support.sleeping_phone import (
    HIDE,
    SHOW,
    WAKE_LOCK_STUB,
    Host,
    SilentLink,
    sleep_phone,
    tap,
    wake_phone,
)
from vtt.models import Question, SessionQuestion, Vote

pytestmark = pytest.mark.browser

COMEBACK_MS = 5000  # seen again, the page shows the session as it is within this (the transport alone: 45 s)


def juror_back_from_sleep(phone, link: SilentLink, host: Host, people, db_factory) -> dict[str, float]:
    """The juror's phone sleeps through the reveal, then through the opening of the vote, votes, and is left for
    another page while the vote closes and the tally shows; ms from each coming back to the page showing it."""
    phone.goto(f"{link.url}/jury/{people.jurors['J1']}")
    wait_connected(phone)
    for action in ("open_lobby", "start_round", "show_question", "open_answering", "close_answering"):
        host(action)
    times = {}

    sleep_phone(phone, link)  # asleep through the reveal
    host("reveal")
    times["reveal"] = wake_phone(phone, ".sheet-line")

    sleep_phone(phone, link)  # and through the opening of the vote
    host("open_vote")
    times["vote"] = wake_phone(phone, "#vote:not([hidden]) input[name=slot-1]")
    tap(phone, "#vote-form .suspects .pill")
    assert phone.evaluate("document.getElementById('vote-submit').textContent") == "Cast my vote"
    tap(phone, "#vote-submit")
    wait_in_page(phone, "document.getElementById('vote-state').textContent.startsWith('Your vote is in')")
    with db_factory() as db:  # said to be in only once it is committed
        assert db.scalar(select(Vote.id).where(Vote.session_id == people.session_id)) is not None

    sleep_phone(phone, link, hide=False)  # left for another page; back from the back-forward cache
    host("close_vote")
    host("show_tally")
    times["tally"] = wake_phone(phone, ".tally .bars li", restored=True)
    wait_connected(phone)
    return times


def test_a_juror_page_back_from_sleep_shows_the_reveal_and_the_vote_at_once_and_votes(browser, served, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1)
    host = Host(served.url, people.code)
    with SilentLink(served.port) as link:
        phone = browser.new_page(viewport=PHONE)
        try:
            times = juror_back_from_sleep(phone, link, host, people, db_factory)
        finally:
            host.client.disconnect()
            phone.close()
    print(f"\nreconnect after coming back (ms): {', '.join(f'{k} {v:.0f}' for k, v in times.items())}")
    assert all(moment <= COMEBACK_MS for moment in times.values()), times


def test_a_juror_page_back_from_sleep_on_the_other_engines(engine, served, db_factory):
    """The same sleeps in Firefox ESR and WebKitGTK.  Neither offers a way to freeze a page (no page lifecycle's
    freeze, no driver command that stops a page's scripts): the page's main thread is held by a busy script while
    the phone sleeps instead (tests/support/sleeping_phone.py, ``HOLD``).  The back-forward cache's ``pageshow`` is a
    ``PageTransitionEvent`` with ``persisted`` the test dispatches, as in Chromium.  Hiding, showing, the watch for
    the new phase and the hold are all scripts run after the page's load (WebKit's driver has no script before the
    page's own), before the host moves."""
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1)
    host = Host(served.url, people.code)
    with SilentLink(served.port) as link:
        phone = engine.new_page(PHONE)
        try:
            times = juror_back_from_sleep(phone, link, host, people, db_factory)
            assert phone.errors() == []
        finally:
            host.client.disconnect()
    print(
        f"\n{engine.name} {engine.browser.version}: reconnect after coming back (ms): "
        f"{', '.join(f'{k} {v:.0f}' for k, v in times.items())}"
    )
    assert all(moment <= COMEBACK_MS for moment in times.values()), times


def a_clip_to_play(db_factory, instance, session_id: int) -> float:
    """The session's clip in the media folder, a second past its span; the span's end (s)."""
    with db_factory() as db:
        source, end = db.execute(
            select(Question.clip_source, Question.clip_end)
            .join(SessionQuestion, SessionQuestion.question_id == Question.id)
            .where(SessionQuestion.session_id == session_id)
        ).one()
    make_clip(instance / "media" / source, seconds=end + 1)
    return end


def screen_stays_on(phone, host: Host, end: float) -> None:
    """The lock asked for while the clip plays to its span's end and while the vote is open, given back after, lost
    while the page is hidden and asked for again when it is seen (``WAKE_LOCK_STUB`` records it)."""
    calls = lambda: phone.evaluate("window.vttWakeLock.join(', ')")  # noqa: E731
    for action in ("open_lobby", "start_round", "show_question"):
        host(action)
    wait_in_page(phone, "document.querySelector('#question video')?.readyState >= 1")
    assert calls() == ""  # nothing plays, nothing is open: the screen may dim
    phone.evaluate(
        """(end) => { const video = document.querySelector('#question video');
        video.muted = true; video.currentTime = end - 1; video.play(); }""",
        end,
    )
    wait_in_page(phone, "window.vttWakeLock.length === 1")
    assert calls() == "request screen"
    wait_in_page(phone, "document.querySelector('#question video').paused")
    wait_in_page(phone, "window.vttWakeLock.length === 2")
    assert calls() == "request screen, release"  # the clip has played to its span's end

    for action in ("open_answering", "close_answering", "reveal", "open_vote"):
        host(action)
    wait_in_page(phone, "window.vttWakeLock.length === 3")
    # Hidden, the browser takes the lock back (the stub's sentinel says so); seen again, it is asked for again.
    phone.evaluate(HIDE)
    phone.evaluate(SHOW)
    wait_in_page(phone, "window.vttWakeLock.length === 5")
    host("close_vote")
    wait_in_page(phone, "window.vttWakeLock.length === 6")
    assert calls() == "request screen, release, request screen, lost, request screen, release"


def test_the_screen_stays_on_while_a_clip_plays_and_while_the_vote_is_open(browser, served, db_factory, instance):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1)
    end = a_clip_to_play(db_factory, instance, people.session_id)
    host = Host(served.url, people.code)
    context = browser.new_context(viewport=PHONE)
    context.add_init_script(f"({WAKE_LOCK_STUB})();")
    phone = context.new_page()
    phone.goto(f"{served.url}/jury/{people.jurors['J1']}")
    try:
        screen_stays_on(phone, host, end)
    finally:
        host.client.disconnect()
        context.close()


def test_the_screen_stays_on_on_the_other_engines(engine, served, db_factory, instance):
    """The stub is put in place right after the page's load, before the host moves (WebKit's driver has no script
    before the page's own): the page asks for no lock until a clip plays or the vote opens."""
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1)
    end = a_clip_to_play(db_factory, instance, people.session_id)
    host = Host(served.url, people.code)
    phone = engine.new_page(PHONE)
    try:
        phone.goto(f"{served.url}/jury/{people.jurors['J1']}")
        phone.evaluate(WAKE_LOCK_STUB)
        screen_stays_on(phone, host, end)
        assert phone.errors() == []
    finally:
        host.client.disconnect()


def vote_open_hidden_and_shown(phone, host: Host) -> None:
    for action in ("open_lobby", "start_round", "show_question", "open_answering", "close_answering", "reveal"):
        host(action)
    host("open_vote")  # a reason to keep the screen on
    wait_in_page(phone, "!!document.querySelector('#vote:not([hidden]) input[name=slot-1]')")
    phone.evaluate(HIDE)
    phone.evaluate(SHOW)  # asked for again
    time.sleep(0.3)  # nothing to wait for: an error of the page's coming back would show within it (the test)


def test_no_wake_lock_in_the_browser_is_no_error(browser, served, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1)
    host = Host(served.url, people.code)
    context = browser.new_context(viewport=PHONE)
    context.add_init_script("delete Navigator.prototype.wakeLock;")
    phone = context.new_page()
    errors = []
    phone.on("pageerror", lambda error: errors.append(str(error)))
    phone.goto(f"{served.url}/jury/{people.jurors['J1']}")
    try:
        vote_open_hidden_and_shown(phone, host)
        assert errors == []
    finally:
        host.client.disconnect()
        context.close()


# The engine's own navigator.wakeLock.request, called through, with what each request came to.
WAKE_LOCK_SPY = """() => {
  window.vttAsked = [];
  const request = navigator.wakeLock.request.bind(navigator.wakeLock);
  navigator.wakeLock.request = (type) => {
    const asked = request(type);
    asked.then(() => window.vttAsked.push("granted"), (error) => window.vttAsked.push(`refused (${error.name})`));
    return asked;
  };
}"""


@pytest.mark.parametrize("wake_lock", ["own", "none"])
def test_the_engine_s_own_wake_lock_or_none_is_no_error(engine, served, db_factory, wake_lock):
    """The engine's own Screen Wake Lock, asked for when the vote opens (a headless browser may grant it or refuse
    it), or none at all (taken away right after the page's load: it is looked for only when the page wants the screen
    on)."""
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1)
    host = Host(served.url, people.code)
    phone = engine.new_page(PHONE)
    try:
        phone.goto(f"{served.url}/jury/{people.jurors['J1']}")
        phone.evaluate(WAKE_LOCK_SPY if wake_lock == "own" else "() => { delete Navigator.prototype.wakeLock; }")
        vote_open_hidden_and_shown(phone, host)
        if wake_lock == "own":
            wait_in_page(phone, "window.vttAsked.length >= 1")
            print(f"\n{engine.name}: the engine's wake lock {', '.join(phone.evaluate('window.vttAsked'))}")
        assert phone.errors() == []
    finally:
        host.client.disconnect()
