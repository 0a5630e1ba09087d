"""The PDF reports' judge section beside the graders, the Q&A sheet's marks, and several vote slots.

The PDFs are read back with poppler (pdftotext, pdfinfo, pdffonts), which ``make test`` installs.
"""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pandas as pd
import pytest

from analysis.cogme import profiles
from analysis.judge_rows import JUDGE_AGREEMENT_COLUMNS, judge_rows
from analysis.session_report import write_reports
from analysis.session_report.qa_sheet import CORRECT_MARK, NO_ANSWER, UNGRADED_MARK, WRONG_MARK
from analysis.tables import QUESTION_COLUMNS
from analysis.votes import vote_stats
from tests.support.reports import (
    EMOJI_PLAYER,
    PLAYERS,
    pdf_text,
    question_row,
    read_csv,
)

pytestmark = pytest.mark.usefixtures("poppler")


def judge_tables(grader: str = "Ana") -> tuple[pd.DataFrame, pd.DataFrame]:
    """A judge against one grader and the final marks on four answers, as vtt.judge.agreement passes them.

    The grader gives every answer accuracy 3 (so rho is undefined: one grade throughout) and scores no depth or
    evidence (folded into one "undefined" line); the final marks score nothing but the verdict."""
    from analysis.agreement import FINAL_MARKS, judge_agreement, judge_confusions

    judge = "judge: m-1"
    rows = [
        {"item": item, "rater": judge, "correct": verdict, "accuracy": score, "depth": 2, "evidence": 2}
        for item, verdict, score in [(1, True, 4), (2, True, 3), (3, False, 1), (4, False, 2)]
    ]
    rows += [
        {"item": item, "rater": grader, "correct": verdict, "accuracy": 3, "depth": None, "evidence": None}
        for item, verdict in [(1, True), (2, False), (3, False), (4, False)]
    ]
    rows += [
        {"item": item, "rater": FINAL_MARKS, "correct": verdict, "accuracy": None, "depth": None, "evidence": None}
        for item, verdict in [(1, True), (2, True), (3, False)]
    ]
    marks = pd.DataFrame(rows).astype({d: "Float64" for d in ("accuracy", "depth", "evidence")})
    table = judge_agreement(marks, judge, ["accuracy", "depth", "evidence"]).assign(model="m-1")
    confusions = pd.DataFrame(
        [
            {"model": "m-1", "rater": rater, "rater_verdict": theirs, "judge_verdict": judges, "answers": int(n)}
            for rater, matrix in judge_confusions(marks, judge).items()
            for theirs in (True, False)
            for judges in (True, False)
            for n in [matrix.loc[theirs, judges]]
        ]
    )
    return table[list(JUDGE_AGREEMENT_COLUMNS)], confusions


def test_the_judge_beside_the_graders_section_and_csvs(session, results, tmp_path):
    from analysis.agreement import FINAL_MARKS

    questions, answers, _ = session
    agreement, confusions = judge_tables()
    lines = judge_rows(agreement)["m-1"]
    assert [(line.rater, line.measures, line.items) for line in lines] == [
        ("Ana", ("correct",), 4),
        ("Ana", ("accuracy",), 4),
        ("Ana", ("depth", "evidence"), 0),  # neither has an answer both marked: one line
        (FINAL_MARKS, ("correct",), 3),
        (FINAL_MARKS, ("accuracy", "depth", "evidence"), 0),
    ]
    # Ana against the judge on correct: p_o = 3/4, p_e = (1/4)(2/4) + (3/4)(2/4) = 1/2, kappa = 0.5
    assert lines[0].kappa == pytest.approx(0.5) and lines[0].spearman is None
    assert lines[1].spearman_reason == "constant" and lines[1].kappa_reason is None
    written = write_reports(
        tmp_path,
        questions=questions,
        answers=answers,
        profiles=results[0],
        judge_agreement=agreement,
        judge_confusions=confusions,
    )
    assert read_csv(written, "judge_agreement.csv").shape == (8, 8)  # 2 raters x 4 measures
    assert read_csv(written, "judge_confusions.csv")["answers"].tolist() == [1, 0, 1, 2, 2, 0, 0, 1]
    layout = subprocess.run(
        ["pdftotext", "-layout", "-enc", "UTF-8", str(written["report.pdf"]), "-"],
        capture_output=True,
        text=True,
        check=True,
    )
    text = " ".join(layout.stdout.split())  # row by row, as the tables read
    assert "The judge beside the graders" in text and "Judge: m-1" in text
    assert "Ana Correct/incorrect 4 0.50" in text and "undefined: one grade throughout" in text
    assert "Depth, Evidence 0 undefined: no answer both marked" in text
    assert "Final marks" in text and "Cohen, 1968" in text
    assert text.index("The judge beside the graders") < text.index("Question set")
    assert "The judge beside" not in pdf_text(written["profiles.pdf"])
    with_emoji = write_reports(
        tmp_path / "emoji",
        questions=questions,
        answers=answers,
        profiles=results[0],
        judge_agreement=judge_tables(EMOJI_PLAYER)[0],
    )
    assert with_emoji.missing_characters == ("😀",)  # a grader's name goes through the missing-glyph check
    assert "judge_confusions.csv" in with_emoji  # no confusions passed: an empty table


def test_qa_sheet_shows_the_chosen_option_and_the_no_answer_mark(tmp_path):
    choices = ["Kyungsu", "Deogi", "Haeyoung1", "Heeran", "Jinsang"]
    questions = pd.DataFrame(
        [
            {
                **question_row(
                    "q1",
                    "Who is looking at Dokyung?",
                    "mcq",
                    "Kyungsu",
                    "shot",
                    1,
                    ("Character",),
                    None,
                    ("Identity",),
                    "Recognition",
                ),
                "choices": choices,
            },
            question_row(
                "q2", "Why?", "open", "Because", "scene", 1, ("Character",), None, ("Motivation",), "Reasoning"
            ),
        ]
    ).astype({"answer_index": "Int64", "round": "Int64"})[list(QUESTION_COLUMNS)]
    answers = pd.DataFrame(
        {
            "player": ["P1", "P1", "P2", "P2", "P3", "P3"],
            "qid": ["q1", "q2", "q1", "q2", "q1", "q2"],
            "answer": ["1", "", "a", "Because", "deogi", "  "],
            "correct": [False, False, True, True, False, False],
            "kind": ["human", "human", "human", "human", "ai", "ai"],
        }
    )
    written = write_reports(tmp_path, questions=questions, answers=answers, profiles=profiles(questions, answers))
    sheet = read_csv(written, "qa_sheet.csv").set_index(["qid", "player"])
    assert sheet.loc[("q1", "P1"), "option"] == "B · Deogi"
    assert sheet.loc[("q1", "P2"), "option"] == "A · Kyungsu"
    assert sheet.loc[("q1", "P3"), "option"] == "B · Deogi"
    assert pd.isna(sheet.loc[("q2", "P2"), "option"])  # open question
    assert sheet.loc[("q1", "P1"), "answer"] == "1" and sheet.loc[("q1", "P1"), "answered"]  # raw answer kept
    assert not sheet.loc[("q2", "P1"), "answered"] and not sheet.loc[("q2", "P3"), "answered"]  # empty = no answer
    text = pdf_text(written["report.pdf"])
    qa = text[text.index("Q&A sheet") :]
    assert f"{WRONG_MARK} B · Deogi" in qa and f"{CORRECT_MARK} A · Kyungsu" in qa
    # q2: P1 and P3 said nothing -> the no-answer mark alone, P2 right
    assert re.search(rf"Th: Reasoning {NO_ANSWER} {CORRECT_MARK} Because {NO_ANSWER} ", qa)
    assert f"{WRONG_MARK} {NO_ANSWER}" not in qa


def test_qa_sheet_marks_open_answers_not_graded_yet_apart_from_no_answer(tmp_path):
    questions = pd.DataFrame(
        [
            question_row(
                "q1", "Why?", "open", "Because", "scene", 1, ("Character",), None, ("Motivation",), "Reasoning"
            ),
            question_row(
                "q2", "How?", "open", "Slowly", "scene", 1, ("Character",), None, ("Motivation",), "Reasoning"
            ),
        ]
    ).astype({"answer_index": "Int64", "round": "Int64"})[list(QUESTION_COLUMNS)]
    answers = pd.DataFrame(
        {
            "player": ["P1", "P2"],
            "qid": ["q1", "q1"],
            "answer": ["Because", "no idea"],
            "correct": [True, False],
            "kind": ["human", "ai"],
        }
    )
    ungraded = pd.DataFrame({"player": ["P1"], "qid": ["q2"], "round": [1], "answer": ["she was late"]})
    written = write_reports(
        tmp_path, questions=questions, answers=answers, profiles=profiles(questions, answers), ungraded=ungraded
    )
    sheet = read_csv(written, "qa_sheet.csv").set_index(["qid", "player"])
    assert sheet.loc[("q2", "P1"), "ungraded"] and sheet.loc[("q2", "P1"), "answer"] == "she was late"
    assert not sheet.loc[("q2", "P2"), "ungraded"] and not sheet.loc[("q2", "P2"), "answered"]  # no answer at all
    assert not sheet.loc[("q1", "P1"), "ungraded"] and sheet.loc[("q1", "P1"), "correct"]
    qa = pdf_text(written["report.pdf"])
    qa = qa[qa.index("Q&A sheet") :]
    assert f"{UNGRADED_MARK} not graded yet" in qa
    assert re.search(rf"{re.escape(UNGRADED_MARK)} she was late {NO_ANSWER}", qa)


def test_several_slots_are_explained_in_the_tallies(session, tmp_path):
    questions, answers, _ = session
    players = PLAYERS.assign(kind=np.where(PLAYERS["name"] == "Adult", "ai", PLAYERS["kind"]))
    answers = answers.assign(kind=np.where(answers["player"] == "Adult", "ai", answers["kind"]))
    votes = pd.DataFrame(
        {
            "round": 1,
            "juror": ["J1", "J1", "J2", "J2"],
            "vote": ["Adult", "VTT agent", "Adult", "민준"],
            "slot": [1, 2, 1, 2],
        }
    )
    written = write_reports(
        tmp_path,
        questions=questions,
        answers=answers,
        profiles=profiles(questions, answers),
        stats=vote_stats(votes, players),
    )
    text = pdf_text(written["tallies.pdf"])
    assert "a player's share and the majority are counted out of the jurors who voted" in text
    assert "2 (100.0 %)" in text  # Adult: named by both jurors
    assert read_csv(written, "rounds.csv")["voters"].tolist() == [2]
