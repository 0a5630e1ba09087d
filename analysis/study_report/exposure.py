"""The judgment sheets' exposure per question and session; a question of several sessions pooled."""

from __future__ import annotations

import pandas as pd
from reportlab.platypus import Flowable

from ..pdf.layout import frame_width
from ..pdf.look import Look
from ..pdf.numbers import number_text
from ..pdf.tables import Column, block_starts, ruled_table
from ..pdf.text import markup
from ..words import t
from .labels import nothing_note, session_label


def exposure_section(exposure: pd.DataFrame, look: Look) -> list[Flowable]:
    """The judgment sheets' marks per question and session; a question of several sessions pooled."""
    width = frame_width()
    story: list[Flowable] = [look.para(t("Judgment sheets: exposure per question"), "h1")]
    if exposure.empty:
        return story + nothing_note(look, t("No judgment sheet was filled in."))
    keys = list(zip(exposure["qid"], exposure["question"].fillna("")))
    starts = block_starts(keys)
    rows = [
        [
            f"<b>{markup(row.qid)}</b> {markup(row.question)}" if start else "",
            session_label(row.session),
            str(row.marks),
            str(row.ai_marks),
            number_text(row.exposure_pct),
            number_text(row.chance_pct),
        ]
        for row, start in zip(exposure.itertuples(index=False), starts)
    ]
    return story + [
        ruled_table(
            look,
            [
                Column(t("Question"), 0.4),
                Column(t("Session"), 0.12),
                Column(t("Marks"), 0.1, True),
                Column(t("Marks on the AI"), 0.14, True),
                Column(t("Exposure %"), 0.12, True),
                Column(t("Chance %"), 0.12, True),
            ],
            rows,
            width,
            block_starts=starts,
        ),
        look.para(
            t(
                "Exposure = share of the question's \"looks like the AI\" marks that fell on an AI player's answer; "
                "chance = the share blind marks would give it (its answers among those the jury read). A question "
                "asked in several sessions (same qid and text) gets a row for all of them, its chance weighted by "
                "each session's marks."
            ),
            "caption",
        ),
    ]
