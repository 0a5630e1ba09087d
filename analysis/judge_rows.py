"""A judge's agreement with the raters as the lines of a table, as the session report and the results page show it."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pandas as pd

from .agreement import CONSTANT, FINAL_MARKS, NO_ITEMS, ONE_CATEGORY, TOO_FEW

JUDGE_AGREEMENT_COLUMNS = ("model", "rater", "measure", "items", "kappa", "weighted_kappa", "spearman", "reason")
JUDGE_TAKEN = "taken"  # optional column of the agreement table, after "items": the rater's marks taken from the judge
JUDGE_CONFUSION_COLUMNS = ("model", "rater", "rater_verdict", "judge_verdict", "answers")
KAPPA_REASONS = (NO_ITEMS, ONE_CATEGORY)  # the reasons a kappa can be undefined
RHO_REASONS = (NO_ITEMS, TOO_FEW, CONSTANT)  # ... and Spearman's rho


@dataclass(frozen=True)
class JudgeRow:
    """One line of a judge's agreement with a rater, as the report and the results page show it."""

    model: str
    rater: str  # a grader, or FINAL_MARKS
    measures: tuple[str, ...]  # one measure; or the dimensions neither statistic can use (no answer both marked)
    items: int  # the answers both marked on the measure
    kappa: float  # Cohen's kappa ("correct") or the quadratic weighted kappa (a dimension); NaN when undefined
    kappa_reason: str | None  # why kappa is undefined (analysis.agreement's reasons), None when defined
    spearman: float | None  # None on "correct" (not a grade); NaN when undefined
    spearman_reason: str | None
    starts_rater: bool  # the rater's first line
    taken: int | None = None  # the rater's marks taken from the judge; None: not given, or the final marks


def judge_rows(agreement: pd.DataFrame) -> dict[str, list[JudgeRow]]:
    """Per judge model (in order), the lines of its agreement table (:data:`JUDGE_AGREEMENT_COLUMNS`).

    Per rater the measures keep their order, except that the dimensions no answer of which both marked are folded
    into one line (``measures`` several, ``items`` 0): five lines saying "undefined" say less than one.  The two
    statistics' reasons are told apart from the row's ``reason`` (``no_items; constant``...).
    """
    found: dict[str, list[JudgeRow]] = {}
    for (model, rater), block in agreement.groupby(["model", "rater"], sort=False):
        lines, unshared = [], []
        for row in block.itertuples(index=False):
            reasons = str(row.reason).split("; ") if isinstance(row.reason, str) else []
            if row.measure != "correct" and row.items == 0:
                unshared.append(row.measure)
                if len(unshared) > 1:
                    continue
            correct = row.measure == "correct"
            kappa = row.kappa if correct else row.weighted_kappa
            lines.append(
                JudgeRow(
                    model=str(model),
                    rater=str(rater),
                    measures=(row.measure,),
                    items=int(row.items),
                    kappa=float(kappa),
                    kappa_reason=_reason_of(kappa, reasons, KAPPA_REASONS),
                    spearman=None if correct else float(row.spearman),
                    spearman_reason=None if correct else _reason_of(row.spearman, reasons, RHO_REASONS),
                    starts_rater=not lines,
                    taken=_taken_of(row, rater),
                )
            )
        if len(unshared) > 1:
            at = next(index for index, line in enumerate(lines) if line.measures == (unshared[0],))
            lines[at] = replace(lines[at], measures=tuple(unshared))
        found.setdefault(str(model), []).extend(lines)
    return found


def judge_agreement_columns(agreement: pd.DataFrame) -> list[str]:
    columns = list(JUDGE_AGREEMENT_COLUMNS)
    if JUDGE_TAKEN in agreement.columns:
        columns.insert(columns.index("items") + 1, JUDGE_TAKEN)
    return columns


def _taken_of(row, rater) -> int | None:
    taken = getattr(row, JUDGE_TAKEN, None)
    if rater == FINAL_MARKS or taken is None or pd.isna(taken):
        return None
    return int(taken)


def _reason_of(value, reasons: list[str], possible: tuple[str, ...]) -> str | None:
    if not pd.isna(value):
        return None
    return next((reason for reason in reasons if reason in possible), reasons[0] if reasons else NO_ITEMS)
