"""The AI's detection per session and pooled, whether the sessions differ, and each session's verdict."""

from __future__ import annotations

import pandas as pd
from reportlab.graphics.shapes import Drawing, Line, Rect
from reportlab.platypus import Flowable, PageBreak

from .. import charts
from ..pdf.layout import frame_width
from ..pdf.look import Look
from ..pdf.numbers import interval_text, number_text, p_equation, p_text
from ..pdf.tables import Column, ruled_table
from ..pdf.text import markup
from ..session_report.jury_votes import rule_text
from ..study import ALL
from ..words import t
from .labels import nothing_note, rule_short, session_label


def detection_section(tables: dict[str, pd.DataFrame], look: Look) -> list[Flowable]:
    """Detection per session and pooled (chart and table), whether the sessions differ, and the verdicts."""
    width = frame_width()
    detected = tables["detection.csv"]
    story: list[Flowable] = [PageBreak(), look.para(t("AI detection"), "h1")]
    pooled = detected[detected["session"] == ALL].iloc[0]
    if not pooled["votes"]:
        return story + nothing_note(look, t("No session has votes."))
    story += [
        look.para(
            t(
                "Pooled over the sessions, <b>{detection} %</b> of {votes} cast votes named an AI player (95 % "
                "Wilson CI {ci} %) where blind votes would reach {chance} %: exact {p} (one-sided, against the "
                "sessions' own chance levels).",
                detection=number_text(pooled["detection_pct"]),
                votes=pooled["votes"],
                ci=interval_text(pooled["ci_low"], pooled["ci_high"]),
                chance=number_text(pooled["chance_pct"]),
                p=p_equation(pooled["p_value"]),
            )
        ),
        _study_detection_chart(detected, width=width),
        look.para(
            t(
                "Detection = share of cast votes naming an AI player; whiskers: 95 % Wilson interval; dashed: each "
                "session's chance level (AI players / players), for all sessions the vote-weighted mean of them. "
                "Sessions without votes are left out."
            ),
            "caption",
        ),
    ]
    rows = [
        [
            session_label(row.session),
            str(row.votes),
            str(row.ai_votes),
            number_text(row.detection_pct),
            interval_text(row.ci_low, row.ci_high),
            number_text(row.chance_pct),
            p_text(row.p_value),
        ]
        for row in detected.itertuples(index=False)
    ]
    story += [
        ruled_table(
            look,
            [
                Column(t("Session"), 0.16),
                Column(t("Votes"), 0.12, True),
                Column(t("AI votes"), 0.12, True),
                Column(t("Detection %"), 0.15, True),
                Column(t("95 % CI"), 0.16, True),
                Column(t("Chance %"), 0.14, True),
                Column("p", 0.15, True),
            ],
            rows,
            width,
            block_starts=[code == ALL for code in detected["session"]],
        ),
        look.para(
            t(
                "p: one-sided exact binomial test of a session's AI votes against its chance level; for all "
                "sessions, the exact tail of the sum of the sessions' binomials, each at its own chance level "
                "(Poisson-binomial, by convolution). Both treat votes as independent, which one juror's votes are "
                "not: read them as approximate."
            ),
            "caption",
        ),
    ]
    return story + _differ_table(tables["sessions_differ.csv"], look, width) + _verdicts(tables, look, width)


def _differ_table(differ: pd.DataFrame, look: Look, width: float) -> list[Flowable]:
    """The G-test of homogeneity and its Monte-Carlo p."""
    rows = [
        [
            t("Monte-Carlo exact p of G ({draws} draws, seed {seed})", draws=row.draws, seed=row.seed)
            if row.test == "monte-carlo"
            else t("Likelihood-ratio (G) test, chi-squared p"),
            number_text(row.statistic, 2),
            str(row.df),
            p_text(row.p_value),
        ]
        for row in differ.itertuples(index=False)
    ]
    return [
        look.para(t("Do the sessions differ?"), "h2"),
        ruled_table(
            look,
            [
                Column(t("Test"), 0.55),
                Column("G", 0.15, True),
                Column("df", 0.1, True),
                Column("p", 0.2, True),
            ],
            rows,
            width * 0.8,
        ),
        look.para(
            t(
                "Whether detection differs between the sessions: the likelihood-ratio test of a logistic model with "
                "the session as a factor against one common rate (the G-test of homogeneity on the sessions × "
                "(named an AI, did not) table). The Monte-Carlo p draws the same statistic with the hits spread at "
                "random over all votes (the margins kept): it holds when counts are small."
            ),
            "caption",
        ),
    ]


def _verdicts(tables: dict[str, pd.DataFrame], look: Look, width: float) -> list[Flowable]:
    """Each session's verdict under its own rule, then the rules used, explained."""
    verdicts = tables["verdicts.csv"]
    rows = [
        [
            markup(row.session),
            rule_short(row),
            t("{passed} of {judged}", passed=row.rounds_passed, judged=row.rounds_with_votes),
            number_text(row.mean_detection_pct),
        ]
        for row in verdicts.itertuples(index=False)
    ]
    rules = verdicts.drop_duplicates(["pass_rule", "alpha", "threshold_pct"])
    return [
        look.para(t("Verdicts, each session under its own rule"), "h2"),
        ruled_table(
            look,
            [
                Column(t("Session"), 0.2),
                Column(t("Pass rule"), 0.3),
                Column(t("Rounds the AI passed"), 0.25, True),
                Column(t("Mean detection %"), 0.25, True),
            ],
            rows,
            width * 0.8,
        ),
        *(look.para(rule_text(rule), "caption") for rule in rules.itertuples(index=False)),
    ]


def _study_detection_chart(detected: pd.DataFrame, *, width: float, height: float = 200) -> Drawing:
    """One bar per session with votes and one for all of them (set apart, darker): detection with its 95 %
    Wilson whisker and the chance level; under each bar its join code and votes."""
    drawing = charts.new_drawing(width, height)
    x0, y0 = 34, 42
    plot_w, plot_h = width - x0 - 4, height - y0 - 12  # room above 100 % for a value label
    charts.y_axis(drawing, x0, y0, plot_w, plot_h, 100, 25, " %", t("detection"))
    rows = detected[detected["votes"] > 0].reset_index(drop=True)
    slot = plot_w / (len(rows) + 0.5)  # half a slot of space before the pooled bar

    def y_of(pct: float) -> float:
        return y0 + plot_h * pct / 100

    for index, row in enumerate(rows.itertuples(index=False)):
        is_pooled = row.session == ALL
        centre = x0 + slot * (index + 0.5 + 0.5 * is_pooled)
        if is_pooled:
            gap = centre - slot * 0.75
            drawing.add(Line(gap, y0, gap, y0 + plot_h, strokeColor=charts.GRID, strokeWidth=0.5))
        bar_w = min(slot * 0.55, 50)
        drawing.add(
            Rect(
                centre - bar_w / 2,
                y0,
                bar_w,
                y_of(row.detection_pct) - y0,
                fillColor=charts.BLUE if is_pooled else charts.SKY,
                strokeColor=None,
            )
        )
        chance = y_of(row.chance_pct)
        drawing.add(
            Line(
                centre - slot * 0.42,
                chance,
                centre + slot * 0.42,
                chance,
                strokeColor=charts.BLACK,
                strokeWidth=1,
                strokeDashArray=(3, 2),
            )
        )
        low, high = y_of(row.ci_low), y_of(row.ci_high)
        drawing.add(Line(centre, low, centre, high, strokeColor=charts.BLACK, strokeWidth=0.9))
        for y in (low, high):
            drawing.add(Line(centre - 4, y, centre + 4, y, strokeColor=charts.BLACK, strokeWidth=0.9))
        drawing.add(
            charts.text_at(
                centre, high + 3, f"{row.detection_pct:.1f} %", size=charts.SMALL_SIZE, bold=True, anchor="middle"
            )
        )
        name = t("all sessions") if is_pooled else row.session
        drawing.add(charts.text_at(centre, y0 - 10, charts.fit_text(name, slot - 4), bold=is_pooled, anchor="middle"))
        drawing.add(
            charts.text_at(
                centre, y0 - 19, f"n = {row.votes}", size=charts.SMALL_SIZE, colour=charts.GREY, anchor="middle"
            )
        )
    charts.detection_legend(drawing, x0, 6, None)
    return drawing
