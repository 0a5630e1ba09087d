"""Weighted kappa, Spearman's rho, confusion tables and the judge-versus-graders table, against values
worked by hand (and one published example)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis.agreement import (
    CONSTANT,
    NO_ITEMS,
    ONE_CATEGORY,
    TOO_FEW,
    cohen_kappa,
    confusion_matrix,
    judge_agreement,
    judge_confusions,
    spearman,
    weighted_kappa,
)

NEAR_MISSES = ([0, 1, 2, 2], [0, 2, 2, 1])  # pairs (0,0) (1,2) (2,2) (2,1): two misses by one step


def test_weighted_kappa_by_hand_quadratic_and_linear():
    # Over 0-2 (k = 3) both raters' shares are 1/4, 1/4, 1/2.  Chance shares of the pairs one step apart:
    # (0,1) (1,0) 1/16 each, (1,2) (2,1) 1/8 each -> 3/8; two steps apart: (0,2) (2,0) 1/8 each -> 1/4.
    # Quadratic, w = (d/2)^2 = 1/4, 1: observed = 2 * 1/4 / 4 = 1/8, expected = 3/8 * 1/4 + 1/4 = 11/32,
    #   kappa_w = 1 - (1/8) / (11/32) = 7/11.
    quadratic = weighted_kappa(*NEAR_MISSES, categories=range(3))
    assert (quadratic.items, quadratic.observed, quadratic.expected) == (4, 1 / 8, pytest.approx(11 / 32))
    assert quadratic.kappa == pytest.approx(7 / 11) and quadratic.defined
    # Linear, w = d/2 = 1/2, 1: observed = 2 * 1/2 / 4 = 1/4, expected = 3/8 * 1/2 + 1/4 = 7/16 -> 1 - 4/7 = 3/7.
    linear = weighted_kappa(*NEAR_MISSES, categories=range(3), weights="linear")
    assert (linear.observed, linear.expected) == (1 / 4, pytest.approx(7 / 16))
    assert linear.kappa == pytest.approx(3 / 7)
    # Unweighted, a near miss counts as a full miss: p_o = 1/2, p_e = 3/8 -> 1/5.
    assert cohen_kappa(*NEAR_MISSES).kappa == pytest.approx(1 / 5)


def test_unused_categories_at_the_ends_leave_kappa_unchanged():
    # On the default 0-5 scale every weight shrinks by the same factor ((2/5)^2, or 2/5): the sums change,
    # their ratio does not.
    quadratic = weighted_kappa(*NEAR_MISSES)
    assert (quadratic.observed, quadratic.kappa) == (pytest.approx(1 / 8 * 4 / 25), pytest.approx(7 / 11))
    assert weighted_kappa(*NEAR_MISSES, weights="linear").kappa == pytest.approx(3 / 7)


@pytest.mark.parametrize(("weights", "expected_kappa"), [("linear", 0.9412), ("quadratic", 0.9541)])
def test_published_three_category_example(weights, expected_kappa):
    # scikit-learn's test of cohen_kappa_score (after Artstein & Poesio, Table 4): 46/44/10 against 50/40/10,
    # aligned so that only 4 items differ, by one step (1 against 0).  Shares p = .46 .44 .10, q = .50 .40 .10;
    # chance mass one step apart .184 + .22 + .044 + .04 = .488, two steps .046 + .05 = .096.
    # Linear: 1 - (4 * 1/2 / 100) / (.488/2 + .096) = 1 - .02/.34 = 16/17.
    # Quadratic: 1 - (4 * 1/4 / 100) / (.488/4 + .096) = 1 - .01/.218 = 104/109.
    first = [0] * 46 + [1] * 44 + [2] * 10
    second = [0] * 50 + [1] * 40 + [2] * 10
    result = weighted_kappa(first, second, categories=range(3), weights=weights)
    assert result.kappa == pytest.approx(expected_kappa, abs=5e-5)
    assert result.kappa == pytest.approx({"linear": 16 / 17, "quadratic": 104 / 109}[weights])


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_two_categories_weighted_is_cohen(weights):
    # with k = 2 the only off-diagonal weight is 1 for both schemes: the 50 grant applications, kappa 0.4
    first = [1] * 25 + [0] * 25
    second = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert weighted_kappa(first, second, categories=[0, 1], weights=weights).kappa == pytest.approx(0.4)


def test_weighted_kappa_perfect_opposite_and_undefined():
    assert weighted_kappa([0, 5, 3], [0, 5, 3]).kappa == pytest.approx(1.0)
    # one rater all 0, the other all 5: observed = expected = 1 -> kappa_w = 0 (defined)
    assert weighted_kappa([0, 0], [5, 5]).kappa == 0.0
    same = weighted_kappa([4, 4, 4], [4, 4, 4])
    assert same.reason == ONE_CATEGORY and math.isnan(same.kappa) and (same.observed, same.expected) == (0, 0)
    empty = weighted_kappa([], [])
    assert empty.reason == NO_ITEMS and empty.items == 0 and math.isnan(empty.kappa) and not empty.defined


def test_weighted_kappa_refuses_bad_input():
    with pytest.raises(ValueError, match="label 6 is not one of the categories"):
        weighted_kappa([0, 6], [0, 1])
    with pytest.raises(ValueError, match="label 2.5 is not one of the categories"):
        weighted_kappa([0, 1], [2.5, 1])
    with pytest.raises(ValueError, match="missing"):
        weighted_kappa([0, None], [0, 1])
    with pytest.raises(ValueError, match="differ in length"):
        weighted_kappa([0], [0, 1])
    with pytest.raises(ValueError, match="weights"):
        weighted_kappa([0], [0], weights="cubic")
    with pytest.raises(ValueError, match="two ordered categories"):
        weighted_kappa([0], [0], categories=[0])
    # grades read from a frame column with gaps are floats: 3.0 is category 3
    assert weighted_kappa([3.0, 1.0], [3, 1]).kappa == pytest.approx(1.0)


def test_spearman_with_ties_by_hand():
    # first 1 2 2 3 5 -> ranks 1 2.5 2.5 4 5; second 2 1 3 3 4 -> ranks 2 1 3.5 3.5 5 (both mean 3).
    # deviations -2 -.5 -.5 1 2 and -1 -2 .5 .5 2: products 2 + 1 - .25 + .5 + 4 = 7.25, squares 9.5 each
    # -> rho = 7.25 / 9.5 = 29/38.
    result = spearman([1, 2, 2, 3, 5], [2, 1, 3, 3, 4])
    assert (result.items, result.rho, result.defined) == (5, pytest.approx(29 / 38), True)


def test_spearman_agrees_with_scipy_on_ties():
    from scipy import stats as scipy_stats

    first, second = [0, 3, 3, 5, 2, 2, 2, 4], [1, 3, 2, 5, 2, 3, 0, 5]
    assert spearman(first, second).rho == pytest.approx(scipy_stats.spearmanr(first, second).statistic)


def test_spearman_monotone_and_undefined():
    assert spearman([0, 1, 4], [1, 2, 5]).rho == pytest.approx(1.0)
    assert spearman([0, 1, 4], [5, 2, 1]).rho == pytest.approx(-1.0)
    assert spearman([], []).reason == NO_ITEMS
    assert spearman([3], [4]).reason == TOO_FEW
    flat = spearman([3, 3, 3], [1, 2, 3])
    assert flat.reason == CONSTANT and math.isnan(flat.rho) and flat.items == 3
    with pytest.raises(ValueError, match="missing"):
        spearman([1, float("nan")], [1, 2])


def test_confusion_matrix_counts_in_label_order():
    # pairs: (T,T) twice, (T,F) once, (F,T) none, (F,F) once; "maybe" never used but still a row and column
    matrix = confusion_matrix([True, True, True, False], [True, False, True, False], [True, False, "maybe"])
    assert list(matrix.index) == [True, False, "maybe"] and list(matrix.columns) == [True, False, "maybe"]
    assert matrix.to_numpy().tolist() == [[2, 1, 0], [0, 1, 0], [0, 0, 0]]
    assert matrix.loc[True, False] == 1  # row: first's label, column: second's
    assert matrix.dtypes.map(pd.api.types.is_integer_dtype).all()
    with pytest.raises(ValueError, match="label 'yes' is not one of the categories"):
        confusion_matrix(["yes"], [True], [True, False])
    assert confusion_matrix([], [], [True, False]).to_numpy().sum() == 0


def judged_marks() -> pd.DataFrame:
    nan = math.nan
    return pd.DataFrame(
        [
            # item, rater, correct, accuracy, depth
            (1, "Ana", True, 5, 4),
            (2, "Ana", False, 0, 2),
            (3, "Ana", False, 4, 3),
            (4, "Ana", False, 2, 1),
            (1, "llm", True, 5, 4),
            (2, "llm", False, 1, 2),
            (3, "llm", True, 4, 2),
            (4, "llm", False, 2, nan),
            (1, "Ben", True, 3, nan),
            (2, "Ben", True, nan, nan),
            (5, "Ben", False, 1, 1),  # the judge did not mark item 5
        ],
        columns=["item", "rater", "correct", "accuracy", "depth"],
    )


def test_judge_agreement_against_two_graders():
    table = judge_agreement(judged_marks(), "llm", ["accuracy", "depth"])
    assert list(table.columns) == ["rater", "measure", "items", "kappa", "weighted_kappa", "spearman", "reason"]
    assert list(zip(table["rater"], table["measure"], table["items"])) == [
        ("Ana", "correct", 4),
        ("Ana", "accuracy", 4),
        ("Ana", "depth", 3),  # the judge left item 4's depth blank
        ("Ben", "correct", 2),
        ("Ben", "accuracy", 1),  # Ben left item 2's accuracy blank
        ("Ben", "depth", 0),
    ]
    rows = table.set_index(["rater", "measure"])
    # Ana T F F F, llm T F T F: p_o = 3/4, p_e = 1/4 * 1/2 + 3/4 * 1/2 = 1/2 -> kappa 1/2
    assert rows.loc[("Ana", "correct"), "kappa"] == pytest.approx(0.5)
    # accuracy, Ana 5 0 4 2, llm 5 1 4 2: one miss by 1 -> observed (1/25)/4 = 1/100; each grade 1/4 of
    # each rater, sum of (i-j)^2 over Ana {0,2,4,5} x llm {1,2,4,5} = 46 + 14 + 14 + 26 = 100, so
    # expected = 100 / (16 * 25) = 1/4 and kappa_w = 1 - 0.04 = 0.96.  Same order of items -> rho = 1.
    assert rows.loc[("Ana", "accuracy"), "weighted_kappa"] == pytest.approx(0.96)
    assert rows.loc[("Ana", "accuracy"), "spearman"] == pytest.approx(1.0)
    # depth on items 1-3, Ana 4 2 3, llm 4 2 2: observed (1/25)/3 = 1/75; chance, Ana 1/3 each of {2,3,4},
    # llm 2/3 on 2 and 1/3 on 4: (4/9 + 2/9 + 1/9 + 8/9) / 25 = 1/15 -> kappa_w = 1 - 1/5 = 0.8.
    # ranks 3 1 2 and 3 1.5 1.5: deviations 1 -1 0 and 1 -.5 -.5 -> rho = 1.5 / sqrt(2 * 1.5) = sqrt(3)/2.
    assert rows.loc[("Ana", "depth"), "weighted_kappa"] == pytest.approx(0.8)
    assert rows.loc[("Ana", "depth"), "spearman"] == pytest.approx(math.sqrt(3) / 2)
    # Ben T T, llm T F: p_o = 1/2, p_e = 1 * 1/2 -> kappa 0
    assert rows.loc[("Ben", "correct"), "kappa"] == 0.0
    # one item, 3 against 5: observed = expected -> kappa_w 0, but no correlation from a single item
    assert rows.loc[("Ben", "accuracy"), "weighted_kappa"] == 0.0
    assert list(table["reason"]) == [None, None, None, None, TOO_FEW, NO_ITEMS]
    # each statistic only on its own measure
    assert table.loc[table["measure"] == "correct", ["weighted_kappa", "spearman"]].isna().all().all()
    assert table.loc[table["measure"] != "correct", "kappa"].isna().all()
    assert math.isnan(rows.loc[("Ben", "depth"), "weighted_kappa"])


def test_judge_agreement_joins_the_reasons_of_both_statistics():
    marks = pd.DataFrame(
        {"item": [1, 2, 1, 2], "rater": ["llm", "llm", "Ana", "Ana"], "correct": [True] * 4, "depth": [3, 3, 3, 3]}
    )
    table = judge_agreement(marks, "llm", ["depth"])
    assert list(table["reason"]) == [ONE_CATEGORY, f"{ONE_CATEGORY}; {CONSTANT}"]


def test_judge_agreement_refuses_what_it_cannot_read():
    with pytest.raises(ValueError, match="the judge 'gpt' marked nothing"):
        judge_agreement(judged_marks(), "gpt", ["accuracy"])
    with pytest.raises(ValueError, match="lacks column"):
        judge_agreement(judged_marks(), "llm", ["evidence"])
    doubled = pd.concat([judged_marks(), judged_marks().iloc[[0]]])
    with pytest.raises(ValueError, match="rater 'Ana' marked item 1 more than once"):
        judge_agreement(doubled, "llm", ["accuracy"])
    only_judge = judged_marks().query("rater == 'llm'")
    assert judge_agreement(only_judge, "llm", ["accuracy"]).empty


def test_judge_confusions():
    tables = judge_confusions(judged_marks(), "llm")
    assert list(tables) == ["Ana", "Ben"]
    ana = tables["Ana"]
    assert (ana.index.name, ana.columns.name) == ("Ana", "llm")
    # Ana T F F F against llm T F T F: (T,T) 1, (T,F) 0, (F,T) 1, (F,F) 2
    assert ana.to_numpy().tolist() == [[1, 0], [1, 2]]
    assert ana.loc[False, True] == 1  # Ana said wrong, the judge right
    # Ben T T against llm T F on items 1-2 (item 5 unjudged)
    assert tables["Ben"].to_numpy().tolist() == [[1, 1], [0, 0]]
