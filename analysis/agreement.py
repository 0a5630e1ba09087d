"""Agreement between graders: Cohen's kappa on the items two graders both marked.

Conventions:

* ``marks`` is a long frame ``item, rater, label``: one row per mark (an item is e.g. an answer id,
  a label e.g. correct True/False).  A rater marks an item at most once (ValueError otherwise).
* Cohen (1960): kappa = (p_o - p_e) / (1 - p_e), with p_o the share of the shared items both raters
  labelled alike and p_e the agreement expected by chance from each rater's own label shares:
  p_e = sum over labels of p_first(label) * p_second(label).
* **Undefined** kappa (NaN, with a ``reason``): no item marked by both raters (``no_items``), or
  p_e = 1, i.e. both raters put every shared item in one and the same category (``one_category``):
  agreement is perfect but there is no variation to measure it against, so nothing is divided by zero.
* With more than two raters, :func:`pairwise_kappas` gives one row per pair, in the raters' order of
  first appearance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations

import pandas as pd

from .frames import require_columns

NO_ITEMS = "no_items"
ONE_CATEGORY = "one_category"


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


def cohen_kappa(first: pd.Series | list, second: pd.Series | list) -> Kappa:
    """Cohen's kappa of two aligned label sequences (position i: both raters' label of item i)."""
    first, second = pd.Series(list(first), dtype=object), pd.Series(list(second), dtype=object)
    if len(first) != len(second):
        raise ValueError(f"the two raters' label lists differ in length ({len(first)} and {len(second)})")
    if first.isna().any() or second.isna().any():
        raise ValueError("a label is missing: pass only the items both raters marked")
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


def pairwise_kappas(marks: pd.DataFrame) -> pd.DataFrame:
    """``rater_a, rater_b, items, observed, expected, kappa, reason``: one row per pair of raters.

    ``items`` counts the items both raters of the pair marked; ``reason`` is None where kappa is
    defined (see the module docstring).  No rows with fewer than two raters.
    """
    require_columns(marks, ("item", "rater", "label"), "marks")
    twice = marks.duplicated(["item", "rater"])
    if twice.any():
        first = marks[twice].iloc[0]
        raise ValueError(f"rater {str(first['rater'])!r} marked item {first['item']} more than once")
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
    frame = pd.DataFrame(rows, columns=columns)
    # object, not str: None (rather than NaN) where kappa is defined
    return frame.assign(reason=pd.Series([row["reason"] for row in rows], dtype=object))
