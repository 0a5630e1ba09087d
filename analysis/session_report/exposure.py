"""The judgment sheet's exposure: per question, the "looks like the AI" marks and how many fell on the AI."""

from __future__ import annotations

import pandas as pd
from reportlab.platypus import Flowable

from ..pdf.layout import frame_width
from ..pdf.look import Look
from ..pdf.numbers import number_text
from ..pdf.tables import Column, ruled_table
from ..pdf.text import markup
from ..words import t


def exposure_section(exposure: pd.DataFrame, look: Look) -> list[Flowable]:
    """Per question: "looks like the AI" marks, how many fell on the AI, and the share blind marks would reach."""
    width = frame_width()
    has_chance = "chance_pct" in exposure.columns
    columns = [
        Column(t("Question"), 0.28),
        Column(t("Marks"), 0.14, True),
        Column(t("Marks on the AI"), 0.2, True),
        Column(t("Exposure %"), 0.18, True),
    ] + ([Column(t("Chance %"), 0.2, True)] if has_chance else [])
    rows = [
        [markup(row.qid), str(row.marks), str(row.ai_marks), number_text(row.exposure_pct)]
        + ([number_text(row.chance_pct)] if has_chance else [])
        for row in exposure.itertuples(index=False)
    ]
    total_marks, total_ai = int(exposure["marks"].sum()), int(exposure["ai_marks"].sum())
    overall = number_text(100 * total_ai / total_marks) if total_marks else "–"
    return [
        look.para(t("Judgment sheet: exposure"), "h2"),
        look.para(
            t(
                "Jurors marked {marks} answers as looking like the AI's; {ai_marks} of them were an AI "
                "player's ({overall} %).",
                marks=total_marks,
                ai_marks=total_ai,
                overall=overall,
            )
        ),
        ruled_table(look, columns, rows, width * 0.75, zebra=True),
        look.para(
            t(
                "Exposure = share of the question's \"looks like the AI\" marks that fell on an AI player's "
                "answer; chance = AI answers / all answers to the question, the share marks placed blindly "
                "would reach."
            ),
            "caption",
        ),
    ]
