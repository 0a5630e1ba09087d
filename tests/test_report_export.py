"""``vtt report CODE`` and ``vtt export CODE`` on a small finished session built row by row.

The session: six questions of the demo bank in two rounds, four players (Lena sits out round 2),
four jurors.  The rows below are the whole truth; the expected figures are worked out by hand:

round 1 (everyone)       q03 open          q06 mcq (key 1)   q09 mcq (key 0)
  김민준 (4 y)            wrong (graded)    0: wrong          no answer
  Lena   (10 y)           right (graded)    1: right          0: right
  Grace  (31 y)           NOT GRADED        1: right          0: right
  Agent  (AI)             right (graded)    1: right          2: wrong
round 2 (Lena sits out)  q12 mcq (key 1)   q14 open          q16 mcq (key 1)
  김민준                  1: right          wrong (graded)    3: wrong
  Grace                   1: right          right (graded)    2: wrong
  Agent                   1: right          right (graded)    1 but late: no answer

accuracy: 김민준 1/6 = 16.67 %, Lena 3/3 = 100 %, Grace 4/5 = 80 % (q03 left out), Agent 4/6 = 66.67 %.
votes: round 1 J1 Agent, J2 Agent, J3 Lena, J4 abstains -> detection 2/3 = 66.67 %;
       round 2 J1 Agent, J2 Grace, J3 김민준, J4 Agent -> 2/4 = 50 %.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import subprocess
import uuid
from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest
from click.testing import CliRunner
from sqlalchemy import select

from tests.support.machine import require_poppler
from vtt.banks import import_bank, read_bank
from vtt.cli import main
from vtt.models import (
    Answer,
    Event,
    Grade,
    IdentityReveal,
    Juror,
    Phase,
    RoundAlias,
    SessionQuestion,
    SessionStatus,
    SheetEntry,
    Vote,
)
from vtt.results.export import EXPORT_FILES
from vtt.results.tables import session_profiles, session_tables
from vtt.sessions.create import SessionConfig, create_session
from vtt.sessions.demo import BANK_FILE

ROUNDS = {1: ["q03", "q06", "q09"], 2: ["q12", "q14", "q16"]}
PLAYERS = [
    {"name": "김민준", "kind": "human", "age": 4, "stage": "pre-operational"},
    {"name": "Lena", "kind": "human", "age": 10, "stage": "middle concrete operational"},
    {"name": "Grace", "kind": "human", "age": 31, "stage": "formal operational"},
    {"name": "Agent", "kind": "ai", "backends": {"mcq": "demo-mcq-agent", "open": "demo-open-agent"}},
]
# (player, qid): ("choice", index, late) for mcq, ("text", text, correct or None when ungraded) for open
ANSWERS = {
    ("김민준", "q03"): ("text", "she is sad", False),
    ("Lena", "q03"): ("text", "embarrassed", True),
    ("Grace", "q03"): ("text", "Mortified: she spilled coffee on him", None),
    ("Agent", "q03"): ("text", "She feels embarrassed and anxious.", True),
    ("김민준", "q06"): ("choice", 0, False),
    ("Lena", "q06"): ("choice", 1, False),
    ("Grace", "q06"): ("choice", 1, False),
    ("Agent", "q06"): ("choice", 1, False),
    ("Lena", "q09"): ("choice", 0, False),
    ("Grace", "q09"): ("choice", 0, False),
    ("Agent", "q09"): ("choice", 2, False),
    ("김민준", "q12"): ("choice", 1, False),
    ("Grace", "q12"): ("choice", 1, False),
    ("Agent", "q12"): ("choice", 1, False),
    ("김민준", "q14"): ("text", "tables", False),
    ("Grace", "q14"): ("text", "a grill in each table", True),
    ("Agent", "q14"): ("text", "Each table has a grill in its centre.", True),
    ("김민준", "q16"): ("choice", 3, False),
    ("Grace", "q16"): ("choice", 2, False),
    ("Agent", "q16"): ("choice", 1, True),
}
JURORS = [
    ("J1", "panel", True, "20s", "F"),
    ("J2", "panel", False, "30s", "M"),
    ("J3", "stream", False, "40s", "F"),
    ("J4", "stream", True, "50s", None),
]
VOTES = {
    1: {"J1": ("Agent", 5), "J2": ("Agent", 3), "J3": ("Lena", 2), "J4": (None, None)},
    2: {"J1": ("Agent", 4), "J2": ("Grace", 2), "J3": ("김민준", 1), "J4": ("Agent", 5)},
}
SHEET = [
    ("J1", "q03", "Agent", True),
    ("J2", "q03", "김민준", True),
    ("J3", "q03", "Lena", False),
    ("J1", "q14", "Grace", True),
    ("J4", "q14", "Agent", True),
]
START = datetime(2026, 5, 14, 18, 30, tzinfo=UTC)


def key() -> str:
    return uuid.uuid4().hex


@pytest.fixture
def finished(db, tmp_path):
    """The session above, committed; returns its join code, design hash and every token."""
    rows = pd.read_csv(BANK_FILE, dtype=str, keep_default_na=False)
    chosen = {qid: number for number, qids in ROUNDS.items() for qid in qids}
    rows = rows[rows["qid"].isin(chosen)].assign(round=lambda frame: frame["qid"].map(chosen).astype(str))
    bank_file = tmp_path / "demo_subset.csv"
    rows.to_csv(bank_file, index=False)
    import_bank(db, read_bank(bank_file), "Demo drama bank")
    config = SessionConfig.from_dict(
        {
            "name": "Report test",
            "bank": "Demo drama bank",
            "rounds": 2,
            "questions_per_round": 3,
            "seed": 7,
            "pass_rule": "human-tie",
            "scoring_method": "uniform",
            "round_themes": ["emotion recognition"],
            "players": PLAYERS,
        }
    )
    session = create_session(db, config)
    if not session.design_hash:  # setup hashes the design itself once it records one
        session.design = {"rounds": ROUNDS, "players": [p["name"] for p in PLAYERS], "seed": 7}
        session.design_hash = hashlib.sha256(json.dumps(session.design, sort_keys=True).encode()).hexdigest()
    session.status, session.phase = SessionStatus.FINISHED, Phase.FINISHED
    session.started_at, session.finished_at = START, START + timedelta(hours=1)
    players = {p.name: p for p in session.players}
    session.round_states[1].participants = [players[name].id for name in ("김민준", "Grace", "Agent")]
    placed = {
        sq.question.qid: sq
        for sq in db.scalars(select(SessionQuestion).where(SessionQuestion.session_id == session.id))
    }
    for sq in placed.values():  # played to the end: every question was shown
        sq.shown_at = START + timedelta(minutes=sq.round * 10 + sq.position - 1)
    jurors = {}
    for label, group, expert, age_band, sex in JURORS:
        jurors[label] = Juror(
            session_id=session.id,
            label=label,
            token=secrets.token_urlsafe(18),
            juror_group=group,
            expert=expert,
            age_band=age_band,
            sex=sex,
            joined_at=START,
        )
        db.add(jurors[label])
    db.flush()
    aliases = {}
    for number, names in ((1, ["Agent", "Grace", "김민준", "Lena"]), (2, ["Grace", "Agent", "김민준"])):
        for alias, name in zip("ABCD", names):
            aliases[number, name] = alias
            db.add(RoundAlias(session_id=session.id, round=number, player_id=players[name].id, alias=alias))
    for (name, qid), (how, value, extra) in ANSWERS.items():
        sq = placed[qid]
        answer = Answer(
            session_id=session.id,
            session_question_id=sq.id,
            player_id=players[name].id,
            client_key=key(),
            submitted_at=START + timedelta(minutes=sq.round * 10 + sq.position),
            latency_ms=4200,
        )
        if how == "choice":
            answer.choice_index, answer.late = value, extra
        else:
            answer.text = value
            if extra is not None:
                answer.grade = Grade(correct=extra, grader="host", graded_at=START + timedelta(hours=2))
        db.add(answer)
    for number, ballots in VOTES.items():
        for label, (name, confidence) in ballots.items():
            db.add(
                Vote(
                    session_id=session.id,
                    round=number,
                    juror_id=jurors[label].id,
                    slot=1,
                    player_id=players[name].id if name else None,
                    alias=aliases[number, name] if name else None,
                    confidence=confidence,
                    reason=f"{label} in round {number}",
                    client_key=key(),
                    cast_at=START + timedelta(minutes=30),
                )
            )
    for label, qid, name, mark in SHEET:
        db.add(
            SheetEntry(
                session_id=session.id,
                juror_id=jurors[label].id,
                session_question_id=placed[qid].id,
                player_id=players[name].id,
                alias=aliases[placed[qid].round, name],
                looks_like_ai=mark,
                note="hmm",
                client_key=key(),
            )
        )
    db.add(IdentityReveal(session_id=session.id, round=2, player_id=players["Agent"].id, revealed_at=START))
    db.add(
        Event(
            session_id=session.id, kind="juror.joined", actor="J1", payload={"label": "J1", "token": jurors["J1"].token}
        )
    )
    db.commit()
    tokens = [p.token for p in session.players] + [j.token for j in jurors.values()]
    return {"code": session.join_code, "hash": session.design_hash, "tokens": tokens, "id": session.id}


def test_session_tables_follow_the_analysis_contract(db, finished):
    from vtt.models import VttSession

    frames = session_tables(db, db.get(VttSession, finished["id"]))
    assert dict(zip(frames.questions["qid"], frames.questions["round"])) == {
        qid: number for number, qids in ROUNDS.items() for qid in qids
    }
    answers = frames.answers.set_index(["player", "qid"])
    assert ("Grace", "q03") not in answers.index  # ungraded: counted apart
    assert frames.ungraded.to_dict("records") == [
        {"player": "Grace", "qid": "q03", "round": 1, "answer": "Mortified: she spilled coffee on him"}
    ]
    assert not any(player == "Lena" and qid in ROUNDS[2] for player, qid in answers.index)  # sat out round 2
    assert answers.loc[("김민준", "q09")].to_dict() == {"answer": "", "correct": False, "kind": "human", "round": 1}
    assert answers.loc[("Agent", "q16"), ["answer", "correct"]].tolist() == ["", False]  # late = no answer
    assert answers.loc[("Lena", "q06"), "answer"] == "He freezes and goes pale"  # the chosen option's text
    assert len(frames.answers) == 4 * 3 + 3 * 3 - 1
    assert frames.players.to_dict("list") == {
        "name": ["김민준", "Lena", "Grace", "Agent"],
        "kind": ["human", "human", "human", "ai"],
    }
    votes = frames.votes
    assert list(votes.columns) == ["round", "juror", "vote", "slot", "confidence", "group", "expert", "age_band", "sex"]
    abstention = votes[(votes["round"] == 1) & (votes["juror"] == "J4")].iloc[0]
    assert abstention["vote"] is None and pd.isna(abstention["confidence"]) and abstention["expert"] == "expert"
    assert len(frames.sheet) == len(SHEET) and frames.sheet["looks_like_ai"].sum() == 4

    result = session_profiles(frames, "uniform").players.set_index("player")
    assert result.loc[:, "questions"].to_dict() == {"김민준": 6, "Lena": 3, "Grace": 5, "Agent": 6}
    assert result.loc[:, "correct"].to_dict() == {"김민준": 1, "Lena": 3, "Grace": 4, "Agent": 4}
    assert list(result.index) == ["김민준", "Lena", "Grace", "Agent"]


def test_report_writes_pdfs_and_csvs_with_the_sessions_figures(run, finished, tmp_path):
    out = tmp_path / "report"
    result = run("report", finished["code"].lower(), "--out", str(out))
    assert result.exit_code == 0, result.output
    for name in (
        "profiles.pdf",
        "tallies.pdf",
        "report.pdf",
        "profile_players.csv",
        "rounds.csv",
        "tally.csv",
        "exposure.csv",
        "qa_sheet.csv",
        "ungraded.csv",
        "session_info.csv",
    ):
        assert (out / name).stat().st_size > 0, name
    assert (
        "1 answer not graded yet (open, or to a question without a key), left out of accuracy: Grace q03"
        in result.output
    )

    players = pd.read_csv(out / "profile_players.csv").set_index("player")
    assert players["accuracy_pct"].round(2).to_dict() == {"김민준": 16.67, "Lena": 100.0, "Grace": 80.0, "Agent": 66.67}
    assert set(players["method"]) == {"uniform"}
    rounds = pd.read_csv(out / "rounds.csv").set_index("round")
    assert rounds.loc[1, ["votes", "abstentions", "ai_votes"]].tolist() == [3, 1, 2]
    assert round(rounds.loc[1, "detection_pct"], 2) == 66.67 and rounds.loc[2, "detection_pct"] == 50.0
    assert rounds.loc[1, "ai_passed"] in (False, "False")  # Agent 2 votes against Lena's 1: detected
    tally = pd.read_csv(out / "tally.csv")
    assert tally[(tally["round"] == 2)].set_index("player")["votes"].to_dict() == {
        "김민준": 1,
        "Lena": 0,
        "Grace": 1,
        "Agent": 2,
    }
    groups = pd.read_csv(out / "groups.csv")
    panel = groups[(groups["facet"] == "group") & (groups["group"] == "panel")].iloc[0]
    assert (panel["votes"], panel["ai_votes"]) == (4, 3)
    exposure = pd.read_csv(out / "exposure.csv").set_index("qid")
    assert exposure.loc["q03", ["marks", "ai_marks"]].tolist() == [2, 1]
    assert exposure.loc["q14", "exposure_pct"] == 50.0
    ungraded = pd.read_csv(out / "ungraded.csv")
    assert ungraded.to_dict("records") == [
        {"player": "Grace", "qid": "q03", "round": 1, "answer": "Mortified: she spilled coffee on him"}
    ]
    info = dict(pd.read_csv(out / "session_info.csv").itertuples(index=False))
    assert info["Design hash"] == finished["hash"] and info["Join code"] == finished["code"]
    assert info["Date"] == "2026-05-14 18:30 UTC" and info["Jurors"] == "4 · voters 4"
    assert "김민준 (human, 4 y, pre-operational)" in info["Players"] and "Agent (AI)" in info["Players"]
    assert info["Pass rule"] == "human-tie" and info["Scoring method"] == "uniform"
    assert info["Ungraded open answers"] == "1, left out of accuracy (ungraded.csv lists them): Grace q03"
    assert info["Rounds"] == "2 x 3 questions (6 placed); round 1: emotion recognition"


def test_report_pdf_names_the_session_and_its_design_hash(run, finished, tmp_path):
    require_poppler()
    out = tmp_path / "report"
    assert run("report", finished["code"], "--out", str(out)).exit_code == 0
    text = subprocess.run(
        ["pdftotext", "-enc", "UTF-8", str(out / "report.pdf"), "-"], capture_output=True, text=True, check=True
    ).stdout
    assert finished["hash"] in "".join(text.split())  # a long word may wrap inside its cell
    assert "Report test" in text and finished["code"] in text
    assert "1, left out of accuracy" in text and "Grace q03" in text


def test_report_without_votes_still_profiles_and_a_late_grade_counts(run, finished, db, tmp_path):
    out = tmp_path / "report"
    db.query(Vote).delete()
    db.query(SheetEntry).delete()
    ungraded = db.scalar(select(Answer).where(Answer.text == ANSWERS["Grace", "q03"][1]))
    ungraded.grade = Grade(correct=True, grader="host")
    db.commit()
    out.mkdir()
    (out / "ungraded.csv").write_text("player,qid,round,answer\nGrace,q03,1,stale\n")
    result = run("report", finished["code"], "--out", str(out), "--title", "No votes")
    assert result.exit_code == 0, result.output
    assert (out / "profiles.pdf").exists() and (out / "report.pdf").exists()
    assert not (out / "tallies.pdf").exists() and not (out / "rounds.csv").exists()
    assert not (out / "ungraded.csv").exists() and "not graded" not in result.output
    assert "no votes yet: profiles only" in result.output
    players = pd.read_csv(out / "profile_players.csv").set_index("player")
    assert players.loc["Grace", ["questions", "correct"]].tolist() == [6, 5]


def test_answers_to_a_question_without_a_key_are_left_out_until_graded_by_hand(run, finished, db, tmp_path):
    from vtt.models import Question

    db.scalar(select(Question).where(Question.qid == "q06")).answer_index = None  # a test split's withheld key
    db.commit()
    result = run("report", finished["code"], "--out", str(tmp_path / "report"))
    assert result.exit_code == 0, result.output
    ungraded = pd.read_csv(tmp_path / "report" / "ungraded.csv")
    assert set(ungraded["qid"]) == {"q03", "q06"} and len(ungraded[ungraded["qid"] == "q06"]) == 4
    info = pd.read_csv(tmp_path / "report" / "session_info.csv").set_index("key")["value"]
    assert info["Questions without a key"] == "1 (q06): answers graded by hand or left out of accuracy"

    hand = db.scalar(
        select(Answer)
        .join(SessionQuestion)
        .join(Question)
        .where(Question.qid == "q06", Answer.player_id == db.scalar(select(Answer.player_id).limit(1)))
    )
    hand.grade = Grade(correct=True, grader="host")
    db.commit()
    again = run("report", finished["code"], "--out", str(tmp_path / "again"))
    assert again.exit_code == 0, again.output
    assert len(pd.read_csv(tmp_path / "again" / "ungraded.csv").query("qid == 'q06'")) == 3


def test_export_writes_every_table_with_the_design_hash_and_no_token(run, finished, tmp_path):
    out = tmp_path / "export"
    result = run("export", finished["code"], "--out", str(out))
    assert result.exit_code == 0, result.output
    wide_name = f"{finished['code']}_wide.csv"
    assert sorted(p.name for p in out.iterdir()) == sorted([*EXPORT_FILES, wide_name])
    for path in out.iterdir():
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        assert list(frame.columns[:2]) == ["session", "design_hash"], path.name
        assert set(frame["design_hash"]) <= {finished["hash"]}, path.name
        # every table has rows, but for the graders' own marks, the judge's suggestions (nobody graded by hand here),
        # recordings and AI jurors' replies
        assert len(frame) > 0 or path.name in {
            "grader_marks.csv",
            "judge_suggestions.csv",
            "recordings.csv",
            "ai_juror_replies.csv",
        }, path.name
        content = path.read_text(encoding="utf-8")
        assert not any(token in content for token in finished["tokens"]), path.name
        assert "token" not in frame.columns and "client_key" not in frame.columns, path.name

    answers = pd.read_csv(out / "answers.csv", keep_default_na=False)
    assert len(answers) == len(ANSWERS)
    assert {"latency_ms", "late", "redacted", "edited_at", "submitted_at"} <= set(answers.columns)
    assert answers["submitted_at"].str.fullmatch(r"2026-05-14T\d\d:\d\d:\d\d\.\d{6}Z").all()
    questions = pd.read_csv(out / "questions.csv").set_index("qid")
    assert questions.loc["q06", "targets"] == "Emotion*;Event" and questions.loc["q06", "thinking"] == "Recognition"
    assert len(pd.read_csv(out / "grades.csv")) == 6
    votes = pd.read_csv(out / "votes.csv", keep_default_na=False)
    assert votes[votes["abstained"] == True]["juror"].tolist() == ["J4"]  # noqa: E712
    rounds = pd.read_csv(out / "rounds.csv", keep_default_na=False)
    assert json.loads(rounds.set_index("round").loc[2, "participants"]) == ["김민준", "Grace", "Agent"]
    events = pd.read_csv(out / "events.csv")
    assert json.loads(events.iloc[-1]["payload"]) == {"label": "J1", "token": "[removed]"}

    wide = pd.read_csv(out / wide_name, dtype=str, keep_default_na=False).set_index("label")
    assert wide["role"].to_dict() == {
        "김민준": "player",
        "Lena": "player",
        "Grace": "player",
        "Agent": "player",
        "J1": "juror",
        "J2": "juror",
        "J3": "juror",
        "J4": "juror",
    }
    assert [c for c in wide.columns if c.startswith("r1_vote")] == [
        "r1_vote1_alias",
        "r1_vote1_player",
        "r1_vote1_cast_at",
    ]
    assert wide.loc["J1", ["r1_vote1_alias", "r1_vote1_player", "r1_confidence"]].tolist() == ["A", "Agent", "5"]
    assert wide.loc["J3", ["r2_vote1_player", "r2_reason"]].tolist() == ["김민준", "J3 in round 2"]
    assert wide.loc["J4", "r1_vote1_player"] == "" and wide.loc["J4", "r1_vote1_cast_at"] != ""  # abstained
    assert wide.loc["Lena", "r1_alias"] == "D" and wide.loc["Lena", "r2_alias"] == ""
    assert wide.loc["Lena", ["r1_q06", "r1_q06_correct"]].tolist() == ["He freezes and goes pale", "True"]
    assert wide.loc["Grace", ["r1_q03", "r1_q03_correct"]].tolist() == ["Mortified: she spilled coffee on him", ""]
    assert wide.loc["김민준", "r1_q09_correct"] == "False" and wide.loc["J1", "r1_q09"] == ""
    assert wide.loc["J2", ["group", "expert", "age_band"]].tolist() == ["panel", "False", "30s"]


def test_unknown_code_exits_1(run, finished, tmp_path):
    for command in ("report", "export"):
        result = CliRunner().invoke(main, [command, "NOPE99", "--out", str(tmp_path / command)])
        assert result.exit_code == 1
        assert "no session with join code 'NOPE99'" in result.output
        assert not (tmp_path / command).exists()


def pdf_text(path) -> str:
    require_poppler()
    return subprocess.run(
        ["pdftotext", "-enc", "UTF-8", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout


KOREAN_HEADINGS = ("CogME 프로필", "배심원 투표", "배심원 집단", "판정지: 노출도", "문항 구성", "문답표")
ENGLISH_HEADINGS = (
    "CogME profiles",
    "Jury votes",
    "Juror groups",
    "Judgment sheet: exposure",
    "Question set",
    "Q&A sheet",
)


def test_report_in_korean_and_in_english(run, finished, tmp_path):
    korean, english = tmp_path / "ko", tmp_path / "en"
    assert run("report", finished["code"], "--out", str(korean), "--lang", "ko").exit_code == 0
    assert run("report", finished["code"], "--out", str(english)).exit_code == 0  # English by default
    text = pdf_text(korean / "report.pdf")
    assert all(heading in text for heading in KOREAN_HEADINGS), text[:3000]
    assert not any(heading in text for heading in ENGLISH_HEADINGS)
    assert "Report test - 비디오 튜링 테스트 보고서" in text and "참여 코드" in text and "채점 방식" in text
    assert "1라운드: emotion recognition" in text  # the theme as written, its frame in Korean
    assert "배심원 투표" in pdf_text(korean / "tallies.pdf") and "CogME 프로필" in pdf_text(korean / "profiles.pdf")

    text = pdf_text(english / "report.pdf")
    assert all(heading in text for heading in ENGLISH_HEADINGS)
    assert not any(heading in text for heading in KOREAN_HEADINGS)
    # the CSVs are the same in both languages
    for name in ("session_info.csv", "rounds.csv", "qa_sheet.csv"):
        assert (korean / name).read_bytes() == (english / name).read_bytes(), name
    assert run("report", finished["code"], "--out", str(tmp_path / "fr"), "--lang", "fr").exit_code == 2


def test_the_cover_counts_the_jurors_who_joined_and_those_who_voted(run, finished, db, tmp_path):
    """Two open joins, one who never voted and one who only abstained, and a third the host removed: jurors 6,
    voters 4, 2 of them joined openly, 1 removed."""
    sid = finished["id"]
    db.add(
        Juror(
            session_id=sid,
            label="J7",
            token=secrets.token_urlsafe(18),
            juror_group="open",
            removed_at=datetime(2026, 5, 14, 19, 0, tzinfo=UTC),
        )
    )
    db.add(Juror(session_id=sid, label="J5", token=secrets.token_urlsafe(18), juror_group="open"))
    abstainer = Juror(session_id=sid, label="J6", token=secrets.token_urlsafe(18), juror_group="open")
    db.add(abstainer)
    db.flush()
    db.add(
        Vote(
            session_id=sid,
            round=2,
            juror_id=abstainer.id,
            slot=1,
            player_id=None,
            confidence=None,
            reason="",
            client_key="abstain-J6",
            cast_at=datetime(2026, 5, 14, 19, 30, tzinfo=UTC),
        )
    )
    db.commit()
    english, korean = tmp_path / "en", tmp_path / "ko"
    assert run("report", finished["code"], "--out", str(english)).exit_code == 0
    assert run("report", finished["code"], "--out", str(korean), "--lang", "ko").exit_code == 0
    info = pd.read_csv(english / "session_info.csv").set_index("key")["value"]
    assert info["Jurors"] == "6 · voters 4 · joined openly 2 · removed by the host 1"
    assert "Jurors 6 · voters 4 · joined openly 2 · removed by the host 1" in " ".join(
        pdf_text(english / "report.pdf").split()
    )
    assert "배심원 6명 · 투표자 4명 · 공개 참여 2명 · 진행자가 제외 1명" in " ".join(
        pdf_text(korean / "report.pdf").split()
    )
