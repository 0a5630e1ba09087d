"""A session the host stops early: every result counts only the questions that were shown.

Five rounds of two questions are designed; two are played (Agent, the AI, sits out round 2) and the host
presses "Stop the session now".  The results page, ``vtt report``'s CSVs and PDF, the wide export and a
study report must all score each player on the questions put to them, and say the session stopped early.
"""

from __future__ import annotations

import re
import subprocess

import pandas as pd
import pytest
from sqlalchemy import select

from tests.support.apps import login
from tests.support.review import play_session
from vtt.models import SessionQuestion, VttSession
from vtt.reports.session import write_session_reports
from vtt.results.export import export_tables
from vtt.results.tables import Coverage, session_profiles, session_tables

VOTES = {1: ["Agent", "Agent", "Mina", "Agent"], 2: ["Mina", "Grace", "Mina", None]}


@pytest.fixture
def stopped(app, db_factory):
    return play_session(app, db_factory, votes=VOTES, participants={2: ["Mina", "Grace"]}, designed_rounds=5)


def _shown(db, session_id: int) -> dict[str, int]:
    """qid -> round of the questions the host showed."""
    rows = db.scalars(
        select(SessionQuestion).where(SessionQuestion.session_id == session_id, SessionQuestion.shown_at.is_not(None))
    )
    return {sq.question.qid: sq.round for sq in rows}


def _put_counts(frames, shown: dict[str, int]) -> dict[str, int]:
    """Questions each player is scored on: those shown in the rounds the player played, less ungraded ones."""
    ungraded = frames.ungraded.groupby("player").size().to_dict()
    played = {"Mina": {1, 2}, "Grace": {1, 2}, "Agent": {1}}
    return {
        name: sum(1 for number in shown.values() if number in rounds) - ungraded.get(name, 0)
        for name, rounds in played.items()
    }


def test_the_frames_and_profiles_count_only_the_questions_shown(db_factory, stopped):
    with db_factory() as db:
        session = db.get(VttSession, stopped.session_id)
        frames = session_tables(db, session)
        shown = _shown(db, stopped.session_id)
        assert len(shown) == 4 and set(shown.values()) == {1, 2}
        assert frames.coverage == Coverage(rounds=5, last_round=2, placed=10, shown=4, finished=True)
        assert frames.coverage.stopped_early
        assert set(frames.questions["qid"]) == set(shown)
        assert set(frames.answers["qid"]) <= set(shown)
        profile = session_profiles(frames, session.scoring_method.value).players.set_index("player")
    expected = _put_counts(frames, shown)
    assert profile["questions"].to_dict() == expected
    assert (profile["accuracy_pct"] == 100 * profile["correct"] / profile["questions"]).all()


def test_the_report_counts_only_what_was_asked_and_says_it_stopped(db_factory, stopped, tmp_path):
    with db_factory() as db:
        session = db.get(VttSession, stopped.session_id)
        reports = write_session_reports(db, session, tmp_path)
        shown = _shown(db, stopped.session_id)
    expected = _put_counts(reports.tables, shown)
    players = pd.read_csv(tmp_path / "profile_players.csv").set_index("player")
    assert players["questions"].to_dict() == expected
    # the element counts behind the profiles: each player's on the questions put to that player
    elements = pd.read_csv(tmp_path / "profile_elements.csv")
    frequencies = pd.read_csv(tmp_path / "element_frequencies.csv")
    joined = elements.merge(frequencies, on=["player", "module", "element"], suffixes=("", "_freq"))
    assert len(joined) == len(elements)
    assert (joined["questions"] == joined["questions_freq"]).all() and (
        joined["correct"] == joined["correct_freq"]
    ).all()
    assert (frequencies["missed"] >= 0).all()
    question_set = pd.read_csv(tmp_path / "question_set.csv").set_index(["facet", "value"])["questions"]
    assert question_set[("all", "questions")] == 4
    assert pd.read_csv(tmp_path / "composition.csv")["questions"].max() <= 4
    info = dict(pd.read_csv(tmp_path / "session_info.csv").itertuples(index=False))
    assert info["Questions shown"] == "stopped after round 2 of 5: 4 of 10 questions shown"
    cover = subprocess.run(
        ["pdftotext", "-layout", str(tmp_path / "report.pdf"), "-"], capture_output=True, text=True, check=True
    ).stdout
    assert "stopped after round 2 of 5: 4 of 10 questions shown" in " ".join(cover.split())


def test_the_results_page_says_the_session_stopped_and_scores_the_questions_shown(client, db_factory, stopped):
    login(client)
    page = client.get(f"/host/sessions/{stopped.session_id}/results/").get_data(as_text=True)
    assert "Stopped after round 2 of 5: 4 of 10 questions shown." in page
    with db_factory() as db:
        frames = session_tables(db, db.get(VttSession, stopped.session_id))
        expected = _put_counts(frames, _shown(db, stopped.session_id))
    for name, count in expected.items():
        assert f"of {count} questions" in page, name
    korean = client.get(f"/host/sessions/{stopped.session_id}/results/?lang=ko").get_data(as_text=True)
    assert "5라운드 중 2라운드 후 중단: 10문항 중 4문항 제시." in korean


def test_the_wide_export_grades_no_question_that_was_never_shown(db_factory, stopped):
    with db_factory() as db:
        session = db.get(VttSession, stopped.session_id)
        wide = export_tables(db, session)[f"{session.join_code}_wide.csv"]
        shown = _shown(db, stopped.session_id)
    players = wide[wide["role"] == "player"].set_index("label")
    graded = [c for c in wide.columns if c.endswith("_correct")]
    unshown = [c for c in graded if c.split("_")[1] not in shown]
    assert len(unshown) == 6 and players[unshown].isna().all().all()
    agent_round_2 = [c for c in graded if c.startswith("r2_")]
    assert players.loc["Agent", agent_round_2].isna().all()  # sat out round 2
    assert players.loc["Agent", [c for c in graded if c.startswith("r1_")]].notna().sum() >= 1


def test_a_study_of_a_stopped_session_invents_no_attempts(app, db_factory, stopped, tmp_path):
    from vtt.reports.study import write_study
    from vtt.studies import create_study

    with db_factory() as db:
        create_study(db, "Stopped", [stopped.code])
        db.commit()
        frames = session_tables(db, db.get(VttSession, stopped.session_id))
        expected = _put_counts(frames, _shown(db, stopped.session_id))
        write_study(db, "Stopped", tmp_path)
    programs = pd.read_csv(tmp_path / "accuracy_by_program.csv")
    assert programs.loc[programs["session"] == "all", "attempts"].sum() == expected["Agent"]
    stages = pd.read_csv(tmp_path / "accuracy_by_stage.csv")
    assert stages.loc[stages["session"] == "all", "attempts"].sum() == expected["Mina"] + expected["Grace"]


def test_removing_a_juror_after_a_round_closed_corrects_its_stored_tally(app, db_factory, tmp_path):
    """J1 voted for the AI in both rounds; the host removes J1 after the session: the rounds' stored live
    tallies, the report's rounds.csv and the results page all count the three jurors left."""
    from tests.support.apps import login as sign_in
    from tests.support.live import Role
    from vtt.extensions import socketio
    from vtt.models import SessionRound

    people = play_session(
        app, db_factory, votes={1: ["Agent", "Agent", "Mina", "Grace"], 2: ["Agent", "Mina", None, None]}
    )
    client = app.test_client()
    sign_in(client)
    host = Role(socketio, app, {"code": people.code, "role": "host"}, flask_client=client)
    host.host("remove_juror", juror="J1")
    assert host.last("tally")["cast"] == 1  # the current (last) round's card, recounted
    host.client.disconnect()
    with db_factory() as db:
        stored = {
            r.number: r.tally
            for r in db.scalars(select(SessionRound).where(SessionRound.session_id == people.session_id))
        }
        reports = write_session_reports(db, db.get(VttSession, people.session_id), tmp_path)
    assert reports.tables.votes["juror"].nunique() == 3
    rounds = pd.read_csv(tmp_path / "rounds.csv").set_index("round")
    for number in (1, 2):
        agent = next(row for row in stored[number]["players"] if row["name"] == "Agent")
        assert stored[number]["cast"] == rounds.loc[number, "votes"], number
        assert agent["votes"] == rounds.loc[number, "ai_votes"], number
    assert [stored[1]["cast"], stored[2]["cast"]] == [3, 1]
    page = client.get(f"/host/sessions/{people.session_id}/results/").get_data(as_text=True)
    for number in (1, 2):
        block = re.search(rf'<section class="card round" id="round-{number}".*?</section>', page, re.S).group(0)
        shown = re.search(r'<tr data-player="Agent".*?<td class="num votes">(\d+)</td>', block, re.S).group(1)
        assert int(shown) == rounds.loc[number, "ai_votes"], number
    assert stored[1]["detection_pct"] == pytest.approx(100 / 3, abs=1e-4)
