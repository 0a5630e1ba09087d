"""A study's juries compared (analysis/study_juries.py and the study report's section), against hand-computed values.

Two sessions of the same 3 players (Agent the AI), one round each:

- S1: live J1 Agent, J2 Mina (1/2); AI gpt-x: Agent (1/1);
- S2: live J1 Agent, J2 Agent, J3 Grace (2/3); displaced D1 Agent, D2 Mina (1/2); AI gpt-x: Mina (0/1).

Pooled: live 3/5, displaced 1/2, ai:gpt-x 1/2; chance 1/3 throughout.  Across the three juries, the chi-squared test on
[[3, 2], [1, 1], [1, 1]] (column totals 5 and 4 of 9): expected [[25/9, 20/9], [10/9, 8/9], [10/9, 8/9]], so
chi² = 0.09 with 2 degrees of freedom and p = exp(-0.09 / 2).
"""

from __future__ import annotations

import math
import subprocess

import pandas as pd
import pytest

from analysis.study import ALL, StudyData
from analysis.study_juries import STUDY_JURY_CSVS, study_juries
from analysis.study_report import write_study_report
from tests.support.machine import require_poppler

PLAYERS = [("Mina", "human"), ("Grace", "human"), ("Agent", "ai")]
VOTES = {  # session: [(juror, jury, pick)]
    "S1": [("J1", "live", "Agent"), ("J2", "live", "Mina"), ("AIG", "ai:gpt-x", "Agent")],
    "S2": [
        ("J1", "live", "Agent"),
        ("J2", "live", "Agent"),
        ("J3", "live", "Grace"),
        ("D1", "displaced", "Agent"),
        ("D2", "displaced", "Mina"),
        ("AIG", "ai:gpt-x", "Mina"),
    ],
}
Z = 1.959963984540054


def wilson(hits: int, n: int) -> tuple[float, float]:
    p = hits / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    return 100 * (centre - half), 100 * (centre + half)


def make_study(with_other_juries: bool = True) -> StudyData:
    sessions = pd.DataFrame(
        [
            {
                "session": code,
                "name": f"Session {code}",
                "design_hash": code * 4,
                "bank": "bank",
                "pass_rule": "chance",
                "alpha": 0.05,
                "threshold_pct": 70.0,
                "rounds": 1,
            }
            for code in VOTES
        ]
    )
    players = pd.DataFrame(
        [(code, name, kind, None, pd.NA, None) for code in VOTES for name, kind in PLAYERS],
        columns=["session", "player", "kind", "stage", "age", "program"],
    ).astype({"age": "Int64"})
    questions = pd.DataFrame(
        [
            {
                "session": code,
                "qid": "q1",
                "question": "Who?",
                "type": "mcq",
                "choices": ["a", "b"],
                "answer": "a",
                "answer_index": 0,
                "clip": None,
                "category": None,
                "round": 1,
                "targets": [],
                "key_target": None,
                "contents": [],
                "thinking": None,
            }
            for code in VOTES
        ]
    )
    answers = pd.DataFrame(
        [(code, name, "q1", True, kind, None) for code in VOTES for name, kind in PLAYERS],
        columns=["session", "player", "qid", "correct", "kind", "program"],
    )
    rows = [
        (code, 1, juror, pick, 1, float("nan"), jury)
        for code, votes in VOTES.items()
        for juror, jury, pick in votes
        if with_other_juries or jury == "live"
    ]
    jury_votes = pd.DataFrame(rows, columns=["session", "round", "juror", "vote", "slot", "confidence", "jury"])
    live = jury_votes[jury_votes["jury"] == "live"].drop(columns="jury")
    sheet = pd.DataFrame(columns=["session", "juror", "qid", "player", "looks_like_ai"])
    return StudyData("Juries", sessions, players, questions, answers, live, sheet, jury_votes=jury_votes)


def test_each_jury_pools_over_the_sessions():
    juries, tests = study_juries(make_study())
    pooled = juries[juries["session"] == ALL].set_index("jury")
    assert list(pooled.index) == ["live", "displaced", "ai:gpt-x"]
    for jury, (hits, n) in {"live": (3, 5), "displaced": (1, 2), "ai:gpt-x": (1, 2)}.items():
        assert (pooled.loc[jury, "ai_votes"], pooled.loc[jury, "votes"]) == (hits, n)
        assert pooled.loc[jury, "detection_pct"] == pytest.approx(100 * hits / n)
        assert (pooled.loc[jury, "ci_low"], pooled.loc[jury, "ci_high"]) == pytest.approx(wilson(hits, n))
        assert pooled.loc[jury, "chance_pct"] == pytest.approx(100 / 3)
    per_session = juries[juries["session"] != ALL]
    assert list(zip(per_session["session"], per_session["jury"], per_session["ai_votes"], per_session["votes"])) == [
        ("S1", "live", 1, 2),
        ("S1", "ai:gpt-x", 1, 1),
        ("S2", "live", 2, 3),
        ("S2", "displaced", 1, 2),
        ("S2", "ai:gpt-x", 0, 1),
    ]
    pooled_test = tests[tests["session"] == ALL].iloc[0]
    assert pooled_test["test"] == "chi2" and pooled_test["dof"] == 2
    assert pooled_test["statistic"] == pytest.approx(0.09)
    assert pooled_test["p_value"] == pytest.approx(math.exp(-0.045))
    s1 = tests[tests["session"] == "S1"].iloc[0]
    # Fisher on [[1, 1], [1, 0]]: P(a = 1) = 2/3, P(a = 2) = 1/3: every table is as likely or less, p = 1
    assert s1["test"] == "fisher_exact" and s1["p_value"] == pytest.approx(1.0)


def test_a_study_of_live_juries_only_has_no_comparison(tmp_path):
    juries, tests = study_juries(make_study(with_other_juries=False))
    assert juries.empty and tests.empty
    written = {path.name for path in write_study_report(make_study(with_other_juries=False), tmp_path)}
    assert not written & set(STUDY_JURY_CSVS)


def test_the_study_report_compares_the_juries(tmp_path):
    require_poppler()
    written = {path.name: path for path in write_study_report(make_study(), tmp_path)}
    assert set(STUDY_JURY_CSVS) <= set(written)
    table = pd.read_csv(written["juries.csv"])
    assert len(table) == 5 + 3
    text = " ".join(
        subprocess.run(
            ["pdftotext", "-enc", "UTF-8", str(written["study_report.pdf"]), "-"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    )
    assert "Juries compared" in text and "χ² = 0.09 (df 2), p = 0.956" in text
