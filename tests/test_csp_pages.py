"""Every page of a session played to the end, with everything on it, in Chromium under the app's own
Content-Security-Policy, in English and in Korean: no policy violation, no console error, no page error.

The session has tallies, CogME radars and a displaced jury's and AI juries' votes beside the live jury's (results),
a judge's suggestions (grading), a study with its pooled figures;
a second session waits on a spoken answer's recording (the host's spoken card, the child's page).  A
``securitypolicyviolation`` listener, added before any script of a page runs, reports each refusal on the console,
which the test reads with the console errors and the uncaught exceptions.  Screenshots go to VTT_SCREENSHOTS.
"""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from sqlalchemy import select

from tests.support.apps import HOST_PASSWORD
from tests.support.audio import webm
from tests.support.browser import FULL_HD, LAPTOP, PHONE, WAIT_MS, screenshot_dir
from tests.support.judge import MODEL, FakeJudge
from tests.support.live import connect_all, make_session
from tests.support.review import (
    ANA,
    BEN,
    host_client,
    judge_by_other_juries,
    name_grader,
    open_answers,
    play_session,
    post,
)
from tests.support.served import ServedApp
from tests.support.spoken import PLAYERS as SPOKEN_PLAYERS
from tests.support.spoken import upload
from vtt.judge.suggest import JudgeSettings, suggest
from vtt.juries.displaced import create_jurors, open_link
from vtt.models import JudgeSuggestion, Juror, QuestionBank, Study, VttSession
from vtt.sessions.demo.clips import ensure_demo_clips

pytestmark = pytest.mark.browser

REPORT_VIOLATIONS = """document.addEventListener('securitypolicyviolation', (e) => console.error(
    `CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || 'inline'} at ${e.sourceFile}:${e.lineNumber}`
    + ` ${e.sample}`));"""
LIVE = "#connection:not(:empty):not(.offline)"  # a live page's Socket.IO connection is up


@pytest.fixture
def media(request, tmp_path_factory, monkeypatch) -> Path:
    """The demo's clips, made once and kept in pytest's cache when there is one (the pages play them: none is
    missing)."""
    cache = getattr(request.config, "cache", None)  # none under -p no:cacheprovider
    folder = cache.mkdir("demo-media") if cache else tmp_path_factory.mktemp("demo-media")
    ensure_demo_clips(folder)
    monkeypatch.setenv("VTT_MEDIA_DIR", str(folder))
    return folder


@pytest.fixture
def everything(app, db_factory, tmp_path, media):
    """A played session (tallies, profiles, judge suggestions, a study, a displaced jury) and a spoken one waiting on
    its answer."""
    played = play_session(app, db_factory)
    judge_by_other_juries(db_factory, played.session_id)  # the results page compares the juries (two more figures)
    with FakeJudge() as judge, ThreadPoolExecutor(1) as thread:  # its own event loop: Playwright runs one here
        settings = JudgeSettings.from_spec(f"http:{judge.url}", MODEL)
        assert thread.submit(suggest, db_factory, played.session_id, settings).result().scored
    # two graders' marks (their agreement, the judge's beside them) and Ana's as the final ones: radars with shapes
    grading = f"/host/sessions/{played.session_id}/grading"
    answers = open_answers(db_factory, played)
    for grader, marks, moves in (("Ana", ANA, ("mark", "final")), ("Ben", BEN, ("mark",))):
        client = host_client(app)
        name_grader(client, grading, grader)
        for (key, correct), move in itertools.product(marks.items(), moves):
            assert post(client, f"{grading}/{move}", answer_id=answers[key], correct=str(correct)).status_code == 302
    host = host_client(app)
    assert post(host, "/host/studies/", name="Pilot", session=[played.code]).status_code == 302

    spoken = make_session(db_factory, rounds=1, per_round=1, jurors=2, players=SPOKEN_PLAYERS, name="Spoken")
    roles = connect_all(app, app.test_client(), spoken)
    for move in ("open_lobby", "start_round", "show_question", "open_answering"):
        roles[0].host(move)
    question = roles[2]["Mina"].last("question")["id"]
    assert upload(app.test_client(), spoken.players["Mina"], question, webm(tmp_path)).status_code == 200
    for role in [roles[0], roles[1], *roles[2].values(), *roles[3].values()]:
        role.client.disconnect()

    with db_factory() as db:
        assert db.scalar(select(JudgeSuggestion.id).limit(1))
        study = db.scalar(select(Study.id).where(Study.name == "Pilot"))
        bank = db.scalar(select(QuestionBank.id).where(QuestionBank.name == "Demo drama bank"))
        # a displaced jury: a juror with an attention line, and an open link
        (later,) = create_jurors(db, db.get(VttSession, played.session_id), 1, attention=True)
        link = open_link(db, db.get(VttSession, played.session_id), 50)
        db.commit()
        batch = db.scalar(select(Juror.link_id).where(Juror.token == later.token))
        displaced = {"juror": later.token, "open": link.token, "batch": batch}
    return played, spoken, study, bank, displaced


def host_pages(played, spoken, study: int, bank: int, displaced: dict) -> dict[str, tuple[str, str | None]]:
    """``{name: (path, selector to wait for)}`` of the host's pages."""
    session = f"/host/sessions/{played.session_id}"
    return {
        "dashboard": ("/host/", None),
        "session": (session, None),
        "session-displaced": (f"{session}?batch={displaced['batch']}", "#batch-links"),
        "session-spoken": (f"/host/sessions/{spoken.session_id}", "#recordings"),
        "console": (f"{session}/live", LIVE),
        "console-spoken": (f"/host/sessions/{spoken.session_id}/live", "#spoken-card:not([hidden]) audio"),
        "results": (f"{session}/results/", "figure.radar svg"),
        "grading": (f"{session}/grading/", "tr.suggestion"),
        "paper-entry": (f"{session}/paper", None),
        "studies": ("/host/studies/", None),
        "study": (f"/host/studies/{study}?figures=1", "#figures table"),
        "bank": (f"/host/banks/{bank}", ".bar"),
        "setup": ("/host/sessions/new?plan=1&plan_jurors=16&plan_rounds=5", "#plan"),
    }


def public_pages(played, spoken, displaced: dict) -> dict[str, tuple[str, str | None, dict]]:
    """``{name: (path, selector to wait for, viewport)}`` of the pages without the host's login."""
    return {
        "login": ("/host/login", None, LAPTOP),
        "juror": (f"/jury/{played.jurors['J1']}", LIVE, PHONE),
        "displaced-juror": (f"/jury/{displaced['juror']}", "#round:not([hidden]) .displaced-question", PHONE),
        "displaced-open": (f"/jury/open/{displaced['open']}", "#start", PHONE),
        "player": (f"/play/{played.players['Grace']}", LIVE, PHONE),
        "player-spoken": (f"/play/{spoken.players['Mina']}", LIVE, PHONE),
        "join": (f"/join/{spoken.code}", None, PHONE),
        "stage": (played.stage_path, LIVE, FULL_HD),
    }


# The AI's radar as the PDF draws it: a vermillion outline, dashed (butt caps: the gaps show) and heavier, filled at
# 18 %; grey rings left empty; the title at 9.5 pt of the report font.
DRAWN_AS_IN_THE_PDF = {
    "ai": ["rgb(213, 94, 0)", "5px, 2px", "butt", "2px", "0.18"],
    "rings": ["none"],
    "title": ["9.5px", "700"],
}


def radar_look(page) -> dict[str, list[str]]:
    """How Chromium draws the AI player's first radar (computed styles: what reached the screen)."""
    return page.evaluate("""() => {
        const radar = document.querySelector('section.player[data-player="Agent"] figure.radar svg');
        const look = (element) => getComputedStyle(element);
        const ai = [...radar.querySelectorAll('polygon')].find((p) => look(p).strokeDasharray !== 'none');
        const drawn = (s) => [s.stroke, s.strokeDasharray, s.strokeLinecap, s.strokeWidth, s.fillOpacity];
        const rings = [...radar.querySelectorAll('polygon')].filter((p) => p !== ai).map((p) => look(p).fill);
        const title = look(radar.querySelector('text'));
        return { ai: ai ? drawn(look(ai)) : [],
                 rings: [...new Set(rings)], title: [title.fontSize, title.fontWeight] };
    }""")


def with_language(path: str, language: str) -> str:
    return f"{path}{'&' if '?' in path else '?'}lang={language}"


@pytest.mark.timeout(600)  # some forty pages, each in two languages, on a shared machine
def test_every_page_of_a_played_session_keeps_the_csp(browser, database_url, everything, media, tmp_path):
    played, spoken, study, bank, displaced = everything
    shots = screenshot_dir(tmp_path)
    problems: list[str] = []

    def context(viewport: dict):
        opened = browser.new_context(bypass_csp=False, viewport=viewport)
        opened.add_init_script(REPORT_VIOLATIONS)
        return opened

    def visit(opened, url: str, path: str, name: str, wait_for: str | None):
        page = opened.new_page()
        page.on(
            "console",
            lambda m: problems.append(f"{name}: {m.text} ({m.location['url']})") if m.type == "error" else None,
        )
        page.on("pageerror", lambda error: problems.append(f"{name}: {error}"))
        response = page.goto(f"{url}{path}")
        assert response.status == 200, (name, path, response.status)
        assert response.headers["content-security-policy"].startswith("default-src 'self'"), name
        assert "'unsafe-inline'" not in response.headers["content-security-policy"], name
        if wait_for:
            page.wait_for_selector(wait_for, timeout=WAIT_MS)
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(shots / f"{name}-{page.viewport_size['width']}.png"), full_page=True)
        return page

    with ServedApp({"DATABASE_URL": database_url, "VTT_MEDIA_DIR": str(media)}) as served:
        url = served.url
        host = context(LAPTOP)
        login = host.new_page()
        login.goto(f"{url}/host/login")
        login.fill("#password", HOST_PASSWORD)
        login.click("button[type=submit]")
        login.wait_for_url(f"{url}/host/")
        grading = f"/host/sessions/{played.session_id}/grading/"
        login.goto(f"{url}{grading}")
        login.fill("#grader-input", "Ana")  # a named grader sees the mark forms beside the suggestions
        login.click("#grader button[type=submit]")
        login.wait_for_selector("#grader-name")
        login.close()
        phone_host = context(PHONE)
        results = f"/host/sessions/{played.session_id}/results/"
        phone_host.add_cookies(host.cookies())

        for language in ("en", "ko"):
            for name, (path, wait_for) in host_pages(played, spoken, study, bank, displaced).items():
                page = visit(host, url, with_language(path, language), f"{name}-{language}", wait_for)
                if name == "results":
                    assert radar_look(page) == DRAWN_AS_IN_THE_PDF
                page.close()
            page = visit(phone_host, url, with_language(results, language), f"results-{language}", "figure.radar svg")
            assert radar_look(page) == DRAWN_AS_IN_THE_PDF
            page.close()
            for name, (path, wait_for, viewport) in public_pages(played, spoken, displaced).items():
                visitor = context(viewport)
                visit(visitor, url, with_language(path, language), f"{name}-{language}", wait_for).close()
                visitor.close()
            # the printouts are PDFs: fetched, not shown, and under the same headers
            for pdf in ("join-cards.pdf", "paper-sheets.pdf"):
                reply = host.request.get(f"{url}/host/sessions/{played.session_id}/{pdf}?lang={language}")
                assert reply.status == 200 and reply.headers["content-type"] == "application/pdf", pdf
                assert reply.headers["content-security-policy"].startswith("default-src 'self'"), pdf
        host.close()
        phone_host.close()
    assert problems == [], "\n".join(problems)
    assert "Traceback" not in served.output, served.output
