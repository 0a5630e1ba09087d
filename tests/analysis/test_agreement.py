"""Cohen's kappa against tables worked by hand, and the cases where it is undefined."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis.agreement import NO_ITEMS, ONE_CATEGORY, cohen_kappa, pairwise_kappas


def table(both_yes: int, yes_no: int, no_yes: int, both_no: int) -> tuple[list[str], list[str]]:
    """Two raters' labels from a 2x2 table (rows: rater A yes/no, columns: rater B yes/no)."""
    first = ["yes"] * (both_yes + yes_no) + ["no"] * (no_yes + both_no)
    second = ["yes"] * both_yes + ["no"] * yes_no + ["yes"] * no_yes + ["no"] * both_no
    return first, second


def test_grant_applications_textbook_table():
    # 50 grant applications (Wikipedia, "Cohen's kappa"): p_o = 35/50 = 0.7, A says yes 25/50 and B 30/50,
    # so p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5 and kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4.
    result = cohen_kappa(*table(20, 5, 10, 15))
    assert (result.items, result.observed, result.expected) == (50, 0.7, pytest.approx(0.5))
    assert result.kappa == pytest.approx(0.4)
    assert result.defined


@pytest.mark.parametrize(
    ("cells", "expected_kappa"),
    [
        # same agreement (60 %), different marginals: p_e = 0.6 * 0.7 + 0.4 * 0.3 = 0.54 -> 0.06 / 0.46
        ((45, 15, 25, 15), 0.06 / 0.46),
        # p_e = 0.6 * 0.3 + 0.4 * 0.7 = 0.46 -> 0.14 / 0.54
        ((25, 35, 5, 35), 0.14 / 0.54),
    ],
)
def test_equal_agreement_other_marginals(cells, expected_kappa):
    assert cohen_kappa(*table(*cells)).kappa == pytest.approx(expected_kappa)
    assert round(expected_kappa, 4) in (0.1304, 0.2593)


def test_three_categories_by_hand():
    # A: a a a b b c; B: a a b b c c -> agree on 4 of 6; p_e = (3/6)(2/6) + (2/6)(2/6) + (1/6)(2/6) = 12/36
    result = cohen_kappa(list("aaabbc"), list("aabbcc"))
    assert result.expected == pytest.approx(1 / 3)
    assert result.kappa == pytest.approx((4 / 6 - 1 / 3) / (1 - 1 / 3))  # 0.5


def test_bool_labels_and_perfect_agreement():
    assert cohen_kappa([True, False, True], [True, False, True]).kappa == pytest.approx(1.0)
    # always opposite, each rater in one category of their own: p_e = 0, kappa = 0 (defined)
    assert cohen_kappa([True, True], [False, False]).kappa == 0.0


def test_everything_in_one_category_is_undefined_not_a_division_by_zero():
    result = cohen_kappa([True] * 5, [True] * 5)
    assert math.isnan(result.kappa) and result.reason == ONE_CATEGORY and not result.defined
    assert (result.items, result.observed, result.expected) == (5, 1.0, 1.0)


def test_nothing_shared_is_undefined():
    result = cohen_kappa([], [])
    assert result.reason == NO_ITEMS and result.items == 0 and math.isnan(result.kappa)


def test_unequal_lengths_and_missing_labels_are_refused():
    with pytest.raises(ValueError, match="differ in length"):
        cohen_kappa([True], [True, False])
    with pytest.raises(ValueError, match="missing"):
        cohen_kappa([True, None], [True, False])


def test_pairwise_on_shared_items_only():
    marks = pd.DataFrame(
        [
            # Ana and Ben share answers 1-4: agree on 1, 2, 4 -> p_o 3/4; Ana yes 2/4, Ben yes 1/4 -> p_e 0.5
            (1, "Ana", True),
            (2, "Ana", False),
            (3, "Ana", True),
            (4, "Ana", False),
            (5, "Ana", True),
            (1, "Ben", True),
            (2, "Ben", False),
            (3, "Ben", False),
            (4, "Ben", False),
            (5, "Cy", True),
            (6, "Cy", False),
        ],
        columns=["item", "rater", "label"],
    )
    pairs = pairwise_kappas(marks)
    assert list(zip(pairs["rater_a"], pairs["rater_b"], pairs["items"])) == [
        ("Ana", "Ben", 4),
        ("Ana", "Cy", 1),
        ("Ben", "Cy", 0),
    ]
    assert pairs["kappa"].iloc[0] == pytest.approx(0.5)
    assert list(pairs["reason"]) == [None, ONE_CATEGORY, NO_ITEMS]


def test_pairwise_needs_two_raters_and_one_mark_per_item():
    assert pairwise_kappas(pd.DataFrame({"item": [1], "rater": ["Ana"], "label": [True]})).empty
    with pytest.raises(ValueError, match="rater 'Ana' marked item 1 more than once"):
        pairwise_kappas(pd.DataFrame({"item": [1, 1], "rater": ["Ana", "Ana"], "label": [True, False]}))
