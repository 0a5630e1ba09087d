"""What the sessions are made of: players by stage or program, jurors by facet label, questions by CogME element;
a column per session and the study's total."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.platypus import Flowable

from ..fonts import BOLD
from ..pdf.layout import frame_width
from ..pdf.look import Look
from ..pdf.tables import Column, block_starts, ruled_table
from ..pdf.text import markup
from ..session_report.jurors import FACET_TITLES, facet_label
from ..study import ALL
from ..words import t
from .labels import group_label

CELL_PADDING = 8.0  # a table column's side paddings (3 + 3 in analysis.pdf.tables) and a little room

MAX_COUNT_SHARE = 0.8  # the count columns of the composition tables take at most this much of the width


def composition_section(tables: dict[str, pd.DataFrame], look: Look) -> list[Flowable]:
    """Players by kind and stage or program, jurors by facet label, questions by CogME element: a column per
    session and the study's total."""
    width = frame_width()
    sessions = list(tables["sessions.csv"]["session"])
    numbers, rest = _count_columns(sessions, width, look)
    label_shares = (0.45 * rest, 0.55 * rest)  # the key (kind, facet, module) and its value

    players = tables["composition_players.csv"]
    wide = _pivot(players.fillna({"stage": "", "program": ""}), ["kind", "stage", "program"], "players", sessions)
    kind_starts = block_starts(list(wide["kind"]))
    player_rows = [
        [
            ("<b>AI</b>" if row["kind"] == "ai" else t("human")) if start else "",
            group_label(row["stage"] or row["program"]),
        ]
        + [str(row[code]) for code in [*sessions, ALL]]
        for row, start in zip(wide.to_dict("records"), kind_starts)
    ]
    story: list[Flowable] = [
        look.para(t("Composition"), "h1"),
        look.para(t("Players"), "h2"),
        ruled_table(
            look,
            [Column(t("Kind"), label_shares[0]), Column(t("Stage or program"), label_shares[1]), *numbers],
            player_rows,
            width,
            block_starts=kind_starts,
        ),
        look.para(t("Humans by developmental stage; AI players by the program(s) that answered for them."), "caption"),
        look.para(t("Jurors"), "h2"),
    ]

    jurors = tables["composition_jurors.csv"]
    overview = tables["sessions.csv"]
    all_jurors = [t("all"), t("jurors")] + [str(n) for n in overview["jurors"]] + [str(overview["jurors"].sum())]
    if len(jurors):
        wide = _pivot(jurors, ["facet", "group"], "jurors", sessions)
        starts = block_starts(list(wide["facet"]))
        facet_rows = [
            [t(FACET_TITLES[row["facet"]]) if start else "", facet_label(row["facet"], row["group"])]
            + [str(row[code]) for code in [*sessions, ALL]]
            for row, start in zip(wide.to_dict("records"), starts)
        ]
    else:
        facet_rows, starts = [], []
    story += [
        ruled_table(
            look,
            [Column(t("Facet"), label_shares[0]), Column(t("Group"), label_shares[1]), *numbers],
            [all_jurors, *facet_rows],
            width,
            block_starts=[True, *starts],
        ),
        look.para(
            t(
                "A juror belongs to one session: J1 of two sessions are two jurors. Jurors without a label are "
                "left out."
            ),
            "caption",
        ),
        look.para(t("Questions by CogME element"), "h2"),
    ]

    questions = tables["composition_questions.csv"]
    wide = _pivot(questions, ["module", "element"], "questions", sessions)
    wide = wide[wide[ALL] > 0]
    starts = block_starts(list(wide["module"]))
    element_rows = [
        [row["module"].upper() if start else "", markup(row["element"])] + [str(row[c]) for c in [*sessions, ALL]]
        for row, start in zip(wide.to_dict("records"), starts)
    ]
    totals = [t("all"), t("questions")] + [str(n) for n in overview["questions"]] + [str(overview["questions"].sum())]
    story += [
        ruled_table(
            look,
            [Column(t("Module"), label_shares[0]), Column(t("Element"), label_shares[1]), *numbers],
            [totals, *element_rows],
            width,
            block_starts=[True, *starts],
        ),
        look.para(
            t(
                "Questions tagged with each element in each session's own set (elements no session tagged are left "
                "out); a question asked in two sessions counts in both."
            ),
            "caption",
        ),
    ]
    return story


def _pivot(table: pd.DataFrame, keys: list[str], value: str, sessions: Sequence[str]) -> pd.DataFrame:
    """``table`` (long, one row per session and key) as one row per key with a column per session and ``all``,
    the keys in the order of the study's total rows (the report order :mod:`analysis.study` sorted them in)."""
    wide = table.pivot_table(index=keys, columns="session", values=value, aggfunc="sum", fill_value=0)
    wide = wide.reindex(columns=[*sessions, ALL], fill_value=0).reset_index()
    return table.loc[table["session"] == ALL, keys].merge(wide, on=keys, how="left")


def _count_columns(sessions: Sequence[str], width: float, look: Look) -> tuple[list[Column], float]:
    """One numeric column per session and a last one for the study's total, and the share of ``width`` left
    for the label columns: together they take at least 60 %, more when a join code needs it to fit on one line."""
    headers = [markup(code) for code in sessions] + [f"<b>{t('all')}</b>"]
    size = look.text["head"].fontSize
    widest = max(stringWidth(str(code), BOLD, size) for code in [*sessions, t("all")]) + CELL_PADDING
    each = min(max(0.6 / len(headers), widest / width), MAX_COUNT_SHARE / len(headers))
    return [Column(header, each, True) for header in headers], 1 - each * len(headers)
