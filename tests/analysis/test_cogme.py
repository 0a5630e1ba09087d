"""CogME weights and profiles against hand computations on the worked examples of CogME 2022, Figure 2."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pandas as pd
import pytest

from analysis.cogme import METHODS, element_frequencies, profiles, question_weights
from analysis.taxonomy import element_order
from tests.support.cogme_cases import questions_table, worked_answers, worked_questions

# Thinking weights per question of the worked examples:
#   q  thinking     cogsci2024 W   frontiers2022 W_R
#   1  Recall       1              1
#   2  Recognition  2              1.5
#   3  Reasoning    3              2
#   4  Recognition  2              1.5
#   5  Reasoning    3              2
# frontiers2022 TARGET weights (SC = NT x W_R, T_i = SC x W_T / T_sum, T_sum = NT + 1 with a key):
#   1: SC = 2 x 1   = 2, T_sum 3: Character 2/3, Object* 4/3
#   2: SC = 2 x 1.5 = 3, T_sum 3: Character* 2, Behavior 1
#   3: SC = 2 x 2   = 4, T_sum 3: Character 4/3, Emotion* 8/3
#   4: SC = 2 x 1.5 = 3, T_sum 3: Character 1, Event* 2
#   5: SC = 3 x 2   = 6, T_sum 4: Character 1.5, Conversation* 3, Emotion 1.5
FRONTIERS_TARGET_WEIGHTS = {
    ("1", "Character"): 2 / 3,
    ("1", "Object"): 4 / 3,
    ("2", "Character"): 2,
    ("2", "Behavior"): 1,
    ("3", "Character"): 4 / 3,
    ("3", "Emotion"): 8 / 3,
    ("4", "Character"): 1,
    ("4", "Event"): 2,
    ("5", "Conversation"): 3,
    ("5", "Character"): 1.5,
    ("5", "Emotion"): 1.5,
}

# Expected profiles: element -> (questions, correct, accuracy, cogsci2024 score, frontiers2022 score).
# Player A: right on 1, 2, 4; wrong on 3, 5.
EXPECTED_A = {
    # Character on 1-5: right 1, 2, 4.  cogsci (1 + 2 + 2) / (1 + 2 + 3 + 2 + 3) = 5/11;
    # frontiers (2/3 + 2 + 1) / (2/3 + 2 + 4/3 + 1 + 1.5) = (11/3) / 6.5
    "Character": (5, 3, 60.0, 100 * 5 / 11, 100 * (11 / 3) / 6.5),
    "Object": (1, 1, 100.0, 100.0, 100.0),  # q1 right
    "Conversation": (1, 0, 0.0, 0.0, 0.0),  # q5 wrong
    "Behavior": (1, 1, 100.0, 100.0, 100.0),  # q2 right
    "Event": (1, 1, 100.0, 100.0, 100.0),  # q4 right
    "Emotion": (2, 0, 0.0, 0.0, 0.0),  # q3, q5 wrong
    "Identity": (2, 2, 100.0, 100.0, 100.0),  # q1, q2 right
    "Feature": (1, 0, 0.0, 0.0, 0.0),  # q3 wrong
    "Context": (1, 0, 0.0, 0.0, 0.0),  # q5 wrong
    "Sequence": (1, 1, 100.0, 100.0, 100.0),  # q4 right
    "Motivation": (1, 0, 0.0, 0.0, 0.0),  # q5 wrong
    "Recall": (1, 1, 100.0, 100.0, 100.0),  # q1 right
    "Recognition": (2, 2, 100.0, 100.0, 100.0),  # q2, q4 right
    "Reasoning": (2, 0, 0.0, 0.0, 0.0),  # q3, q5 wrong
}
# Player B: right on 1, 3; wrong on 5; no answer to 2 and 4 (= wrong).
EXPECTED_B = {
    # Character: cogsci (1 + 3) / 11; frontiers (2/3 + 4/3) / 6.5 = 2 / 6.5
    "Character": (5, 2, 40.0, 100 * 4 / 11, 100 * 2 / 6.5),
    "Object": (1, 1, 100.0, 100.0, 100.0),
    "Conversation": (1, 0, 0.0, 0.0, 0.0),
    "Behavior": (1, 0, 0.0, 0.0, 0.0),
    "Event": (1, 0, 0.0, 0.0, 0.0),
    # Emotion on q3 (right) and q5: cogsci 3 / (3 + 3); frontiers (8/3) / (8/3 + 1.5) = 16/25
    "Emotion": (2, 1, 50.0, 50.0, 64.0),
    # Identity on q1 (right) and q2: cogsci 1 / (1 + 2); frontiers W_R 1 / (1 + 1.5)
    "Identity": (2, 1, 50.0, 100 / 3, 40.0),
    "Feature": (1, 1, 100.0, 100.0, 100.0),
    "Context": (1, 0, 0.0, 0.0, 0.0),
    "Sequence": (1, 0, 0.0, 0.0, 0.0),
    "Motivation": (1, 0, 0.0, 0.0, 0.0),
    "Recall": (1, 1, 100.0, 100.0, 100.0),
    "Recognition": (2, 0, 0.0, 0.0, 0.0),
    # Reasoning on q3 (right) and q5, both Reasoning: equal weights under every method
    "Reasoning": (2, 1, 50.0, 50.0, 50.0),
}
SCORE_COLUMN = {"uniform": 2, "cogsci2024": 3, "frontiers2022": 4}


@pytest.fixture(name="worked_examples")
def worked_examples_fixture() -> pd.DataFrame:
    return worked_questions()


@pytest.fixture(name="worked_answers")
def worked_answers_fixture() -> pd.DataFrame:
    return worked_answers()


def test_frontiers2022_target_weights_match_the_hand_computed_table(worked_examples):
    weights = question_weights(worked_examples, "frontiers2022")
    targets = weights[weights["module"] == "target"]
    got = dict(zip(zip(targets["qid"], targets["element"]), targets["weight"]))
    assert got == pytest.approx(FRONTIERS_TARGET_WEIGHTS)
    keys = targets.loc[targets["is_key"], "element"].tolist()
    assert keys == ["Object", "Character", "Emotion", "Event", "Conversation"]


def test_frontiers2022_content_and_thinking_tags_get_w_r(worked_examples):
    weights = question_weights(worked_examples, "frontiers2022")
    others = weights[weights["module"] != "target"]
    w_r = {"1": 1.0, "2": 1.5, "3": 2.0, "4": 1.5, "5": 2.0}
    assert others["weight"].tolist() == [w_r[q] for q in others["qid"]]


def test_frontiers2022_without_key_target_each_target_gets_w_r():
    questions = questions_table([("x", ["Character", "Place", "Event"], None, ["Feature"], "Reasoning")])
    weights = question_weights(questions, "frontiers2022")
    # SC = 3 x 2 = 6, T_sum = NT = 3: each target 6 x 1 / 3 = 2 = W_R
    assert weights.loc[weights["module"] == "target", "weight"].tolist() == [2.0, 2.0, 2.0]


def test_cogsci2024_gives_every_tag_the_thinking_weight(worked_examples):
    weights = question_weights(worked_examples, "cogsci2024")
    w = {"1": 1.0, "2": 2.0, "3": 3.0, "4": 2.0, "5": 3.0}
    assert weights["weight"].tolist() == [w[q] for q in weights["qid"]]


def test_uniform_weights_are_one(worked_examples):
    weights = question_weights(worked_examples, "uniform")
    assert list(weights.columns) == ["qid", "module", "element", "is_key", "weight"]
    assert (weights["weight"] == 1.0).all() and len(weights) == 22


def test_question_without_thinking_tag_weighs_one_under_every_method():
    questions = questions_table([("x", ["Character", "Object"], "Object", ["Identity"], None)])
    for method in METHODS:
        assert question_weights(questions, method)["weight"].tolist() == [1.0, 1.0, 1.0]


def test_unknown_method_is_refused(worked_examples):
    with pytest.raises(ValueError, match="unknown scoring method"):
        question_weights(worked_examples, "bloom")


def test_character_figures_of_the_worked_examples(worked_examples, worked_answers):
    character = {
        method: profiles(worked_examples, worked_answers, method).elements.query(
            "player == 'A' and element == 'Character'"
        )
        for method in METHODS
    }
    assert character["uniform"]["accuracy_pct"].item() == pytest.approx(60.0)
    assert character["cogsci2024"]["score_pct"].item() == pytest.approx(45.454545, abs=1e-6)
    assert character["frontiers2022"]["score_pct"].item() == pytest.approx(56.410256, abs=1e-6)


@pytest.mark.parametrize("method", METHODS)
def test_every_element_matches_the_hand_computation(worked_examples, worked_answers, method):
    result = profiles(worked_examples, worked_answers, method)
    assert result.method == method
    assert list(result.elements.columns) == [
        "player",
        "kind",
        "module",
        "element",
        "questions",
        "correct",
        "accuracy_pct",
        "score_pct",
    ]
    for player, kind, expected in (("A", "human", EXPECTED_A), ("B", "ai", EXPECTED_B)):
        rows = result.elements[result.elements["player"] == player]
        assert (rows["kind"] == kind).all()
        assert rows["element"].tolist() == list(expected)  # taxonomy order, tagged elements only
        assert rows["questions"].tolist() == [e[0] for e in expected.values()]
        assert rows["correct"].tolist() == [e[1] for e in expected.values()]
        assert rows["accuracy_pct"].tolist() == pytest.approx([e[2] for e in expected.values()])
        assert rows["score_pct"].tolist() == pytest.approx([e[SCORE_COLUMN[method]] for e in expected.values()])


def test_elements_follow_taxonomy_order_and_module_names(worked_examples, worked_answers):
    elements = profiles(worked_examples, worked_answers).elements.query("player == 'A'")
    order = [(m.value, e) for m, e in element_order()]
    positions = [order.index(pair) for pair in zip(elements["module"], elements["element"])]
    assert positions == sorted(positions)
    assert elements["module"].unique().tolist() == ["target", "content", "thinking"]


def test_player_summary_and_element_sd(worked_examples, worked_answers):
    players = profiles(worked_examples, worked_answers, "cogsci2024").players
    assert list(players.columns) == ["player", "kind", "questions", "correct", "accuracy_pct", "element_sd"]
    assert players["player"].tolist() == ["A", "B"]
    assert players["kind"].tolist() == ["human", "ai"]
    assert players["questions"].tolist() == [5, 5]
    assert players["correct"].tolist() == [3, 2]
    assert players["accuracy_pct"].tolist() == pytest.approx([60.0, 40.0])
    # A's 14 element accuracies: seven 100s, six 0s and one 60 -> sum 760, sum of squares 73,600;
    # sample variance = (73600 - 760^2 / 14) / 13 = 2487.912...; SD = 49.8790
    sd_a = math.sqrt((73600 - 760**2 / 14) / 13)
    assert sd_a == pytest.approx(49.878974, abs=1e-6)
    # B: 40, 100, 0, 0, 0, 50, 50, 100, 0, 0, 0, 100, 0, 50 -> sum 490, mean 35,
    # (39100 - 14 x 35^2) / 13 = 1688.46...; SD = 41.0909
    sd_b = statistics.stdev([e[2] for e in EXPECTED_B.values()])
    assert sd_b == pytest.approx(math.sqrt(21950 / 13))
    assert players["element_sd"].tolist() == pytest.approx([sd_a, sd_b])


def test_element_sd_is_nan_with_a_single_element():
    questions = questions_table([("x", ["Character"], None, [], None)])
    answers = pd.DataFrame({"player": ["A"], "qid": ["x"], "answer": ["a"], "correct": [True], "kind": ["human"]})
    assert np.isnan(profiles(questions, answers).players["element_sd"].item())


def test_missing_answer_is_the_same_as_a_wrong_one(worked_examples, worked_answers):
    explicit = pd.concat(
        [
            worked_answers,
            pd.DataFrame(
                {
                    "player": ["B", "B"],
                    "qid": ["2", "4"],
                    "answer": ["", ""],
                    "correct": [False, False],
                    "kind": ["ai", "ai"],
                }
            ),
        ],
        ignore_index=True,
    )
    for method in METHODS:
        implicit_result = profiles(worked_examples, worked_answers, method)
        explicit_result = profiles(worked_examples, explicit, method)
        pd.testing.assert_frame_equal(implicit_result.elements, explicit_result.elements)
        pd.testing.assert_frame_equal(implicit_result.players, explicit_result.players)


def test_untagged_question_counts_for_overall_accuracy_only(worked_examples, worked_answers):
    questions = pd.concat([worked_examples, questions_table([("6", [], None, [], None)])], ignore_index=True)
    answers = pd.concat(
        [
            worked_answers,
            pd.DataFrame(
                {
                    "player": ["A"],
                    "qid": ["6"],
                    "answer": ["alpha"],
                    "correct": [True],
                    "kind": ["human"],
                }
            ),
        ],
        ignore_index=True,
    )
    result = profiles(questions, answers)
    a = result.players.set_index("player").loc["A"]
    assert (a["questions"], a["correct"], a["accuracy_pct"]) == (6, 4, pytest.approx(400 / 6))
    pd.testing.assert_frame_equal(result.elements, profiles(worked_examples, worked_answers).elements)


def test_answers_outside_the_question_frame_are_ignored(worked_examples, worked_answers):
    first_two = worked_examples[worked_examples["qid"].isin(["1", "2"])]
    players = profiles(first_two, worked_answers).players
    assert players["questions"].tolist() == [2, 2]
    assert players["correct"].tolist() == [2, 1]


def test_profiles_refuse_inconsistent_answers(worked_examples, worked_answers):
    twice = pd.concat([worked_answers, worked_answers.iloc[[0]]], ignore_index=True)
    with pytest.raises(ValueError, match="more than once"):
        profiles(worked_examples, twice)
    ungraded = worked_answers.astype({"correct": object})
    ungraded.loc[0, "correct"] = None
    with pytest.raises(ValueError, match="not graded"):
        profiles(worked_examples, ungraded)
    both_kinds = worked_answers.assign(kind=["human"] * 7 + ["ai"])
    with pytest.raises(ValueError, match="both kinds"):
        profiles(worked_examples, both_kinds)
    with pytest.raises(ValueError, match="duplicate qid"):
        profiles(pd.concat([worked_examples, worked_examples.iloc[[0]]]), worked_answers)


def test_element_frequencies_without_answers_cover_the_whole_taxonomy(worked_examples):
    frequencies = element_frequencies(worked_examples)
    assert list(frequencies.columns) == ["module", "element", "questions"]
    assert len(frequencies) == len(element_order())
    counts = dict(zip(frequencies["element"], frequencies["questions"]))
    assert counts["Character"] == 5 and counts["Emotion"] == 2 and counts["Place"] == 0
    assert sum(counts.values()) == 22  # one count per tag


def test_element_frequencies_split_correct_and_missed_per_player(worked_examples, worked_answers):
    frequencies = element_frequencies(worked_examples, worked_answers)
    assert list(frequencies.columns) == ["player", "module", "element", "questions", "correct", "missed"]
    assert len(frequencies) == 2 * len(element_order())
    for player, expected in (("A", EXPECTED_A), ("B", EXPECTED_B)):
        rows = frequencies[frequencies["player"] == player].set_index("element")
        for element, (questions, correct, *_) in expected.items():
            assert (rows.loc[element, "questions"], rows.loc[element, "correct"], rows.loc[element, "missed"]) == (
                questions,
                correct,
                questions - correct,
            )
        assert rows.loc["Place", ["questions", "correct", "missed"]].tolist() == [0, 0, 0]


# ------------------------------------------------------------------------------- review fixes


@pytest.mark.parametrize(
    "values", [["1", "0", "1", "1", "0"], ["yes", "no", "yes", "yes", "no"], [1.0, 0.0, 1.0, 1.0, 0.0], [1, 0, 2, 1, 0]]
)
def test_correct_must_be_bool_or_zero_one_integers(worked_examples, values):
    answers = pd.DataFrame(
        {"player": "A", "qid": worked_examples["qid"], "answer": "x", "correct": values, "kind": "human"}
    )
    with pytest.raises(ValueError, match="column 'correct' must be bool or 0/1 integers"):
        profiles(worked_examples, answers)


@pytest.mark.parametrize(
    "values",
    [
        [True, True, False, True, False],
        [1, 1, 0, 1, 0],
        pd.array([True, True, False, True, False], dtype="boolean"),
        pd.array([1, 1, 0, 1, 0], dtype="Int64"),
        np.array([True, True, False, True, False], dtype=object),
    ],
)
def test_bool_like_correct_columns_are_accepted(worked_examples, values):
    answers = pd.DataFrame(
        {"player": "A", "qid": worked_examples["qid"], "answer": "x", "correct": values, "kind": "human"}
    )
    players = profiles(worked_examples, answers).players
    assert (players.loc[0, "correct"], players.loc[0, "accuracy_pct"]) == (3, 60.0)


@pytest.mark.parametrize("method", METHODS)
def test_all_right_or_all_wrong_is_exactly_100_or_0(worked_examples, method):
    """frontiers2022 gave Object (weight 4/3) 99.99999999999999 for a player right on every question."""
    answers = pd.DataFrame(
        {
            "player": ["Right"] * 5 + ["Wrong"] * 5,
            "qid": list(worked_examples["qid"]) * 2,
            "answer": "x",
            "correct": [True] * 5 + [False] * 5,
            "kind": "human",
        }
    )
    elements = profiles(worked_examples, answers, method).elements
    right = elements[elements["player"] == "Right"]
    wrong = elements[elements["player"] == "Wrong"]
    assert right["score_pct"].tolist() == [100.0] * len(right)
    assert right["accuracy_pct"].tolist() == [100.0] * len(right)
    assert wrong["score_pct"].tolist() == [0.0] * len(wrong)
