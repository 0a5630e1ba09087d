"""The questions several sessions share, and the qids that name different questions in different sessions."""

from __future__ import annotations

import pandas as pd
from reportlab.platypus import Flowable

from ..pdf.layout import frame_width
from ..pdf.look import Look
from ..pdf.tables import Column, block_starts, ruled_table
from ..pdf.text import markup
from ..words import t
from .labels import nothing_note


def shared_section(shared: pd.DataFrame, collisions: pd.DataFrame, look: Look) -> list[Flowable]:
    """The questions of several sessions, and the qids that mean different questions in different sessions."""
    width = frame_width()
    story: list[Flowable] = [look.para(t("Shared questions"), "h1")]
    if shared.empty:
        story += nothing_note(look, t("No question is asked in more than one session."))
    else:
        story += [
            ruled_table(
                look,
                [Column("qid", 0.1), Column(t("Question"), 0.65), Column(t("Sessions"), 0.25)],
                [
                    [markup(row.qid), markup(row.question), markup(row.session_codes)]
                    for row in shared.itertuples(index=False)
                ],
                width,
                zebra=True,
            ),
            look.para(t("A question is shared when its qid and its text are the same in both sessions."), "caption"),
        ]
    if not collisions.empty:
        starts = block_starts(list(collisions["qid"]))
        story += [
            look.para(t("The same qid, another question"), "h2"),
            ruled_table(
                look,
                [Column("qid", 0.1), Column(t("Session"), 0.15), Column(t("Question"), 0.75)],
                [
                    [markup(row.qid) if start else "", markup(row.session), markup(row.question)]
                    for row, start in zip(collisions.itertuples(index=False), starts)
                ],
                width,
                block_starts=starts,
            ),
            look.para(
                t("These qids name different questions in different sessions (other banks): they are never pooled."),
                "caption",
            ),
        ]
    return story
