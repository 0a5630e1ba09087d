"""The judge beside the graders: per judge model, its agreement with each grader and with the final marks, and the
2x2 tables of the verdicts."""

from __future__ import annotations

import pandas as pd
from reportlab.lib import colors
from reportlab.platypus import Flowable, Spacer, Table, TableStyle

from .. import charts
from ..agreement import CONSTANT, FINAL_MARKS, NO_ITEMS, ONE_CATEGORY, TOO_FEW
from ..fonts import REGULAR
from ..judge_rows import JUDGE_TAKEN, JudgeRow, judge_rows
from ..pdf.layout import frame_width
from ..pdf.look import Look
from ..pdf.tables import Column, ruled_table
from ..pdf.text import markup
from ..words import t

MEASURE_NAMES = {
    "correct": "Correct/incorrect",
    "accuracy": "Accuracy",
    "comprehensiveness": "Comprehensiveness",
    "depth": "Depth",
    "evidence": "Evidence",
    "coherence": "Coherence",
}

UNDEFINED_REASONS = {  # why a statistic is undefined (analysis.agreement), in the reports' words
    NO_ITEMS: "no answer both marked",
    ONE_CATEGORY: "every answer in one category",
    TOO_FEW: "a single answer",
    CONSTANT: "one grade throughout",
}

JUDGE_CONFUSIONS_PER_ROW = 3

_AGREE = colors.HexColor("#E8E8E8")


def judge_section(agreement: pd.DataFrame, confusions: pd.DataFrame, look: Look) -> list[Flowable]:
    """Per judge model: its agreement with each grader and with the final marks, then the verdicts' 2x2 tables."""
    width = frame_width()
    story: list[Flowable] = [
        look.para(t("The judge beside the graders"), "h1"),
        look.para(
            t(
                "A language model (the judge) suggested grades for the open answers: correct or incorrect, and 0–5 "
                "on MovieCORE's five dimensions. Here its suggestions are set beside each grader's own marks and "
                "beside the final marks. The suggestions never counted as marks: a suggestion became a mark only "
                "when a grader took it, and then it is that grader's own mark."
            )
        ),
    ]
    for model, lines in judge_rows(agreement).items():
        story += [look.para(t("Judge: {model}", model=markup(model)), "h2"), _judge_table(lines, look, width)]
        verdicts = confusions[confusions["model"] == model]
        if len(verdicts):
            story += [Spacer(1, 8), _confusion_grid(verdicts, look, width)]
    story.append(
        look.para(
            t(
                "κ on correct/incorrect: Cohen's kappa (Cohen, 1960); κ on a 0–5 dimension: Cohen's weighted kappa "
                "with quadratic weights (Cohen, 1968); Spearman's ρ (ties at their average rank) as a rank check. "
                "Each is taken over the answers both the judge and the rater marked on that measure; 1 is perfect "
                "agreement, 0 what chance gives. Final marks: the marks the reports use, set from the graders' "
                "agreement or by hand. The tables: the verdicts on the answers both marked, rows the rater's, "
                "columns the judge's; the shaded diagonal is where they agree. A mark a grader took from the judge "
                "is that grader's, and agrees with the judge."
            )
            + (
                " "
                + t(
                    "A grader's marks taken from the judge agree with it by construction: their count is shown per "
                    "grader."
                )
                if JUDGE_TAKEN in agreement.columns
                else ""
            ),
            "caption",
        )
    )
    return story


def _judge_table(lines: list[JudgeRow], look: Look, width: float) -> Table:
    """Rater x measure: the answers both marked, kappa and rho; one "undefined" across both where neither has an
    answer to go on."""
    unshared = [line.kappa_reason == NO_ITEMS and line.spearman_reason == NO_ITEMS for line in lines]
    with_taken = any(line.taken is not None for line in lines)
    taken = [Column(t("Marks taken from the judge"), 0.12, True)] if with_taken else []
    table = ruled_table(
        look,
        [
            Column(t("Rater"), 0.14),
            *taken,
            Column(t("Measure"), 0.26 if with_taken else 0.38),
            Column(t("Answers both marked"), 0.12, True),
            Column(t("κ / weighted κ"), 0.18, True),
            Column(t("Spearman ρ"), 0.18, True),
        ],
        [
            [
                _rater_name(line.rater) if line.starts_rater else "",
                *([str(line.taken) if line.starts_rater and line.taken is not None else ""] if with_taken else []),
                ", ".join(t(MEASURE_NAMES.get(measure, measure)) for measure in line.measures),
                str(line.items),
                _statistic(line.kappa, line.kappa_reason),
                "" if line.spearman is None or both else _statistic(line.spearman, line.spearman_reason),
            ]
            for line, both in zip(lines, unshared)
        ],
        width,
        block_starts=[line.starts_rater for line in lines],
    )
    first = 4 if with_taken else 3  # the kappa's column
    table.setStyle(
        TableStyle([("SPAN", (first, row + 1), (first + 1, row + 1)) for row, both in enumerate(unshared) if both])
    )
    return table


def _rater_name(rater: str) -> str:
    return t("Final marks") if rater == FINAL_MARKS else markup(rater)


def _statistic(value: float, reason: str | None) -> str:
    """A kappa or rho to two decimals, or why it is undefined (grey)."""
    if reason is None and not pd.isna(value):
        return f"{value:.2f}"
    why = t("undefined: {reason}", reason=t(UNDEFINED_REASONS.get(reason, reason or "")))
    return f"<font color='#{charts.GREY.hexval()[2:]}'>{why}</font>"


def _confusion_grid(confusions: pd.DataFrame, look: Look, width: float) -> Table:
    """The model's 2x2 tables of the verdicts, one per rater, a few side by side."""
    gap = 10
    each = (width - gap * (JUDGE_CONFUSIONS_PER_ROW - 1)) / JUDGE_CONFUSIONS_PER_ROW
    boxes = [
        _confusion_table(str(rater), matrix, look, each) for rater, matrix in confusions.groupby("rater", sort=False)
    ]
    cells: list[list] = []
    for start in range(0, len(boxes), JUDGE_CONFUSIONS_PER_ROW):
        row = boxes[start : start + JUDGE_CONFUSIONS_PER_ROW]
        cells.append(row + [""] * (JUDGE_CONFUSIONS_PER_ROW - len(row)))
    grid = Table(cells, colWidths=[each + gap] * (JUDGE_CONFUSIONS_PER_ROW - 1) + [each], hAlign="LEFT")
    grid.setStyle(
        TableStyle(
            [
                ("FONTNAME", (0, 0), (-1, -1), REGULAR),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("LEFTPADDING", (0, 0), (-1, -1), 0),
                ("RIGHTPADDING", (0, 0), (-1, -1), gap),
                ("RIGHTPADDING", (-1, 0), (-1, -1), 0),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 8),
            ]
        )
    )
    return grid


def _confusion_table(rater: str, counts: pd.DataFrame, look: Look, width: float) -> Table:
    """One rater's 2x2: rows the rater's verdict, columns the judge's (a header spanning them), the agreeing diagonal
    shaded; the booktabs rules of :func:`ruled_table`."""
    count = {
        (bool(row.rater_verdict), bool(row.judge_verdict)): int(row.answers) for row in counts.itertuples(index=False)
    }
    verdicts = ((True, t("correct")), (False, t("incorrect")))
    cells = [
        [look.para(_rater_name(rater), "head"), look.para(t("Judge"), "head_centre"), ""],
        ["", *(look.para(label, "head_right") for _, label in verdicts)],
        *(
            [
                look.para(label, "cell"),
                *(look.para(str(count.get((theirs, judges), 0)), "cell_right") for judges, _ in verdicts),
            ]
            for theirs, label in verdicts
        ),
    ]
    table = Table(cells, colWidths=[0.4 * width, 0.3 * width, 0.3 * width], hAlign="LEFT")
    table.setStyle(
        TableStyle(
            [
                ("SPAN", (1, 0), (2, 0)),
                ("LINEABOVE", (0, 0), (-1, 0), 0.9, colors.black),
                ("LINEBELOW", (1, 0), (2, 0), 0.3, charts.GRID),
                ("LINEBELOW", (0, 1), (-1, 1), 0.5, colors.black),
                ("LINEBELOW", (0, -1), (-1, -1), 0.9, colors.black),
                ("BACKGROUND", (1, 2), (1, 2), _AGREE),
                ("BACKGROUND", (2, 3), (2, 3), _AGREE),
                ("FONTNAME", (0, 0), (-1, -1), REGULAR),
                ("VALIGN", (0, 0), (-1, -1), "BOTTOM"),
                ("TOPPADDING", (0, 0), (-1, -1), 1.6),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 1.6),
                ("LEFTPADDING", (0, 0), (-1, -1), 3),
                ("RIGHTPADDING", (0, 0), (-1, -1), 3),
            ]
        )
    )
    return table
