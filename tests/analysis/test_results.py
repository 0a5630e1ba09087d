"""The analysis JSON: exact shape, plain types, NaN as null, json round trip."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from analysis.cogme import profiles
from analysis.results import analysis_json
from analysis.votes import vote_stats
from tests.support.case_study import PLAYERS, case_study_votes
from tests.support.cogme_cases import questions_table, worked_answers, worked_questions


def round_trip(result: dict) -> dict:
    return json.loads(json.dumps(result, allow_nan=False, ensure_ascii=False))


def test_profiles_only():
    result = analysis_json(profiles(worked_questions(), worked_answers(), "frontiers2022"))
    assert round_trip(result) == result
    assert list(result) == ["method", "pass_rule", "players", "rounds", "mean_detection_pct"]
    assert (result["method"], result["pass_rule"], result["rounds"], result["mean_detection_pct"]) == (
        "frontiers2022",
        None,
        [],
        None,
    )
    a, b = result["players"]
    assert list(a) == ["name", "kind", "questions", "correct", "accuracy_pct", "element_sd", "elements"]
    assert (a["name"], a["kind"], a["questions"], a["correct"], a["accuracy_pct"]) == ("A", "human", 5, 3, 60.0)
    assert (b["name"], b["kind"]) == ("B", "ai")
    character = a["elements"][0]
    assert list(character) == ["module", "element", "questions", "correct", "accuracy_pct", "score_pct"]
    assert character["module"] == "target" and character["element"] == "Character"
    assert character["score_pct"] == pytest.approx(100 * (11 / 3) / 6.5)  # unrounded
    assert len(a["elements"]) == 14
    assert type(a["questions"]) is int and type(a["element_sd"]) is float


def test_undefined_numbers_become_null():
    questions = questions_table([("x", ["Character"], None, [], None)])
    answers = pd.DataFrame({"player": ["김민지"], "qid": ["x"], "answer": ["a"], "correct": [False], "kind": ["human"]})
    result = analysis_json(profiles(questions, answers))
    assert result["players"][0]["element_sd"] is None
    assert '"element_sd": null' in json.dumps(result, allow_nan=False)
    assert round_trip(result)["players"][0]["name"] == "김민지"


def test_with_votes():
    votes = pd.concat(
        [
            case_study_votes(),
            pd.DataFrame({"round": 6, "juror": ["J01", "J02"], "vote": [None, None], "slot": 1}),
        ],
        ignore_index=True,
    )
    answers = worked_answers().replace({"player": {"A": "Kid4", "B": "AI"}})
    result = analysis_json(profiles(worked_questions(), answers), vote_stats(votes, PLAYERS, pass_rule="chance"))
    assert round_trip(result) == result
    assert result["pass_rule"] == "chance"
    assert result["mean_detection_pct"] == pytest.approx((62.5 + 75 + 37.5 + 500 / 9 + 12.5) / 5)
    first, *_, fourth, fifth, empty = result["rounds"]
    assert list(first) == [
        "round",
        "votes",
        "abstentions",
        "tally",
        "detection_pct",
        "majority",
        "ai_passed",
        "p_value",
        "ci95",
    ]
    assert (first["round"], first["votes"], first["abstentions"], first["detection_pct"]) == (1, 16, 0, 62.5)
    assert first["tally"] == {"Kid4": 0, "Kid10": 0, "Teen14": 2, "Adult20": 4, "AI": 10}
    assert (first["majority"], first["ai_passed"]) == (True, False)
    assert first["ci95"][0] < 62.5 < first["ci95"][1]
    assert (fourth["votes"], fourth["abstentions"], fourth["ai_passed"]) == (9, 7, False)
    assert fifth["ai_passed"] is True
    assert empty == {
        "round": 6,
        "votes": 0,
        "abstentions": 2,
        "tally": {name: 0 for name in PLAYERS["name"]},
        "detection_pct": None,
        "majority": False,
        "ai_passed": None,
        "p_value": None,
        "ci95": [None, None],
    }
    assert all(type(r["majority"]) is bool and type(r["round"]) is int for r in result["rounds"])
