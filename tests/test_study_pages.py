"""The host's study pages (make a study from sessions, add sessions, the pooled detection, the report's download)
and the setup page's plan form, and `vtt plan --study` taking its rate from a study's votes."""

from __future__ import annotations

import io
import re
import threading
import zipfile

import pytest
from sqlalchemy import select

from tests.support.apps import form_token, login
from tests.support.live import make_session
from vtt.models import Juror, Player, PlayerKind, Study, Vote


def votes_for(db_factory, people, ai_share: int, of: int) -> None:
    """``of`` votes in round 1 of the session, ``ai_share`` of them naming the AI player."""
    with db_factory() as db:
        players = db.scalars(select(Player).where(Player.session_id == people.session_id)).all()
        ai = next(p for p in players if p.kind is PlayerKind.AI)
        human = next(p for p in players if p.kind is PlayerKind.HUMAN)
        jurors = db.scalars(select(Juror).where(Juror.session_id == people.session_id)).all()
        for number, juror in enumerate(jurors[:of]):
            named = ai if number < ai_share else human
            db.add(
                Vote(
                    session_id=people.session_id,
                    round=1,
                    juror_id=juror.id,
                    alias="A",
                    player_id=named.id,
                    client_key=f"v{juror.id}",
                )
            )
        db.commit()


@pytest.mark.each_database
def test_a_study_is_made_and_grown_from_the_host_s_pages(host, db_factory, run):
    first = make_session(db_factory, rounds=1, per_round=1, jurors=4, name="School A")
    second = make_session(db_factory, rounds=1, per_round=1, jurors=4, name="School B")
    votes_for(db_factory, first, 1, 4)
    votes_for(db_factory, second, 2, 4)
    page = host.get("/host/studies/").get_data(as_text=True)
    assert "No study yet" in page and first.code in page and second.code in page
    token = form_token(host, "/host/studies/")

    refused = host.post("/host/studies/", data={"csrf_token": token, "name": "Pilot"}, follow_redirects=True)
    assert "No study made: name at least one session by its join code" in refused.get_data(as_text=True)
    made = host.post(
        "/host/studies/",
        data={"csrf_token": token, "name": "Pilot", "description": "two schools", "session": [first.code]},
    )
    assert made.status_code == 302
    with db_factory() as db:
        study = db.scalar(select(Study).where(Study.name == "Pilot"))
        assert [m.session.join_code for m in study.members] == [first.code]
    page = host.get(made.headers["Location"]).get_data(as_text=True)
    assert "Study: Pilot" in page and "two schools" in page and second.code in page  # offered to add
    assert "Pooled detection: 1 of 4 cast votes named an AI player (25.0 %)." in page
    host.post(f"/host/studies/{study.id}/sessions", data={"csrf_token": token, "session": [second.code]})
    page = host.get(f"/host/studies/{study.id}").get_data(as_text=True)
    assert "Pooled detection: 3 of 8 cast votes named an AI player (37.5 %)." in page
    again = host.post(
        f"/host/studies/{study.id}/sessions",
        data={"csrf_token": token, "session": [second.code]},
        follow_redirects=True,
    ).get_data(as_text=True)
    assert f"Nothing added: {second.code} is in Pilot already" in again
    assert "Pilot" in host.get(f"/host/sessions/{first.session_id}").get_data(as_text=True)

    # the pooled figures, on request (a worker pools them): detection per session and pooled, the test, verdicts
    page = host.get(f"/host/studies/{study.id}").get_data(as_text=True)
    assert "Show the pooled figures" in page and "Do the sessions differ?" not in page
    shown = re.sub(
        r"\s+", " ", re.sub(r"<[^>]+>", " ", host.get(f"/host/studies/{study.id}?figures=1").get_data(as_text=True))
    )
    assert f"{first.code} 4 1 25.0" in shown and f"{second.code} 4 2 50.0" in shown and "pooled 8 3 37.5" in shown
    assert "Do the sessions differ?" in shown and "G-test of homogeneity" in shown
    assert f"{first.code} (human-tie): AI passed" in shown

    # the report: the study's PDF, its tables and the all-sessions export, built by a worker
    report = host.get(f"/host/studies/{study.id}/report.zip")
    assert report.status_code == 200 and report.mimetype == "application/zip"
    names = zipfile.ZipFile(io.BytesIO(report.data)).namelist()
    assert {"study_report.pdf", "detection.csv", "answers_all.csv", "votes_all.csv"} <= set(names)

    # the planner takes its rate from the study's votes (3 of 8), and says so
    planned = run("plan", "--jurors", "16", "--rounds", "5", "--study", "Pilot")
    assert planned.exit_code == 0, planned.output
    assert (
        "37.5" in planned.output and "the pooled detection of the study 'Pilot' (3 of 8 cast votes)" in planned.output
    )
    missing = run("plan", "--jurors", "16", "--rounds", "5", "--study", "Nope")
    assert missing.exit_code != 0 and "no study called 'Nope'" in missing.output

    # the setup page's plan form: the case study's design by default, a study's rate when chosen
    page = host.get("/host/sessions/new").get_data(as_text=True)
    assert 'id="plan"' in page and 'name="plan_jurors" value="16"' in page and "plan-result" not in page
    assert (
        '<option value="">the VTT case study (48.6 %)</option>' in page and f'<option value="{study.id}">Pilot' in page
    )
    planned = host.get(
        f"/host/sessions/new?plan=1&plan_jurors=16&plan_rounds=5&plan_players=5&plan_ai=1"
        f"&plan_ai_votes=1&plan_pass_rule=human-tie&plan_rate=&plan_study={study.id}"
    )
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", planned.get_data(as_text=True)))
    assert "37.5 % · the pooled detection of Pilot (3 of 8 votes)" in text
    case = host.get(
        "/host/sessions/new?plan=1&plan_jurors=16&plan_rounds=5&plan_players=5&plan_ai=1&plan_ai_votes=1"
        "&plan_pass_rule=human-tie&plan_rate=&plan_study="
    )
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", case.get_data(as_text=True)))
    assert "The AI passes a round 9.5 % (exact)" in text
    assert "Smallest jury for 80 % power (chance) 17 jurors" in text
    bad = host.get("/host/sessions/new?plan=1&plan_jurors=0&plan_rounds=5").get_data(as_text=True)
    assert "jurors must be a whole number from 1 to 10000" in bad and "plan-result" not in bad


@pytest.mark.each_database
def test_one_session_added_to_a_study_from_two_pages_at_once_is_added_once(app, host, db_factory):
    """Two hosts' pages add the same session to a study at one moment: it is added once, and the other page is told
    it is there already.  Found: both read the study's members before either wrote, and the second insert hit the
    membership's primary key (a server error)."""
    first = make_session(db_factory, rounds=1, per_round=1, jurors=2, name="School A")
    second = make_session(db_factory, rounds=1, per_round=1, jurors=2, name="School B")
    token = form_token(host, "/host/studies/")
    made = host.post("/host/studies/", data={"csrf_token": token, "name": "Pilot", "session": [first.code]})
    study_page = made.headers["Location"]
    pages = []
    for _ in range(4):
        page = app.test_client()
        login(page)
        pages.append((page, form_token(page, study_page)))
    start_line = threading.Barrier(len(pages))
    outcomes: list[str] = []

    def add(page, csrf: str) -> None:
        start_line.wait()
        try:
            sent = page.post(f"{study_page}/sessions", data={"csrf_token": csrf, "session": [second.code]})
            outcomes.append(str(sent.status_code))
        except Exception as error:  # a server error, raised through the test client
            outcomes.append(f"{type(error).__name__}: {error}")

    threads = [threading.Thread(target=add, args=each) for each in pages]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert outcomes == ["302"] * len(pages), outcomes
    with db_factory() as db:
        study = db.scalar(select(Study).where(Study.name == "Pilot"))
        assert sorted(m.session.join_code for m in study.members) == sorted([first.code, second.code])
