"""A study of three sessions read together (analysis.study, analysis.study_report), checked by hand.

Session A: four humans of three stages and one AI, human-tie, bank "cases-1".
Session B: three humans and two AI players answered by two different programs, chance rule, two vote
slots, the same bank: its q1-q3 are A's q1-q3 (same qid, same text).
Session C: a different bank whose q1 and q2 collide with A's qids but ask something else, a human without
a stage and an AI without a recorded program, threshold rule.
"""

from __future__ import annotations

import itertools
import math
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest, chi2, chi2_contingency

from analysis import study_report
from analysis.study import (
    ALL,
    NO_PROGRAM,
    NO_STAGE,
    STUDY_CSV_FILES,
    StudyData,
    composition,
    detection,
    g_statistic,
    group_profiles,
    juror_groups,
    pooled_binomial_p,
    qid_collisions,
    sessions_differ,
    shared_questions,
    study_exposure,
    study_tables,
    verdicts,
)
from analysis.study_report import write_study_report
from analysis.tables import QUESTION_COLUMNS
from analysis.votes import exposure, vote_stats
from analysis.words import KO
from tests.support.templates import t_templates

A, B, C = "SCHL01", "LAB002", "MUSE03"  # join codes
GPT, LLAVA = "http · gpt-4o", "cli · llava"
HASHES = {A: "3f" * 32, B: "a1b2" * 16, C: "0c" * 32}

BANK_1 = [  # qid, text, targets, key, contents, thinking
    ("q1", "What is Haeyoung wearing?", ("Character", "Object"), "Object", ("Identity",), "Recall"),
    ("q2", "Why does Dokyung leave?", ("Character", "Behavior"), "Behavior", ("Motivation",), "Reasoning"),
    ("q3", "Where do they meet?", ("Place",), "Place", ("Feature",), "Recognition"),
    ("q4", "What happens after the call?", ("Event", "Conversation"), "Event", ("Sequence", "Causality"), "Reasoning"),
]
BANK_2 = [
    ("q1", "Who opens the door?", ("Character",), "Character", ("Identity",), "Recall"),
    ("q2", "How does the mother feel?", ("Emotion", "Character"), "Emotion", ("Feature",), "Recognition"),
    ("q9", "What is on the table?", ("Object",), "Object", ("Identity",), "Recall"),
]
PLAYERS = {  # session -> (player, kind, stage, age, program)
    A: [
        ("Mina", "human", "pre-operational", 5, None),
        ("Hoon", "human", "pre-operational", 6, None),
        ("Leo", "human", "concrete operational", 9, None),
        ("Ada", "human", "formal operational", 14, None),
        ("Bot", "ai", None, None, GPT),
    ],
    B: [
        ("Yuna", "human", "pre-operational", 4, None),
        ("Sara", "human", "concrete operational", 10, None),
        ("Jin", "human", "formal operational", 15, None),
        ("AI-1", "ai", None, None, GPT),
        ("AI-2", "ai", None, None, LLAVA),
    ],
    C: [
        ("민준", "human", "concrete operational", 8, None),
        ("Guest", "human", None, None, None),
        ("Agent", "ai", None, None, None),
    ],
}
BANKS = {A: BANK_1, B: BANK_1[:3], C: BANK_2}
RULES = {A: ("human-tie", 0.05, 70.0), B: ("chance", 0.05, 70.0), C: ("threshold", 0.05, 60.0)}


def _questions() -> pd.DataFrame:
    rows = [
        {
            "session": code,
            "qid": qid,
            "question": text,
            "type": "mcq",
            "choices": ["a", "b", "c"],
            "answer": "a",
            "answer_index": 0,
            "clip": "shot",
            "category": None,
            "round": 1,
            "targets": targets,
            "key_target": key,
            "contents": contents,
            "thinking": thinking,
        }
        for code, bank in BANKS.items()
        for qid, text, targets, key, contents, thinking in bank
    ]
    return pd.DataFrame(rows)[["session", *QUESTION_COLUMNS]].astype({"answer_index": "Int64", "round": "Int64"})


def _answers() -> pd.DataFrame:
    """Every question put to every player; right or wrong by a fixed pattern (no answer is a wrong row)."""
    rows = []
    for code, players in PLAYERS.items():
        for p_index, (player, kind, _, _, program) in enumerate(players):
            for q_index, (qid, *_) in enumerate(BANKS[code]):
                rows.append(
                    {
                        "session": code,
                        "player": player,
                        "qid": qid,
                        "correct": (p_index * 3 + q_index * 2 + len(code)) % 5 < 3,
                        "kind": kind,
                        "program": program,
                    }
                )
    return pd.DataFrame(rows)


def _votes() -> pd.DataFrame:
    rows = []
    # A: one slot, four jurors, three rounds; paper/phone and experts
    a_votes = {1: ["Bot", "Bot", "Leo", "Bot"], 2: ["Mina", "Bot", "Bot", None], 3: ["Ada", "Leo", "Bot", "Hoon"]}
    for round_, names in a_votes.items():
        for juror, name in zip(["J1", "J2", "J3", "J4"], names):
            group, expert = ("paper", "yes") if juror in ("J1", "J2") else ("phone", "no")
            rows.append((A, round_, juror, name, 1, 3.0, group, expert, None))
    # B: two slots (two AI players), three jurors, two rounds
    b_votes = {
        1: [("AI-1", "AI-2"), ("AI-1", "Jin"), ("Sara", "Yuna")],
        2: [("AI-2", "Jin"), ("AI-1", "AI-2"), ("AI-2", "Sara")],
    }
    for round_, pairs in b_votes.items():
        for juror, pair in zip(["J1", "J2", "J3"], pairs):
            for slot, name in enumerate(pair, start=1):
                rows.append((B, round_, juror, name, slot, np.nan, "phone", "expert" if juror == "J1" else "no", None))
    # C: one slot, five jurors, two rounds; an open group with age bands
    c_votes = {1: ["Agent", "Agent", "Guest", "Agent", "민준"], 2: ["Agent", "Guest", "Agent", "Agent", "Agent"]}
    for round_, names in c_votes.items():
        for index, name in enumerate(names, start=1):
            rows.append((C, round_, f"J{index}", name, 1, 4.0, "open", None, "20s" if index < 3 else "40s"))
    return pd.DataFrame(
        rows, columns=["session", "round", "juror", "vote", "slot", "confidence", "group", "expert", "age_band"]
    )


def _sheet() -> pd.DataFrame:
    rows = []
    marked_by_session = {  # (juror, qid) -> the player marked as looking like the AI
        A: {("J1", "q1"): "Bot", ("J2", "q1"): "Leo", ("J1", "q2"): "Bot", ("J3", "q2"): "Mina"},
        B: {("J1", "q1"): "AI-1", ("J2", "q1"): "AI-2", ("J3", "q1"): "Jin", ("J1", "q3"): "AI-2"},
        C: {("J1", "q1"): "Agent", ("J2", "q1"): "Guest"},
    }
    for code, marked in marked_by_session.items():
        for (juror, qid), chosen in marked.items():
            for player, *_ in PLAYERS[code]:
                rows.append((code, juror, qid, player, player == chosen))
    return pd.DataFrame(rows, columns=["session", "juror", "qid", "player", "looks_like_ai"])


def make_study() -> StudyData:
    sessions = pd.DataFrame(
        [
            {
                "session": code,
                "name": f"Session {code}",
                "design_hash": HASHES[code],
                "bank": "cases-2" if code == C else "cases-1",
                "pass_rule": RULES[code][0],
                "alpha": RULES[code][1],
                "threshold_pct": RULES[code][2],
                "rounds": 3 if code == A else 2,
            }
            for code in (A, B, C)
        ]
    )
    players = pd.DataFrame(
        [(code, *player) for code, roster in PLAYERS.items() for player in roster],
        columns=["session", "player", "kind", "stage", "age", "program"],
    ).astype({"age": "Int64"})
    return StudyData("Pilot study", sessions, players, _questions(), _answers(), _votes(), _sheet())


@pytest.fixture(scope="module")
def study() -> StudyData:
    return make_study()


def roster(study: StudyData, code: str) -> pd.DataFrame:
    players = study.players[study.players["session"] == code]
    return pd.DataFrame({"name": players["player"].to_numpy(), "kind": players["kind"].to_numpy()})


def session_stats(study: StudyData, code: str):
    votes = study.votes[study.votes["session"] == code].drop(columns="session")
    rule, alpha, threshold = RULES[code]
    return vote_stats(votes, roster(study, code), rule, alpha, threshold)


def pooled(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["session"] == ALL]


def by_session(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["session"] != ALL]


# ---------------------------------------------------------------------------------- composition


def test_composition_counts_each_session_and_sums_them(study):
    made = composition(study)
    players = made.players.set_index(["session", "kind", "stage", "program"], drop=False)
    assert players.loc[(A, "human", "pre-operational", None), "players"].item() == 2
    assert players.loc[(C, "human", NO_STAGE, None), "players"].item() == 1
    assert players.loc[(C, "ai", None, NO_PROGRAM), "players"].item() == 1
    assert players.loc[(ALL, "ai", None, GPT), "players"].item() == 2  # A's Bot and B's AI-1
    assert pooled(made.players)["players"].sum() == by_session(made.players)["players"].sum() == 13
    # stages youngest first, humans before AI players
    assert list(pooled(made.players)["stage"].dropna()) == [
        "pre-operational",
        "concrete operational",
        "formal operational",
        NO_STAGE,
    ]

    questions = made.questions.set_index(["session", "element"])["questions"]
    assert questions[(A, "Character")] == 2 and questions[(C, "Character")] == 2
    assert questions[(ALL, "Character")] == 2 + 2 + 2  # A, B (q1, q2 of the same bank) and C
    summed = by_session(made.questions).groupby("element")["questions"].sum()
    assert pooled(made.questions).set_index("element")["questions"].sort_index().equals(summed.sort_index())

    jurors = made.jurors.set_index(["session", "facet", "group"])["jurors"]
    assert jurors[(A, "group", "paper")] == 2 and jurors[(B, "group", "phone")] == 3
    assert jurors[(ALL, "group", "phone")] == 2 + 3  # a juror is (session, juror): J1 of A and J1 of B are two
    assert jurors[(ALL, "expert", "expert")] == 2 + 1
    assert jurors[(ALL, "age_band", "20s")] == 2


# ------------------------------------------------------------------------------ CogME profiles


def hand_profile(study: StudyData, stage: str) -> pd.DataFrame:
    """A stage's pooled (attempts, correct) per element, from the long answers joined to each session's tags."""
    questions = study.questions
    tags = []
    for row in questions.itertuples(index=False):
        for element in (*row.targets, *row.contents, row.thinking):
            tags.append((row.session, row.qid, element))
    tags = pd.DataFrame(tags, columns=["session", "qid", "element"])
    stages = study.players[["session", "player", "stage"]]
    answers = study.answers.merge(stages, on=["session", "player"])
    answers = answers[(answers["kind"] == "human") & (answers["stage"] == stage)]
    joined = answers.merge(tags, on=["session", "qid"])
    return joined.groupby("element").agg(attempts=("correct", "size"), correct=("correct", "sum"))


@pytest.mark.parametrize("stage", ["pre-operational", "concrete operational", "formal operational"])
def test_a_stage_pools_the_elements_of_the_answers_joined_to_their_own_tags(study, stage):
    profiles = group_profiles(study, "stage")
    mine = pooled(profiles.elements)
    mine = mine[mine["stage"] == stage].set_index("element")
    expected = hand_profile(study, stage)
    assert sorted(mine.index) == sorted(expected.index)
    assert (mine.loc[expected.index, "attempts"] == expected["attempts"]).all()
    assert (mine.loc[expected.index, "correct"] == expected["correct"]).all()
    assert np.allclose(mine["accuracy_pct"], 100 * mine["correct"] / mine["attempts"])


def test_concrete_operational_by_hand(study):
    # Leo (A, 4 questions), Sara (B, 3 questions) and 민준 (C, 3 questions of the other bank)
    profiles = group_profiles(study, "stage")
    character = profiles.elements.set_index(["session", "stage", "element"]).loc[
        (ALL, "concrete operational", "Character")
    ]
    # Character: A's q1, q2 (Leo), B's q1, q2 (Sara), C's q1, q2 (민준): six attempts
    leo = [(2 * 3 + q * 2 + 1) % 5 < 3 for q in (0, 1)]
    sara = [(1 * 3 + q * 2 + 1) % 5 < 3 for q in (0, 1)]
    minjun = [(0 * 3 + q * 2 + 1) % 5 < 3 for q in (0, 1)]
    assert character["attempts"] == 6
    assert character["correct"] == sum(leo + sara + minjun)
    groups = profiles.groups.set_index(["session", "stage"])
    assert groups.loc[(ALL, "concrete operational"), "players"] == 3
    assert groups.loc[(ALL, "concrete operational"), "attempts"] == 4 + 3 + 3
    assert profiles.order == ["pre-operational", "concrete operational", "formal operational", NO_STAGE]


@pytest.mark.parametrize("by", ["stage", "program"])
def test_pooled_counts_are_the_sum_of_the_sessions(study, by):
    profiles = group_profiles(study, by)
    for table, keys in ((profiles.elements, [by, "module", "element"]), (profiles.groups, [by])):
        summed = by_session(table).groupby(keys)[["attempts", "correct"]].sum()
        all_rows = pooled(table).set_index(keys)[["attempts", "correct"]]
        assert all_rows.sort_index().equals(summed.sort_index())


def test_ai_answers_are_grouped_by_their_program(study):
    profiles = group_profiles(study, "program")
    assert profiles.order == [LLAVA, GPT, NO_PROGRAM]
    groups = profiles.groups.set_index(["session", "program"])
    assert groups.loc[(ALL, GPT), "players"] == 2 and groups.loc[(ALL, GPT), "attempts"] == 4 + 3
    assert groups.loc[(B, LLAVA), "attempts"] == 3
    assert groups.loc[(C, NO_PROGRAM), "attempts"] == 3
    assert set(profiles.elements["program"]) == {GPT, LLAVA, NO_PROGRAM}


# ----------------------------------------------------------------------------------- detection


def test_detection_per_session_is_vote_stats_own_and_pooled_is_the_sum(study):
    table = detection(study).set_index("session")
    for code in (A, B, C):
        summary = session_stats(study, code).summary
        assert table.loc[code, "votes"] == summary["overall_votes"]
        assert table.loc[code, "detection_pct"] == pytest.approx(summary["overall_detection_pct"])
        assert table.loc[code, "p_value"] == pytest.approx(summary["overall_p_value"])
        assert [table.loc[code, "ci_low"], table.loc[code, "ci_high"]] == pytest.approx(summary["overall_ci"])
    # A: 11 cast votes, 6 on Bot; B: 12 slot votes, 7 on AI-1 or AI-2; C: 10 votes, 7 on Agent
    assert list(table.loc[[A, B, C], "votes"]) == [11, 12, 10]
    assert list(table.loc[[A, B, C], "ai_votes"]) == [6, 7, 7]
    assert list(table.loc[[A, B, C], "chance_pct"]) == pytest.approx([20.0, 40.0, 100 / 3])
    assert table.loc[ALL, "votes"] == 33 and table.loc[ALL, "ai_votes"] == 20
    assert table.loc[ALL, "detection_pct"] == pytest.approx(100 * 20 / 33)
    assert table.loc[ALL, "chance_pct"] == pytest.approx(100 * (11 * 0.2 + 12 * 0.4 + 10 / 3) / 33)
    assert table.loc[ALL, "p_value"] == pytest.approx(pooled_binomial_p(20, [11, 12, 10], [0.2, 0.4, 1 / 3]))


def brute_force_tail(hits: int, trials: list[int], chances: list[float]) -> float:
    """P(X >= hits) by enumerating every outcome of every vote."""
    probabilities = [p for n, p in zip(trials, chances) for _ in range(n)]
    tail = 0.0
    for outcome in itertools.product((0, 1), repeat=len(probabilities)):
        if sum(outcome) >= hits:
            tail += math.prod(p if hit else 1 - p for hit, p in zip(outcome, probabilities))
    return tail


@pytest.mark.parametrize("hits", [0, 1, 3, 5, 6])
def test_the_pooled_p_is_the_poisson_binomial_tail(hits):
    assert pooled_binomial_p(hits, [2, 3, 1], [0.2, 0.5, 0.75]) == pytest.approx(
        brute_force_tail(hits, [2, 3, 1], [0.2, 0.5, 0.75]), rel=1e-12
    )


def test_the_pooled_p_with_one_chance_level_is_the_binomial_p():
    plain = binomtest(17, 45, 0.25, alternative="greater").pvalue
    assert pooled_binomial_p(17, [20, 15, 10], [0.25, 0.25, 0.25]) == pytest.approx(plain, rel=1e-10)
    assert math.isnan(pooled_binomial_p(0, [0, 0], [0.2, 0.5]))


# ------------------------------------------------------------------------------ sessions differ


def test_the_g_test_against_a_hand_computation_and_scipy():
    hits, votes = np.array([8, 20, 5]), np.array([20, 25, 15])
    table = np.column_stack([hits, votes - hits])
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / table.sum()
    by_hand = 2 * sum(o * math.log(o / e) for o, e in zip(table.ravel(), expected.ravel()) if o)
    tested = sessions_differ(hits, votes).set_index("test")
    assert tested.loc["likelihood-ratio", "statistic"] == pytest.approx(by_hand)
    assert tested.loc["likelihood-ratio", "df"] == 2
    assert tested.loc["likelihood-ratio", "p_value"] == pytest.approx(chi2.sf(by_hand, 2))
    scipy_g, scipy_p, scipy_df, _ = chi2_contingency(table, correction=False, lambda_="log-likelihood")
    assert tested.loc["likelihood-ratio", "statistic"] == pytest.approx(scipy_g)
    assert tested.loc["likelihood-ratio", "p_value"] == pytest.approx(scipy_p)
    assert scipy_df == 2
    assert g_statistic(np.array([[4, 5, 3]]), np.array([8, 10, 6]))[0] == pytest.approx(0.0)  # one common rate


def test_the_monte_carlo_p_is_seeded_and_close_to_the_chi2_p_on_large_counts():
    hits, votes = [210, 236, 190, 228], [500, 500, 480, 520]
    tested = sessions_differ(hits, votes, draws=4000).set_index("test")
    chi2_p = tested.loc["likelihood-ratio", "p_value"]
    mc_p = tested.loc["monte-carlo", "p_value"]
    assert 0.05 < chi2_p < 0.5  # a case where the tolerance below means something
    assert mc_p == pytest.approx(chi2_p, abs=0.03)
    assert tested.loc["monte-carlo", "draws"] == 4000 and tested.loc["monte-carlo", "seed"] == 1
    again = sessions_differ(hits, votes, draws=4000).set_index("test")
    assert again.loc["monte-carlo", "p_value"] == mc_p
    other = sessions_differ(hits, votes, draws=4000, seed=7).set_index("test")
    assert other.loc["monte-carlo", "p_value"] != mc_p


def test_one_session_with_votes_has_nothing_to_compare():
    tested = sessions_differ([3, 0], [10, 0])
    assert tested["df"].tolist() == [0, 0] and tested["p_value"].isna().all()


# ------------------------------------------------------------------------------------ verdicts


def test_each_session_is_judged_by_vote_stats_under_its_own_rule(study):
    table = verdicts(study).set_index("session")
    assert list(table.index) == [A, B, C]
    for code in (A, B, C):
        summary = session_stats(study, code).summary
        assert table.loc[code, "pass_rule"] == RULES[code][0]
        assert table.loc[code, "rounds_passed"] == summary["rounds_passed"]
        assert table.loc[code, "rounds_with_votes"] == summary["rounds_with_votes"]
        assert table.loc[code, "mean_detection_pct"] == pytest.approx(summary["mean_detection_pct"])
    # C under threshold 60 %: 3 of 5 (60 %) passes round 1, 4 of 5 is detected in round 2
    assert table.loc[C, "verdict"] == "AI passed 1 of 2 rounds"


def test_juror_facets_pool_the_sessions_groups(study):
    table = juror_groups(study)
    for code in (A, B, C):
        mine = table[table["session"] == code].set_index(["facet", "group"])
        theirs = session_stats(study, code).groups.set_index(["facet", "group"])
        assert mine[["jurors", "votes", "ai_votes"]].equals(theirs[["jurors", "votes", "ai_votes"]])
    phone = table.set_index(["session", "facet", "group"]).loc[(ALL, "group", "phone")]
    # A's J3, J4 (5 votes, one abstention; 3 on Bot) and B's three jurors (12 votes, 7 on an AI)
    assert (phone["jurors"], phone["votes"], phone["ai_votes"]) == (5, 5 + 12, 3 + 7)
    assert phone["detection_pct"] == pytest.approx(100 * 10 / 17)
    assert phone["ci_low"] < phone["detection_pct"] < phone["ci_high"]


# --------------------------------------------------------------------------- questions shared


def test_shared_questions_need_the_same_qid_and_text(study):
    shared = shared_questions(study)
    assert shared["qid"].tolist() == ["q1", "q2", "q3"]
    assert shared["session_codes"].tolist() == [f"{A}, {B}"] * 3
    assert shared["sessions"].tolist() == [2, 2, 2]
    collisions = qid_collisions(study)
    assert collisions[["qid", "session"]].values.tolist() == [
        ["q1", A],
        ["q1", B],
        ["q1", C],
        ["q2", A],
        ["q2", B],
        ["q2", C],
    ]


def test_exposure_stacks_the_sessions_and_pools_a_shared_question_only(study):
    table = study_exposure(study)
    for code in (A, B, C):
        sheet = study.sheet[study.sheet["session"] == code].drop(columns="session")
        theirs = exposure(sheet, roster(study, code)).set_index("qid")
        mine = table[table["session"] == code].set_index("qid")
        assert mine[["marks", "ai_marks"]].sort_index().equals(theirs[["marks", "ai_marks"]].sort_index())
    q1 = table[table["qid"] == "q1"]
    # A's and B's q1 pooled (2 + 3 marks, 1 + 2 on an AI); C's q1 asks something else: its own row only
    assert q1["session"].tolist() == [A, B, ALL, C]
    pooled_q1 = q1[q1["session"] == ALL].iloc[0]
    assert (pooled_q1["marks"], pooled_q1["ai_marks"]) == (5, 3)
    assert pooled_q1["question"] == "What is Haeyoung wearing?"
    assert pooled_q1["exposure_pct"] == pytest.approx(60.0)
    assert set(table.loc[table["session"] == ALL, "qid"]) == {"q1"}  # q2 and q3 are on one sheet each


def test_a_qid_twice_in_one_session_and_an_answer_of_another_session_are_refused(study):
    questions = pd.concat([study.questions, study.questions.iloc[[0]]], ignore_index=True)
    with pytest.raises(ValueError, match="listed twice in session 'SCHL01'"):
        StudyData("x", study.sessions, study.players, questions, study.answers, study.votes, study.sheet)
    answers = study.answers.assign(session=study.answers["session"].replace({C: B}))  # 민준 played in C, not B
    with pytest.raises(ValueError, match="not a player of session 'LAB002'"):
        StudyData("x", study.sessions, study.players, study.questions, answers, study.votes, study.sheet)


def test_study_tables_names_every_csv(study):
    tables = study_tables(study, draws=200)
    assert tuple(tables) == STUDY_CSV_FILES
    differ = tables["sessions_differ.csv"].set_index("test")
    expected = g_statistic(np.array([6, 7, 7]), np.array([11, 12, 10]))[0]
    assert differ.loc["likelihood-ratio", "statistic"] == pytest.approx(expected)
    overview = tables["sessions.csv"].set_index("session")
    assert overview.loc[B, "ai_players"] == 2 and overview.loc[C, "jurors"] == 5
    assert overview.loc[A, "questions"] == 4


# ---------------------------------------------------------------------------------- the report


@pytest.mark.usefixtures("poppler")
@pytest.mark.parametrize("language", ["en", "ko"])
def test_the_report_writes_every_csv_and_a_pdf(study, tmp_path, language):
    written = write_study_report(study, tmp_path, language=language)
    assert {path.name for path in written} == {*STUDY_CSV_FILES, "study_report.pdf"}
    detected = pd.read_csv(tmp_path / "detection.csv", keep_default_na=False)
    assert detected["session"].tolist() == [A, B, C, ALL]
    text = subprocess.run(
        ["pdftotext", str(tmp_path / "study_report.pdf"), "-"], check=True, capture_output=True, text=True
    ).stdout
    for code in (A, B, C):
        assert code in text and f"Session {code}" in text
    for design_hash in HASHES.values():
        assert design_hash in text
    assert GPT in text and "What is Haeyoung wearing?" in text
    if language == "ko":
        assert "탐지율" in text and "발달 단계" in text
    else:
        assert "Detection %" in text and "developmental stage" in text


def test_every_template_of_the_study_report_has_a_korean_one():
    templates = t_templates(Path(study_report.__file__).parent)
    assert templates
    assert [text for text in templates if text not in KO] == []
