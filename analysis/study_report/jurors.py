"""Detection per juror facet label across the sessions: each session's, and pooled."""

from __future__ import annotations

import pandas as pd
from reportlab.platypus import Flowable, PageBreak

from ..pdf.layout import frame_width
from ..pdf.look import Look
from ..pdf.numbers import interval_text, number_text
from ..pdf.tables import Column, block_starts, ruled_table
from ..session_report.jurors import FACET_TITLES, facet_label
from ..words import t
from .labels import nothing_note, session_label


def juror_section(groups: pd.DataFrame, look: Look) -> list[Flowable]:
    """Detection per juror facet label: each session's, and pooled over the sessions."""
    width = frame_width()
    story: list[Flowable] = [PageBreak(), look.para(t("Juror groups across sessions"), "h1")]
    if groups.empty:
        return story + nothing_note(look, t("No juror carried a group label."))
    label_keys = list(zip(groups["facet"], groups["group"]))
    facet_starts = block_starts(list(groups["facet"]))
    label_starts = block_starts(label_keys)
    rows = [
        [
            t(FACET_TITLES[row.facet]) if facet_start else "",
            facet_label(row.facet, row.group) if label_start else "",
            session_label(row.session),
            str(row.jurors),
            str(row.votes),
            str(row.ai_votes),
            number_text(row.detection_pct),
            interval_text(row.ci_low, row.ci_high),
        ]
        for row, facet_start, label_start in zip(groups.itertuples(index=False), facet_starts, label_starts)
    ]
    return story + [
        ruled_table(
            look,
            [
                Column(t("Facet"), 0.13),
                Column(t("Group"), 0.17),
                Column(t("Session"), 0.12),
                Column(t("Jurors"), 0.1, True),
                Column(t("Votes"), 0.1, True),
                Column(t("AI votes"), 0.11, True),
                Column(t("Detection %"), 0.13, True),
                Column(t("95 % CI"), 0.14, True),
            ],
            rows,
            width,
            block_starts=label_starts,
        ),
        look.para(
            t(
                "Per label of each juror facet: the jurors of each session carrying it and their cast votes (all "
                "rounds), then all sessions together (a juror belongs to one session). Detection = share of those "
                "votes naming an AI player, with its 95 % Wilson interval."
            ),
            "caption",
        ),
    ]
