"""A case-study session's questions, answers and votes for the PDF reports' tests, and the reports read back with
poppler (pdftotext, pdfinfo).  Shared by ``tests/analysis/test_report_*.py`` (their fixtures are in
``tests/analysis/conftest.py``)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.tables import QUESTION_COLUMNS

KOREAN_PLAYER = "민준"
MARKUP_ANSWER = "<b>bold</b> & co"
PLAYERS = pd.DataFrame(
    {"name": [KOREAN_PLAYER, "Kim & Lee", "Adult", "VTT agent"], "kind": ["human", "human", "human", "ai"]}
)
VOTE_CSVS = {"rounds.csv", "tally.csv", "ai_rounds.csv", "groups.csv", "jurors.csv", "vote_summary.csv"}
SHEET_CSVS = {"exposure.csv"}
JURY_CSVS = {"jury_detection.csv", "jury_tests.csv", "jury_shares.csv"}  # only with more than the live jury
JUDGE_CSVS = {"judge_agreement.csv", "judge_confusions.csv"}
PDFS = {"profiles.pdf", "tallies.pdf", "report.pdf"}

EMOJI_PLAYER = "Agent_😀"


def question_row(qid, text, kind, answer, clip, round_, targets, key, contents, thinking):
    return {
        "qid": qid,
        "question": text,
        "type": kind,
        "choices": ["A", "B", "C", "D", "E"] if kind == "mcq" else [],
        "answer": answer,
        "answer_index": 0 if kind == "mcq" else None,
        "clip": clip,
        "category": None,
        "round": round_,
        "targets": targets,
        "key_target": key,
        "contents": contents,
        "thinking": thinking,
    }


def case_study_session():
    questions = pd.DataFrame(
        [
            question_row(
                "q1",
                "What is Haeyoung1 wearing?",
                "mcq",
                "A",
                "shot",
                1,
                ("Character", "Object"),
                "Object",
                ("Identity",),
                "Recall",
            ),
            question_row(
                "q2",
                "Who is looking at Dokyung? " + "A very long question that has to wrap. " * 6,
                "mcq",
                "A",
                "shot",
                1,
                ("Character", "Behavior"),
                "Character",
                ("Identity",),
                "Recognition",
            ),
            question_row(
                "q3",
                "민준이는 왜 울었나요?",
                "open",
                "엄마가 보고 싶어서",
                "scene",
                1,
                ("Character", "Emotion"),
                "Emotion",
                ("Feature",),
                "Reasoning",
            ),
            question_row(
                "q4",
                "What does <b>Dokyung</b> do after standing up?",
                "open",
                "He leaves & cries",
                "scene",
                2,
                ("Character", "Event"),
                "Event",
                ("Sequence",),
                "Recognition",
            ),
            question_row(
                "q5",
                "Why does Heeran envy Haeyoung1?",
                "open",
                "Jealousy",
                None,
                2,
                ("Character", "Conversation", "Emotion"),
                "Conversation",
                ("Context", "Motivation"),
                "Reasoning",
            ),
            question_row("q6", "An untagged question", "mcq", "A", "shot", 2, (), None, (), None),
        ]
    ).astype({"answer_index": "Int64", "round": "Int64"})[list(QUESTION_COLUMNS)]
    right = {KOREAN_PLAYER: "1100", "Kim & Lee": "101011", "Adult": "111101", "VTT agent": "110100"}
    rows = []
    for player, kind in zip(PLAYERS["name"], PLAYERS["kind"]):
        for qid, mark in zip(questions["qid"], right[player]):  # 민준 answers q1-q4 only
            said = MARKUP_ANSWER if (player, qid) == ("VTT agent", "q3") else f"{player} says {qid}"
            rows.append({"player": player, "qid": qid, "answer": said, "correct": mark == "1", "kind": kind})
    answers = pd.DataFrame(rows)
    votes = pd.DataFrame(
        [
            {"round": round_, "juror": juror, "vote": vote, "slot": 1, "confidence": confidence, "group": group}
            for round_, round_votes in (
                (1, ["VTT agent", "VTT agent", KOREAN_PLAYER, None]),
                (2, ["Adult", "VTT agent", "Adult", "Adult"]),
            )
            for juror, vote, confidence, group in zip(
                ["J1", "J2", "J3", "J4"],
                round_votes,
                [5.0, 4.0, 2.0, np.nan],
                ["expert", "expert", "non-expert", "non-expert"],
            )
        ]
    )
    return questions, answers, votes


def pdf_text(path: Path) -> str:
    """The PDF's text with runs of whitespace folded to one space."""
    text = subprocess.run(["pdftotext", "-enc", "UTF-8", str(path), "-"], capture_output=True, text=True, check=True)
    return " ".join(text.stdout.split())


def page_count(path: Path) -> int:
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True).stdout
    return int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))


def page_size(path: Path, page: int) -> tuple[float, float]:
    info = subprocess.run(
        ["pdfinfo", "-f", str(page), "-l", str(page), str(path)], capture_output=True, text=True, check=True
    ).stdout
    width, height = re.search(rf"^Page\s+{page} size:\s+([\d.]+) x ([\d.]+)", info, re.M).groups()
    return float(width), float(height)


def read_csv(written, name) -> pd.DataFrame:
    return pd.read_csv(written[name], encoding="utf-8", keep_default_na=False, na_values=[""])
