"""The juries compared across the study: each jury's detection pooled over the sessions (and per session), and the
test across juries (:mod:`analysis.study_juries`).  Only when some session had more than the live jury."""

from __future__ import annotations

import pandas as pd
from reportlab.platypus import Flowable, PageBreak

from ..jury_charts import jury_name
from ..pdf.layout import frame_width
from ..pdf.look import Look
from ..pdf.numbers import interval_text, number_text, p_equation
from ..pdf.tables import Column, block_starts, ruled_table
from ..pdf.text import markup
from ..session_report.juries_compared import TEST_NAMES
from ..study import ALL
from ..words import t
from .labels import session_label


def juries_section(juries: pd.DataFrame, tests: pd.DataFrame, look: Look) -> list[Flowable]:
    """Nothing when no session had a jury other than the live one."""
    if not len(juries):
        return []
    width = frame_width()
    pooled = juries[juries["session"] == ALL]
    story: list[Flowable] = [
        PageBreak(),
        look.para(t("Juries compared"), "h1"),
        look.para(
            t(
                "Each jury pooled over the sessions it judged (an AI jury is its model: one model's jurors pool "
                "across sessions): detection = share of its cast votes naming an AI player, with its 95 % Wilson "
                "interval; chance = the sessions' chance levels weighted by the jury's votes."
            )
        ),
        _table(pooled, look, width, by_session=False),
        look.para(_pooled_test(tests[tests["session"] == ALL].iloc[0]), "caption"),
        look.para(t("Per session"), "h2"),
        _table(juries[juries["session"] != ALL], look, width, by_session=True, tests=tests),
        look.para(
            t(
                "Test across juries on (AI votes, other cast votes) x jury: Fisher's exact test (two-sided) for two "
                "juries, the chi-squared test of independence for three or more. The pooled test compares like "
                "with like only when the juries judged the same sessions and rounds."
            ),
            "caption",
        ),
    ]
    return story


def _table(rows: pd.DataFrame, look: Look, width: float, *, by_session: bool, tests: pd.DataFrame | None = None):
    starts = block_starts(list(rows["session"])) if by_session else []
    test_of = tests.set_index("session") if tests is not None else None
    body = []
    for index, row in enumerate(rows.itertuples(index=False)):
        first = by_session and starts[index]
        cells = [
            markup(jury_name(row.jury)),
            str(row.rounds),
            str(row.votes),
            str(row.ai_votes),
            number_text(row.detection_pct),
            interval_text(row.ci_low, row.ci_high),
            number_text(row.chance_pct),
        ]
        if by_session:
            test = test_of.loc[row.session]
            shown = "–" if pd.isna(test["p_value"]) else f"{t(TEST_NAMES[test['test']])}, {p_equation(test['p_value'])}"
            cells = [session_label(row.session) if first else "", *cells, shown if first else ""]
        body.append(cells)
    columns = [
        Column(t("Jury"), 0.2),
        Column(t("Rounds"), 0.08, True),
        Column(t("Votes"), 0.08, True),
        Column(t("AI votes"), 0.09, True),
        Column(t("Detection %"), 0.11, True),
        Column(t("95 % CI"), 0.11, True),
        Column(t("Chance %"), 0.09, True),
    ]
    if by_session:
        columns = [Column(t("Session"), 0.1), *columns, Column(t("Across juries"), 0.22)]
    return ruled_table(look, columns, body, width, block_starts=starts)


def _pooled_test(test) -> str:
    if pd.isna(test["p_value"]):
        return t("Across juries: no test ({note}).", note=markup(test["note"] or ""))
    if test["test"] == "fisher_exact":
        return t(
            "Across juries, pooled: Fisher's exact test, odds ratio {statistic}, {p}.",
            statistic=number_text(test["statistic"], 2),
            p=p_equation(test["p_value"]),
        )
    return t(
        "Across juries, pooled: chi-squared test, χ² = {statistic} (df {dof}), {p}.",
        statistic=number_text(test["statistic"], 2),
        dof=test["dof"],
        p=p_equation(test["p_value"]),
    )
