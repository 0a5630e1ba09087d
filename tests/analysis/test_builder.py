"""The set builder: quotas, balance of CogME elements, determinism, dealing into rounds."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis.builder import build_set, element_skew
from analysis.composition import composition
from analysis.tables import QUESTION_COLUMNS

# DramaQA-like skew: Character on most questions, Identity and Recall dominate, Commonsense and Means rare.
TARGET_WEIGHTS = {
    "Behavior": 30,
    "Object": 20,
    "Conversation": 12,
    "Place": 10,
    "Emotion": 10,
    "Event": 8,
    "Commonsense": 3,
}
CONTENT_WEIGHTS = {
    "Identity": 45,
    "Feature": 15,
    "Context": 10,
    "Sequence": 8,
    "Motivation": 8,
    "Relationship": 5,
    "Causality": 5,
    "Means": 4,
}
THINKING_WEIGHTS = {"Recall": 60, "Recognition": 25, "Reasoning": 15}


def _draw(rng: np.random.Generator, weights: dict[str, int], size: int) -> list[str]:
    names = list(weights)
    p = np.array(list(weights.values()), dtype=float)
    return [str(n) for n in rng.choice(names, size=size, replace=False, p=p / p.sum())]


def question(
    qid: str,
    type_: str = "mcq",
    clip: str | None = "shot",
    targets: tuple[str, ...] = ("Character",),
    contents: tuple[str, ...] = ("Identity",),
    thinking: str | None = "Recall",
) -> dict:
    """One row of the questions table (``analysis.tables``)."""
    choices = [f"option {i}" for i in range(5)] if type_ == "mcq" else []
    return {
        "qid": qid,
        "question": f"question {qid}?",
        "type": type_,
        "choices": choices,
        "answer": choices[0] if choices else "reference",
        "answer_index": 0 if choices else pd.NA,
        "clip": clip,
        "category": None,
        "round": pd.NA,
        "targets": targets,
        "key_target": targets[0] if targets else None,
        "contents": contents,
        "thinking": thinking,
    }


def questions_table(rows: list[dict]) -> pd.DataFrame:
    questions = pd.DataFrame(rows, columns=list(QUESTION_COLUMNS))
    return questions.astype({"answer_index": "Int64", "round": "Int64"})


def skewed_bank(size: int = 200, seed: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for n in range(size):
        others = _draw(rng, TARGET_WEIGHTS, int(rng.integers(0, 3)))
        targets = (["Character"] if rng.random() < 0.85 or not others else []) + others
        rows.append(
            question(
                f"q{n:03d}",
                type_="mcq" if rng.random() < 0.5 else "open",
                clip="shot" if rng.random() < 0.55 else "scene",
                targets=tuple(targets),
                contents=tuple(_draw(rng, CONTENT_WEIGHTS, int(rng.integers(1, 3)))),
                thinking=_draw(rng, THINKING_WEIGHTS, 1)[0],
            )
        )
    return questions_table(rows)


@pytest.fixture(scope="module")
def bank() -> pd.DataFrame:
    return skewed_bank()


@pytest.fixture(scope="module")
def case_study_set(bank):
    return build_set(bank, 30, 5, mcq=15, shot=17, seed=2021)


def test_quotas_are_met_exactly(case_study_set):
    made = case_study_set.set_composition
    assert made.total == 30
    assert made.types == {"mcq": 15, "open": 15}
    assert made.clips == {"shot": 17, "scene": 13, "none": 0}
    assert case_study_set.questions["qid"].is_unique


def test_set_is_less_skewed_than_bank_and_random_picks(bank, case_study_set):
    rng = np.random.default_rng(0)
    random_skews = [element_skew(bank.iloc[rng.choice(len(bank), 30, replace=False)]) for _ in range(20)]
    chosen = element_skew(case_study_set.questions)
    assert chosen < element_skew(bank)
    assert chosen < 0.5 * np.mean(random_skews)


def test_every_core_element_of_the_bank_reaches_the_set(case_study_set):
    counts = case_study_set.comparison()
    offered = counts[counts["bank"] > 0]
    assert (offered["set"] > 0).all(), offered[offered["set"] == 0]


def test_thinking_levels_are_evened_out(case_study_set):
    thinking = case_study_set.set_composition.element_counts()
    assert all(9 <= thinking[level] <= 11 for level in ("Recall", "Recognition", "Reasoning")), thinking


def test_same_seed_gives_the_same_set(bank):
    first = build_set(bank, 30, 5, mcq=15, shot=17, seed=3)
    again = build_set(bank, 30, 5, mcq=15, shot=17, seed=3)
    pd.testing.assert_frame_equal(first.questions, again.questions)
    assert first.seed == 3


def test_different_seeds_give_different_sets(bank):
    sets = {tuple(sorted(build_set(bank, 30, 5, mcq=15, shot=17, seed=s).questions["qid"])) for s in range(3)}
    assert len(sets) == 3


@pytest.mark.parametrize(
    ("count", "rounds", "mcq", "shot"), [(30, 5, 15, 17), (31, 5, 14, 18), (29, 4, 20, 9), (12, 5, 7, 5)]
)
def test_rounds_get_an_even_share_of_size_types_and_clips(bank, count, rounds, mcq, shot):
    dealt = build_set(bank, count, rounds, mcq=mcq, shot=shot, seed=11).questions
    per_round = dealt.groupby("round").agg(
        size=("qid", "size"), mcq=("type", lambda t: (t == "mcq").sum()), shot=("clip", lambda c: (c == "shot").sum())
    )
    assert list(per_round.index) == list(range(1, rounds + 1))
    for column, total in (("size", count), ("mcq", mcq), ("shot", shot)):
        even = total / rounds
        assert per_round[column].between(math.floor(even), math.ceil(even)).all(), (column, per_round)


def test_rounds_get_a_similar_element_mix(case_study_set):
    dealt = case_study_set.questions
    reasoning = dealt.groupby("round")["thinking"].apply(lambda t: (t == "Reasoning").sum())
    assert reasoning.max() - reasoning.min() <= 1


def test_rows_are_sorted_and_numbered_within_rounds(case_study_set):
    dealt = case_study_set.questions
    assert dealt["round"].dtype == "Int64"
    assert list(dealt.index) == list(range(len(dealt)))
    assert dealt[["round", "position"]].apply(tuple, axis=1).is_monotonic_increasing
    for _, members in dealt.groupby("round"):
        assert list(members["position"]) == list(range(1, len(members) + 1))


def test_question_order_inside_rounds_depends_on_the_seed(bank):
    orders = {tuple(build_set(bank, 30, 5, seed=s).questions["qid"]) for s in range(3)}
    assert len(orders) == 3


def test_missing_open_questions_are_named():
    rows = [question(f"m{n}", "mcq") for n in range(21)] + [question(f"o{n}", "open") for n in range(9)]
    with pytest.raises(ValueError, match="bank has 9 open questions, the set needs 15"):
        build_set(questions_table(rows), 30, 5, mcq=15)


def test_missing_scene_clips_are_named(bank):
    rows = [question(f"s{n}", clip="shot") for n in range(25)] + [question(f"c{n}", clip="scene") for n in range(5)]
    rows.append(question("no-clip", clip=None))
    with pytest.raises(ValueError, match="bank has 5 questions on scene clips, the set needs 13"):
        build_set(questions_table(rows), 30, 5, shot=17)


def test_quotas_that_cannot_hold_together_are_named():
    # Enough mcq and enough shot questions, but the mcq questions are all on scene clips.
    rows = (
        [question(f"mc{n}", "mcq", "scene") for n in range(15)]
        + [question(f"os{n}", "open", "shot") for n in range(20)]
        + [question(f"oc{n}", "open", "scene") for n in range(5)]
    )
    with pytest.raises(ValueError, match=r"cannot meet both quotas \(15 mcq and 17 shot of 30\).*0 mcq/shot"):
        build_set(questions_table(rows), 30, 5, mcq=15, shot=17)


def test_a_set_larger_than_the_bank_is_refused(bank):
    with pytest.raises(ValueError, match="bank has 200 questions, the set needs 201"):
        build_set(bank, 201, 5)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rounds": 0}, "rounds must be between 1 and the set size"),
        ({"rounds": 31}, "rounds must be between 1 and the set size"),
        ({"rounds": 5, "mcq": 31}, "mcq quota must be between 0 and 30"),
        ({"rounds": 5, "shot": -1}, "shot quota must be between 0 and 30"),
    ],
)
def test_impossible_arguments_are_refused(bank, kwargs, message):
    with pytest.raises(ValueError, match=message):
        build_set(bank, 30, **kwargs)


def test_duplicate_qids_are_refused():
    with pytest.raises(ValueError, match="duplicate qid"):
        build_set(questions_table([question("a"), question("a")]), 1, 1)


def test_non_canonical_tags_are_refused():
    with pytest.raises(ValueError, match="question a has tag 'grasping', not a canonical"):
        build_set(questions_table([question("a", thinking="grasping")]), 1, 1)


def test_untagged_questions_fill_in_only_when_tagged_ones_run_out():
    tagged = [question(f"t{n}", "open" if n < 3 else "mcq") for n in range(10)]
    untagged = [question(f"u{n}", "open", targets=(), contents=(), thinking=None) for n in range(10)]
    built = build_set(questions_table(tagged + untagged), 8, 2, mcq=4)
    used = sorted(built.set_composition.untagged)
    assert len(used) == 1  # 3 tagged open questions, 4 needed
    assert built.notes and "1 untagged question(s) used" in built.notes[0] and used[0] in built.notes[0]

    plenty = build_set(questions_table(tagged + untagged), 8, 2)
    assert plenty.set_composition.untagged == [] and plenty.notes == ()


def test_questions_without_a_clip_kind_sit_out_a_clip_quota():
    rows = [question(f"s{n}", clip="shot") for n in range(6)] + [question(f"n{n}", clip=None) for n in range(6)]
    assert set(build_set(questions_table(rows), 6, 2, shot=6).questions["clip"]) == {"shot"}
    assert len(build_set(questions_table(rows), 12, 3).questions) == 12  # no quota: every question may be used


def test_comparison_puts_the_set_beside_the_bank(bank, case_study_set):
    table = case_study_set.comparison()
    assert list(table.columns) == ["module", "element", "bank", "set", "bank_pct", "set_pct"]
    bank_counts = composition(bank).element_counts()
    assert dict(zip(table["element"], table["bank"])) == bank_counts
    recall = table.set_index("element").loc["Recall"]
    assert recall["bank_pct"] == pytest.approx(100 * bank_counts["Recall"] / len(bank))
    assert recall["set_pct"] == pytest.approx(100 * recall["set"] / 30)
    assert table.loc[table["module"] == "thinking", "set"].sum() == 30


def test_element_skew_is_zero_for_a_perfectly_even_set():
    rows = [
        question(f"q{n}", targets=(t,), contents=(c,), thinking=k)
        for n, (t, c, k) in enumerate(
            zip(
                ["Character", "Object", "Place", "Conversation", "Behavior", "Event", "Emotion", "Commonsense"] * 3,
                ["Identity", "Feature", "Relationship", "Means", "Context", "Sequence", "Causality", "Motivation"] * 3,
                ["Recall", "Recognition", "Reasoning"] * 8,
            )
        )
    ]
    assert element_skew(questions_table(rows)) == pytest.approx(0.0)
