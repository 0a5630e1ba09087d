"""The PDF reports' notes (characters the font lacks, untagged questions, the pooled test) and vote, element
and exposure tables.

The PDFs are read back with poppler (pdftotext, pdfinfo, pdffonts), which ``make test`` installs.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from analysis.cogme import element_frequencies, profiles
from analysis.session_report import write_reports
from analysis.votes import exposure, vote_stats
from tests.support.reports import (
    EMOJI_PLAYER,
    KOREAN_PLAYER,
    PLAYERS,
    pdf_text,
    read_csv,
)

pytestmark = pytest.mark.usefixtures("poppler")

# ---------------------------------------------------------------------------------- review fixes


def test_characters_the_font_cannot_show_are_listed_and_returned(session, tmp_path):
    questions, answers, votes = session
    rename = {"VTT agent": EMOJI_PLAYER}
    questions = questions.assign(
        question=questions["question"].replace({"An untagged question": "An untagged question about ά"})
    )
    answers = answers.replace({"player": rename})
    players = PLAYERS.replace({"name": rename})
    stats = vote_stats(votes.replace({"vote": rename}), players, "chance")
    written = write_reports(
        tmp_path, questions=questions, answers=answers, profiles=profiles(questions, answers), stats=stats
    )
    assert written.missing_characters == ("ά", "😀")
    assert written["report.pdf"] == tmp_path / "report.pdf"  # still a {name: path} dict
    note = "characters the embedded font cannot show:"
    for name in ("profiles.pdf", "tallies.pdf"):  # the Greek question is in report.pdf only
        assert f"{note} U+1F600 GRINNING FACE." in pdf_text(written[name])
    assert f"{note} U+03AC GREEK SMALL LETTER ALPHA WITH TONOS, U+1F600 GRINNING FACE." in pdf_text(
        written["report.pdf"]
    )


def test_reports_without_such_characters_carry_no_note(written):
    assert written.missing_characters == ()
    assert "cannot show" not in pdf_text(written["report.pdf"])


def test_profiles_pdf_says_how_many_questions_are_untagged(written, session, tmp_path):
    text = pdf_text(written["profiles.pdf"])
    assert "1 of 6 questions carries no CogME tag: counted in overall accuracy only." in text
    questions, answers, _ = session
    tagged = questions[questions["qid"] != "q6"]
    clean = write_reports(tmp_path, questions=tagged, answers=answers, profiles=profiles(tagged, answers))
    assert "no CogME tag" not in pdf_text(clean["profiles.pdf"])


def test_tallies_pdf_says_the_pooled_test_treats_votes_as_independent(written):
    text = pdf_text(written["tallies.pdf"])
    assert (
        "both pool the rounds and treat the votes as independent, which one juror's votes are not, so read "
        "them as approximate"
    ) in text


def test_rounds_without_votes_are_not_counted_as_passed_or_without_majority(session, tmp_path):
    questions, answers, votes = session
    silent = pd.DataFrame(
        {"round": 3, "juror": ["J1", "J2"], "vote": [None, None], "slot": 1, "confidence": np.nan, "group": None}
    )
    stats = vote_stats(pd.concat([votes, silent], ignore_index=True), PLAYERS, "chance")
    written = write_reports(
        tmp_path, questions=questions, answers=answers, profiles=profiles(questions, answers), stats=stats
    )
    text = pdf_text(written["tallies.pdf"])
    # round 1: 2 of 3 on the AI (p = 0.26, passed); round 2: 1 of 4 (passed); round 3: nobody voted
    assert "The AI passed 2 of 2 rounds (1 round without votes)." in text
    assert "voting jurors in 2 of 2 rounds." in text  # the AI 2 of 3, Adult 3 of 4
    summary = read_csv(written, "vote_summary.csv").iloc[0]
    assert (summary["rounds"], summary["rounds_with_votes"], summary["rounds_without_votes"]) == (3, 2, 1)


def test_vote_summary_csv_has_hit_rate_and_confidence_votes(written):
    summary = read_csv(written, "vote_summary.csv").iloc[0]
    # hit rates: J1 1 of 2, J2 2 of 2, J3 0 of 2, J4 0 of 1 -> mean (50 + 100 + 0 + 0) / 4
    assert summary["mean_hit_rate_pct"] == pytest.approx(37.5)
    # 7 cast votes, J4's round-2 vote has no confidence
    assert summary["confidence_votes"] == 6
    text = pdf_text(written["tallies.pdf"])
    assert "Mean hit rate 37.5 %" in text
    assert re.search(r"Brier score Votes with a confidence \d\.\d{2} \d\.\d{2} \d\.\d{3} 6 ", text)


def test_element_frequencies_csv(written, session):
    questions, answers, _ = session
    table = read_csv(written, "element_frequencies.csv")
    expected = element_frequencies(questions, answers)
    assert list(table.columns) == ["player", "module", "element", "questions", "correct", "missed"]
    assert table.equals(expected.astype({"questions": int, "correct": int, "missed": int}))
    adult = table[(table["player"] == "Adult") & (table["element"] == "Character")].iloc[0]
    # Adult: right on q1-q4, wrong on q5 (Character is on q1-q5)
    assert (adult["questions"], adult["correct"], adult["missed"]) == (5, 4, 1)


def test_exposure_table_and_csv_with_a_judgment_sheet(session, results, tmp_path):
    questions, answers, _ = session
    sheet = pd.DataFrame(
        {
            "juror": ["J1", "J2", "J1", "J2", "J3"],
            "qid": ["q1", "q1", "q2", "q2", "q2"],
            "player": ["VTT agent", "Adult", "VTT agent", "VTT agent", KOREAN_PLAYER],
            "looks_like_ai": [True, True, True, True, False],
        }
    )
    table = exposure(sheet, PLAYERS, answers)
    profile, stats = results
    written = write_reports(
        tmp_path / "with", questions=questions, answers=answers, profiles=profile, stats=stats, exposure=table
    )
    csv = read_csv(written, "exposure.csv")
    assert list(csv.columns) == ["qid", "marks", "ai_marks", "exposure_pct", "chance_pct"]
    assert csv["marks"].tolist() == [2, 2] and csv["ai_marks"].tolist() == [1, 2]
    assert csv["exposure_pct"].tolist() == [50.0, 100.0]
    assert csv["chance_pct"].tolist() == [25.0, 25.0]  # 1 AI answer of 4 on each question
    for name in ("tallies.pdf", "report.pdf"):
        text = pdf_text(written[name])
        assert "Judgment sheet: exposure" in text
        assert "q1 2 1 50.0 25.0" in text and "q2 2 2 100.0 25.0" in text
    # without votes the exposure still gets tallies.pdf; without a sheet there is no exposure at all
    alone = write_reports(tmp_path / "alone", questions=questions, answers=answers, profiles=profile, exposure=table)
    assert "Judgment sheet: exposure" in pdf_text(alone["tallies.pdf"]) and "rounds.csv" not in alone
