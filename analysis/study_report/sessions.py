"""The sessions of a study: their join codes, names, banks, pass rules and sizes, then their design hashes."""

from __future__ import annotations

import pandas as pd
from reportlab.platypus import Flowable, Spacer

from ..pdf.layout import frame_width
from ..pdf.look import Look
from ..pdf.tables import Column, ruled_table
from ..pdf.text import markup
from ..words import t
from .labels import rule_short


def sessions_section(tables: dict[str, pd.DataFrame], look: Look) -> list[Flowable]:
    """The cover's table of the sessions, then their design hashes in full."""
    width = frame_width()
    overview = tables["sessions.csv"]
    rows = [
        [
            f"<b>{markup(row.session)}</b>",
            markup(row.name),
            markup(row.bank),
            rule_short(row),
            t("{players} ({ai} AI)", players=row.players, ai=row.ai_players),
            str(row.jurors),
            str(row.rounds),
            str(row.questions),
        ]
        for row in overview.itertuples(index=False)
    ]
    return [
        look.para(t("Sessions"), "h1"),
        look.para(
            t(
                "{count} sessions read together. Each keeps its own design, question bank and pass rule: a player, "
                "a juror and a question belong to their session (a question is shared only when its qid and its "
                "text agree), and each session is judged under its own rule.",
                count=len(overview),
            )
        ),
        ruled_table(
            look,
            [
                Column(t("Join code"), 0.1),
                Column(t("Name"), 0.2),
                Column(t("Bank"), 0.14),
                Column(t("Pass rule"), 0.16),
                Column(t("Players"), 0.11, True),
                Column(t("Jurors"), 0.09, True),
                Column(t("Rounds"), 0.09, True),
                Column(t("Questions"), 0.11, True),
            ],
            rows,
            width,
        ),
        *_later_juries_note(overview, look),
        Spacer(1, 8),
        look.para(t("Design hashes"), "h2"),
        ruled_table(
            look,
            [Column(t("Join code"), 0.14), Column(t("Design hash"), 0.86)],
            [[markup(row.session), markup(row.design_hash) or "–"] for row in overview.itertuples(index=False)],
            width,
        ),
        look.para(
            t("The design hash identifies each session's design (questions, rounds, players, rules) as it was run."),
            "caption",
        ),
    ]


def _later_juries_note(overview: pd.DataFrame, look: Look) -> list[Flowable]:
    """Jurors above are the live juries'; a session a displaced jury or AI jurors judged afterwards says so."""
    later = [
        t(
            "{session}: displaced jurors {displaced}, AI jurors {ai}",
            session=row.session,
            displaced=row.displaced_jurors,
            ai=row.ai_jurors,
        )
        for row in overview.itertuples(index=False)
        if getattr(row, "displaced_jurors", 0) or getattr(row, "ai_jurors", 0)
    ]
    if not later:
        return []
    text = t("Jurors: the live jury of each session. Judged afterwards: {sessions}.", sessions="; ".join(later))
    return [look.para(markup(text), "caption")]
