"""Agreement between graders: Cohen's kappa on the items two graders both marked, and how far an
LLM judge's suggested grades agree with human graders.

``marks`` is a long table ``item, rater, label`` (one row per mark; a rater marks an item at most once); the
two-rater functions take aligned label sequences (position i: both raters' label of item i) of equal length with
no missing label: pass only the items both marked.  A statistic that cannot be computed is NaN with a ``reason``
(:data:`NO_ITEMS`, :data:`ONE_CATEGORY`, :data:`TOO_FEW`, :data:`CONSTANT`) instead of a division by zero.  The
definitions of kappa, weighted kappa and Spearman's rho used here: docs/analysis.md, "Agreement between graders".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

import numpy as np
import pandas as pd

from .tables import require_columns

NO_ITEMS = "no_items"
ONE_CATEGORY = "one_category"
TOO_FEW = "too_few_items"
CONSTANT = "constant"

GRADES = range(0, 6)  # MovieCORE's rubric: 0-5 per dimension
VERDICTS = [True, False]
# The rater name of the final marks beside the graders' in a judge's agreement (vtt.judge.agreement, the reports):
# parentheses, so no grader's name can be it.
FINAL_MARKS = "(final mark)"


@dataclass(frozen=True)
class Kappa:
    """Cohen's kappa of two raters over ``items`` shared items; ``kappa`` is NaN when ``reason`` says why."""

    items: int
    observed: float  # p_o, NaN without items
    expected: float  # p_e, NaN without items
    kappa: float
    reason: str | None = None  # NO_ITEMS or ONE_CATEGORY when kappa is undefined

    @property
    def defined(self) -> bool:
        return self.reason is None


@dataclass(frozen=True)
class WeightedKappa(Kappa):
    """Cohen's weighted kappa of two raters over ``items`` items; ``kappa`` is NaN when ``reason`` says why.

    Unlike :class:`Kappa`'s agreements, ``observed`` and ``expected`` are the weighted *disagreements*
    sum w_ij O_ij and sum w_ij E_ij (NaN without items): kappa_w = 1 - observed / expected."""


@dataclass(frozen=True)
class Spearman:
    """Spearman's rank correlation of two raters over ``items`` items; ``rho`` is NaN when ``reason`` says why."""

    items: int
    rho: float
    reason: str | None = None  # NO_ITEMS, TOO_FEW or CONSTANT when rho is undefined

    @property
    def defined(self) -> bool:
        return self.reason is None


def _paired(first: Iterable, second: Iterable) -> tuple[pd.Series, pd.Series]:
    """Two raters' aligned labels, refusing unequal lengths and missing labels."""
    first, second = pd.Series(list(first), dtype=object), pd.Series(list(second), dtype=object)
    if len(first) != len(second):
        raise ValueError(f"the two raters' label lists differ in length ({len(first)} and {len(second)})")
    if first.isna().any() or second.isna().any():
        raise ValueError("a label is missing: pass only the items both raters marked")
    return first, second


def _positions(labels: pd.Series, categories: list) -> np.ndarray:
    """Each label's position in ``categories``; a label outside them raises ValueError naming it."""
    position = {category: index for index, category in enumerate(categories)}
    unknown = [label for label in labels if label not in position]
    if unknown:
        raise ValueError(f"label {unknown[0]!r} is not one of the categories {categories}")
    return np.array([position[label] for label in labels], dtype=int)


def _category_list(categories: Iterable) -> list:
    categories = list(categories)
    if len(set(categories)) != len(categories):
        raise ValueError(f"categories repeat a label: {categories}")
    return categories


def _counts(first: pd.Series, second: pd.Series, categories: list) -> np.ndarray:
    """k x k table: row i, column j counts the items first put in categories[i] and second in categories[j]."""
    k = len(categories)
    cells = _positions(first, categories) * k + _positions(second, categories)
    return np.bincount(cells, minlength=k * k).reshape(k, k)


def cohen_kappa(first: pd.Series | list, second: pd.Series | list) -> Kappa:
    """Cohen's kappa of two aligned label sequences (position i: both raters' label of item i)."""
    first, second = _paired(first, second)
    items = len(first)
    if items == 0:
        return Kappa(0, math.nan, math.nan, math.nan, NO_ITEMS)
    observed = float((first.to_numpy() == second.to_numpy()).mean())
    shares_first = first.value_counts(normalize=True)
    shares_second = second.value_counts(normalize=True)
    expected = float(sum(share * shares_second.get(label, 0.0) for label, share in shares_first.items()))
    if math.isclose(expected, 1.0):
        return Kappa(items, observed, expected, math.nan, ONE_CATEGORY)
    return Kappa(items, observed, expected, (observed - expected) / (1.0 - expected))


def weighted_kappa(
    first: pd.Series | list,
    second: pd.Series | list,
    categories: Iterable = GRADES,
    weights: Literal["quadratic", "linear"] = "quadratic",
) -> WeightedKappa:
    """Cohen's (1968) weighted kappa of two aligned grade sequences over the ordered ``categories``."""
    if weights not in ("quadratic", "linear"):
        raise ValueError(f"weights must be 'quadratic' or 'linear', not {weights!r}")
    categories = _category_list(categories)
    if len(categories) < 2:
        raise ValueError("weighted kappa needs at least two ordered categories")
    first, second = _paired(first, second)
    items = len(first)
    counts = _counts(first, second, categories)  # checks the labels even when there are none to count
    if items == 0:
        return WeightedKappa(0, math.nan, math.nan, math.nan, NO_ITEMS)
    k = len(categories)
    index = np.arange(k)
    distance = np.abs(index[:, None] - index[None, :]) / (k - 1)
    weight = distance**2 if weights == "quadratic" else distance
    shares = counts / items
    chance = np.outer(shares.sum(axis=1), shares.sum(axis=0))
    observed, expected = float((weight * shares).sum()), float((weight * chance).sum())
    # expected is 0 only when both raters used one and the same category: nothing to compare against
    if math.isclose(expected, 0.0, abs_tol=1e-12):
        return WeightedKappa(items, observed, expected, math.nan, ONE_CATEGORY)
    return WeightedKappa(items, observed, expected, 1.0 - observed / expected)


def spearman(first: pd.Series | list, second: pd.Series | list) -> Spearman:
    """Spearman's rho of two aligned numeric sequences, ties ranked by their average rank."""
    first, second = _paired(first, second)
    items = len(first)
    if items == 0:
        return Spearman(0, math.nan, NO_ITEMS)
    if items == 1:
        return Spearman(1, math.nan, TOO_FEW)
    ranks_first = first.astype(float).rank(method="average").to_numpy()
    ranks_second = second.astype(float).rank(method="average").to_numpy()
    if np.ptp(ranks_first) == 0 or np.ptp(ranks_second) == 0:
        return Spearman(items, math.nan, CONSTANT)
    deviations_first = ranks_first - ranks_first.mean()
    deviations_second = ranks_second - ranks_second.mean()
    spread = math.sqrt((deviations_first @ deviations_first) * (deviations_second @ deviations_second))
    rho = deviations_first @ deviations_second / spread
    return Spearman(items, float(np.clip(rho, -1.0, 1.0)))  # rounding may step just past +-1


def confusion_matrix(first: pd.Series | list, second: pd.Series | list, labels: Sequence) -> pd.DataFrame:
    """Counts of each (first's label, second's label) pair: index first's labels, columns second's.

    Every label of ``labels`` is a row and a column, in that order, even with a count of 0; a label
    outside ``labels`` raises ValueError naming it.
    """
    labels = _category_list(labels)
    counts = _counts(*_paired(first, second), labels)
    return pd.DataFrame(counts, index=pd.Index(labels, dtype=object), columns=pd.Index(labels, dtype=object))


def _refuse_double_marks(marks: pd.DataFrame) -> None:
    twice = marks.duplicated(["item", "rater"])
    if twice.any():
        first = marks[twice].iloc[0]
        raise ValueError(f"rater {str(first['rater'])!r} marked item {first['item']} more than once")


def pairwise_kappas(marks: pd.DataFrame) -> pd.DataFrame:
    """``rater_a, rater_b, items, observed, expected, kappa, reason``: one row per pair of raters.

    ``items`` counts the items both raters of the pair marked; ``reason`` is None where kappa is
    defined (see the module docstring).  No rows with fewer than two raters.
    """
    require_columns(marks, ("item", "rater", "label"), "marks")
    _refuse_double_marks(marks)
    raters = list(dict.fromkeys(marks["rater"]))
    by_rater = {rater: marks.loc[marks["rater"] == rater].set_index("item")["label"] for rater in raters}
    rows = []
    for rater_a, rater_b in combinations(raters, 2):
        shared = by_rater[rater_a].index.intersection(by_rater[rater_b].index, sort=False)
        result = cohen_kappa(by_rater[rater_a].loc[shared], by_rater[rater_b].loc[shared])
        rows.append(
            {
                "rater_a": rater_a,
                "rater_b": rater_b,
                "items": result.items,
                "observed": result.observed,
                "expected": result.expected,
                "kappa": result.kappa,
                "reason": result.reason,
            }
        )
    columns = ["rater_a", "rater_b", "items", "observed", "expected", "kappa", "reason"]
    table = pd.DataFrame(rows, columns=columns)
    # object, not str: None (rather than NaN) where kappa is defined
    return table.assign(reason=pd.Series([row["reason"] for row in rows], dtype=object))


def _marks_by_rater(marks: pd.DataFrame, judge: str, measures: Sequence[str]) -> dict[str, pd.DataFrame]:
    """Each rater's measures indexed by item, the judge's included, raters in order of first appearance."""
    require_columns(marks, ("item", "rater", *measures), "marks")
    _refuse_double_marks(marks)
    raters = list(dict.fromkeys(marks["rater"]))
    if judge not in raters:
        raise ValueError(f"the judge {judge!r} marked nothing")
    return {rater: marks.loc[marks["rater"] == rater].set_index("item")[list(measures)] for rater in raters}


def _both_marked(theirs: pd.Series, judges: pd.Series) -> tuple[pd.Series, pd.Series]:
    """The two raters' marks on the items both marked (a missing mark is no mark), in the rater's order."""
    theirs, judges = theirs.dropna(), judges.dropna()
    shared = theirs.index.intersection(judges.index, sort=False)
    return theirs.loc[shared], judges.loc[shared]


def judge_agreement(
    marks: pd.DataFrame, judge: str, dimensions: Sequence[str], categories: Iterable = GRADES
) -> pd.DataFrame:
    """``rater, measure, items, kappa, weighted_kappa, spearman, reason``: the judge against each other rater.

    ``marks`` has columns ``item, rater, correct`` and one per dimension (a grade in ``categories``,
    or missing).  One row per other rater (order of first appearance) and measure: ``"correct"``
    (Cohen's kappa on the verdicts; weighted_kappa and spearman NaN), then each dimension in
    ``dimensions`` order (quadratic weighted kappa and Spearman's rho; kappa NaN).  ``items`` counts
    the items both raters marked on that measure.  ``reason`` is None when the row's statistics are
    all defined, else the reasons of the undefined ones joined by "; " (``no_items`` undefines them
    all; ``one_category`` only comes from a kappa, ``too_few_items`` and ``constant`` from rho).
    A judge with no row in ``marks`` raises ValueError.
    """
    dimensions = list(dimensions)
    categories = _category_list(categories)
    by_rater = _marks_by_rater(marks, judge, ["correct", *dimensions])
    judge_marks = by_rater.pop(judge)
    rows = []
    for rater, rater_marks in by_rater.items():
        for measure in ["correct", *dimensions]:
            theirs, judges = _both_marked(rater_marks[measure], judge_marks[measure])
            if measure == "correct":
                kappa = cohen_kappa(theirs, judges)
                statistics = {"kappa": kappa.kappa, "weighted_kappa": math.nan, "spearman": math.nan}
                reasons = [kappa.reason]
            else:
                weighted = weighted_kappa(theirs, judges, categories)
                rho = spearman(theirs, judges)
                statistics = {"kappa": math.nan, "weighted_kappa": weighted.kappa, "spearman": rho.rho}
                reasons = [weighted.reason, rho.reason]
            reason = "; ".join(dict.fromkeys(r for r in reasons if r is not None)) or None
            rows.append({"rater": rater, "measure": measure, "items": len(theirs), **statistics, "reason": reason})
    columns = ["rater", "measure", "items", "kappa", "weighted_kappa", "spearman", "reason"]
    table = pd.DataFrame(rows, columns=columns).astype(
        {"items": int, "kappa": float, "weighted_kappa": float, "spearman": float}
    )
    # object, not str: None (rather than NaN) where everything is defined
    return table.assign(reason=pd.Series([row["reason"] for row in rows], dtype=object))


def judge_confusions(marks: pd.DataFrame, judge: str) -> dict[str, pd.DataFrame]:
    """Per other rater (order of first appearance), the 2x2 counts of the verdicts on the items both marked.

    Rows: the rater's ``correct`` (True, False), named after the rater; columns: the judge's, named
    after the judge.  A verdict other than True/False raises ValueError.
    """
    by_rater = _marks_by_rater(marks, judge, ["correct"])
    judge_verdicts = by_rater.pop(judge)["correct"]
    return {
        rater: confusion_matrix(*_both_marked(rater_marks["correct"], judge_verdicts), VERDICTS).rename_axis(
            index=rater, columns=judge
        )
        for rater, rater_marks in by_rater.items()
    }
