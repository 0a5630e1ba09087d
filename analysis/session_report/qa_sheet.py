"""The Q&A sheet: every question with its tags and what each player answered, marked right, wrong or not graded."""

from __future__ import annotations

import math

import pandas as pd
from reportlab.platypus import Flowable, Table

from .. import charts
from ..pdf.layout import frame_width
from ..pdf.look import Look
from ..pdf.tables import Column, ruled_table
from ..pdf.text import markup, user_texts
from ..taxonomy import KEY_MARK
from ..words import t

CORRECT_MARK, WRONG_MARK, NO_ANSWER, UNGRADED_MARK = "√", "×", "—", "?"  # all in NanumGothic (tested)

QA_PLAYERS_PER_TABLE = 6  # answer columns narrower than this leave a word or two per line


def qa_section(qa_sheet: pd.DataFrame, look: Look) -> list[Flowable]:
    """The Q&A sheet; with many players it is split into tables of a few players each to stay legible."""
    players = list(dict.fromkeys(qa_sheet["player"]))
    tables = math.ceil(len(players) / QA_PLAYERS_PER_TABLE)
    per_table = math.ceil(len(players) / max(tables, 1))
    story: list[Flowable] = [
        look.para(t("Q&amp;A sheet"), "h1"),
        look.para(
            t(
                "{correct} correct, {wrong} wrong, {none} no answer (counts as wrong), {ungraded} not graded "
                "yet (left out of the profiles). Elements: T = TARGET ({key} key target), C = CONTENT, "
                "Th = THINKING.",
                correct=CORRECT_MARK,
                wrong=WRONG_MARK,
                none=NO_ANSWER,
                ungraded=UNGRADED_MARK,
                key=KEY_MARK,
            ),
            "caption",
        ),
    ]
    for start in range(0, len(players), per_table):
        block = players[start : start + per_table]
        if tables > 1:  # a plain line: a heading kept with its page-long table would leave a page blank
            story.append(
                look.para(
                    t(
                        "<b>Players {first}–{last} of {count}</b>",
                        first=start + 1,
                        last=start + len(block),
                        count=len(players),
                    )
                )
            )
        story.append(_qa_sheet_table(qa_sheet[qa_sheet["player"].isin(block)], block, look))
    return story


def qa_texts(qa_sheet: pd.DataFrame) -> set[str]:
    return user_texts(*(qa_sheet[column] for column in ("qid", "question", "reference", "player", "answer", "option")))


def _qa_sheet_table(qa_sheet: pd.DataFrame, players: list[str], look: Look) -> Table:
    columns = [Column(t("Q"), 0.06), Column(t("Question"), 0.2), Column(t("Elements"), 0.12)]
    columns += [Column(look.player(p), 0.62 / len(players), style="answer") for p in players]
    rows = []
    for _, answers in qa_sheet.groupby("qid", sort=False):
        first = answers.iloc[0]
        round_text = "" if pd.isna(first["round"]) else f"<br/><font color='#6E6E6E'>R{first['round']}</font>"
        rows.append(
            [
                markup(first["qid"]) + round_text,
                markup(first["question"])
                + "<br/><font color='#6E6E6E'>"
                + t("Answer: {answer}", answer=markup(first["reference"]))
                + "</font>",
                "<br/>".join(
                    f"{label} {markup(first[column].replace(';', ', '))}"
                    for label, column in (("T:", "targets"), ("C:", "contents"), ("Th:", "thinking"))
                    if first[column]
                )
                or "<font color='#6E6E6E'>" + t("untagged") + "</font>",
            ]
            + [_answer_cell(answer) for answer in answers.itertuples(index=False)]
        )
    return ruled_table(look, columns, rows, frame_width("landscape"), zebra=True)


def _answer_cell(answer) -> str:
    """√ or × and what the player said (the option for mcq answers); the no-answer mark alone for no answer.

    An answer graded correct keeps its √ even when it is empty (a ``correct`` given by hand wins).
    """
    if answer.ungraded:
        mark, colour = UNGRADED_MARK, charts.GREY
    elif answer.correct:
        mark, colour = CORRECT_MARK, charts.GREEN
    elif answer.answered:
        mark, colour = WRONG_MARK, charts.VERMILLION
    else:
        mark, colour = NO_ANSWER, charts.GREY
    text = (answer.option or answer.answer) if answer.answered else ""
    return f"<font color='#{colour.hexval()[2:]}' size='9'><b>{mark}</b></font> {markup(text)}".rstrip()
