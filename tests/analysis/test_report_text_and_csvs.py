"""The PDF reports' text and their CSVs, checked against the input.

The PDFs are read back with poppler (pdftotext, pdfinfo, pdffonts), which ``make test`` installs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import analysis
from analysis.cogme import profiles
from analysis.composition import composition
from analysis.fonts import BOLD, REGULAR, missing_glyphs
from analysis.pdf.text import markup
from analysis.session_report import write_reports
from analysis.session_report.csv_tables import QA_COLUMNS
from analysis.session_report.qa_sheet import CORRECT_MARK, NO_ANSWER, WRONG_MARK
from tests.support.reports import (
    KOREAN_PLAYER,
    MARKUP_ANSWER,
    PLAYERS,
    pdf_text,
    read_csv,
)

pytestmark = pytest.mark.usefixtures("poppler")

# ------------------------------------------------------------------------------------------- text


def test_profiles_pdf_names_players_and_method(written, results):
    text = pdf_text(written["profiles.pdf"])
    assert "Case study <2021> & co" in text
    assert "또 오해영" in text
    assert KOREAN_PLAYER in text and "Kim & Lee" in text and "VTT agent (AI)" in text
    assert "Scoring method: frontiers2022" in text
    assert (
        "CONTENT and THINKING tags weighted by W_R (our reading of the paper, which defines TARGET weights only)"
    ) in text
    assert "Player: 민준" in text
    accuracy = results[0].players.set_index("player").loc["Adult", "accuracy_pct"]
    assert f"overall accuracy {accuracy:.1f} %" in text
    for element in ("Character", "Identity", "Reasoning", "Weighted score %"):
        assert element in text


def test_uniform_profiles_do_not_carry_the_frontiers_note(session, tmp_path):
    questions, answers, _ = session
    written = write_reports(
        tmp_path, questions=questions, answers=answers, profiles=profiles(questions, answers, "uniform")
    )
    text = pdf_text(written["profiles.pdf"])
    assert "Scoring method: uniform" in text
    assert "our reading of the paper" not in text


def test_tallies_pdf_shows_detection_rule_and_groups(written, results):
    _, stats = results
    text = pdf_text(written["tallies.pdf"])
    round1 = stats.rounds.iloc[0]
    assert round1["detection_pct"] == pytest.approx(200 / 3)
    assert "66.7 %" in text  # the bar label of round 1
    assert f"{round1['ci_low']:.1f}–{round1['ci_high']:.1f}" in text
    assert "Pass rule: chance" in text and "α = 0.05" in text
    assert "Round 1" in text and "Round 2" in text
    assert "expert" in text and "non-expert" in text
    assert "Brier score" in text


def test_report_pdf_holds_question_set_and_qa_sheet(written):
    text = pdf_text(written["report.pdf"])
    assert "Question set" in text and "Q&A sheet" in text
    assert "1 untagged" in text
    assert MARKUP_ANSWER in text  # user markup is shown, not interpreted
    assert "What does <b>Dokyung</b> do after standing up?" in text
    assert "민준이는 왜 울었나요?" in text and "엄마가 보고 싶어서" in text
    assert CORRECT_MARK in text and WRONG_MARK in text and NO_ANSWER in text


def test_report_glyphs_exist_in_the_embedded_font():
    """Every non-ASCII character the report code prints must be in NanumGothic (else it prints blank)."""
    code = Path(analysis.__file__).parent
    for path in [*(code / "session_report").glob("*.py"), *(code / "pdf").glob("*.py"), code / "charts.py"]:
        source = path.read_text(encoding="utf-8")
        used = {ch for ch in source if ord(ch) > 127}
        assert not missing_glyphs("".join(used), REGULAR), path.name
        assert not missing_glyphs("".join(used), BOLD), path.name


def test_markup_escapes_user_text():
    assert markup("<b>a & b</b>\nnext") == "&lt;b&gt;a &amp; b&lt;/b&gt;<br/>next"
    assert markup(None) == "" and markup(float("nan")) == ""


# ------------------------------------------------------------------------------------------- CSVs


def test_profile_csvs_match_the_profiles(written, results):
    profile, _ = results
    players = read_csv(written, "profile_players.csv")
    assert list(players.columns) == list(profile.players.columns) + ["method"]
    assert (players["method"] == "frontiers2022").all()
    assert list(players["player"]) == [KOREAN_PLAYER, "Kim & Lee", "Adult", "VTT agent"]
    assert np.allclose(players["accuracy_pct"], profile.players["accuracy_pct"])
    elements = read_csv(written, "profile_elements.csv")
    assert list(elements.columns) == list(profile.elements.columns) + ["method"]
    assert np.allclose(elements["score_pct"], profile.elements["score_pct"])
    assert list(elements["element"]) == list(profile.elements["element"])


def test_vote_csvs_match_the_statistics(written, results):
    _, stats = results
    rounds = read_csv(written, "rounds.csv")
    assert list(rounds.columns) == list(stats.rounds.columns)
    assert list(rounds["votes"]) == [3, 4] and list(rounds["abstentions"]) == [1, 0]
    assert np.allclose(rounds["detection_pct"], [200 / 3, 25.0])
    tally = read_csv(written, "tally.csv")
    assert list(tally.columns) == ["round", "player", "kind", "votes", "share_pct"]
    assert tally.set_index(["round", "player"]).loc[(2, "Adult"), "votes"] == 3
    assert len(tally) == 2 * len(PLAYERS)
    groups = read_csv(written, "groups.csv").set_index("group")
    assert groups.loc["expert", "votes"] == 4 and groups.loc["expert", "ai_votes"] == 3
    jurors = read_csv(written, "jurors.csv").set_index("juror")
    assert list(jurors.columns) == list(stats.jurors.columns)[1:]
    assert jurors.loc["J1", "hits"] == 1 and jurors.loc["J2", "hits"] == 2
    summary = read_csv(written, "vote_summary.csv").iloc[0]
    assert summary["pass_rule"] == "chance" and summary["rounds"] == 2
    assert summary["overall_detection_pct"] == pytest.approx(300 / 7)  # 2 of 3, then 1 of 4
    assert summary["brier"] == pytest.approx(stats.confidence["brier"])


def test_question_set_csvs_match_the_questions(written, session):
    questions, _, _ = session
    counts = read_csv(written, "composition.csv")
    expected = composition(questions).elements
    assert list(counts.columns) == ["module", "element", "questions"]
    assert list(counts["questions"]) == list(expected["questions"])
    assert counts.set_index("element").loc["Character", "questions"] == 5
    facets = read_csv(written, "question_set.csv").set_index(["facet", "value"])["questions"]
    assert facets[("all", "questions")] == 6 and facets[("type", "open")] == 3
    assert facets[("clip", "shot")] == 3 and facets[("clip", "none")] == 1 and facets[("tags", "untagged")] == 1


def test_qa_sheet_csv_lists_every_answer(written, session):
    questions, answers, _ = session
    sheet = read_csv(written, "qa_sheet.csv")
    assert list(sheet.columns) == QA_COLUMNS
    assert len(sheet) == len(questions) * len(PLAYERS)
    by_key = sheet.set_index(["qid", "player"])
    for row in answers.itertuples(index=False):
        assert by_key.loc[(row.qid, row.player), "answer"] == row.answer
        assert bool(by_key.loc[(row.qid, row.player), "correct"]) == row.correct
    missing = by_key.loc[("q5", KOREAN_PLAYER)]
    assert not missing["answered"] and not missing["correct"] and pd.isna(missing["answer"])
    assert by_key.loc[("q1", "Adult"), "targets"] == "Character;Object*"
    assert by_key.loc[("q3", "Adult"), "question"] == "민준이는 왜 울었나요?"
    assert pd.isna(by_key.loc[("q6", "Adult"), "thinking"])
