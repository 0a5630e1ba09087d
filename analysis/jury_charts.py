"""The juries side by side, drawn (ReportLab, as :mod:`analysis.charts`): detection per jury with its Wilson
interval, per round and pooled, and each jury's share of votes per player against chance.

A jury keeps one colour in both figures (:func:`jury_colours`): the live jury sky blue, the displaced jury blue, the
AI juries green, purple, grey, black in turn; the bars of an AI player's votes are outlined in vermillion.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from reportlab.graphics.shapes import Drawing, Line, Rect
from reportlab.lib import colors
from reportlab.pdfbase.pdfmetrics import stringWidth

from .charts import (
    BLACK,
    BLUE,
    GREEN,
    GREY,
    PURPLE,
    SKY,
    SMALL_SIZE,
    VERMILLION,
    fit_text,
    new_drawing,
    text_at,
    y_axis,
)
from .fonts import REGULAR
from .juries import DISPLACED_JURY, LIVE_JURY
from .words import t

AI_JURY_COLOURS = (GREEN, PURPLE, GREY, BLACK)


def jury_colours(juries: Sequence[str]) -> dict[str, colors.Color]:
    """One colour per jury label, in the order of ``juries``."""
    colours: dict[str, colors.Color] = {}
    others = iter(AI_JURY_COLOURS * (len(juries) // len(AI_JURY_COLOURS) + 1))
    for jury in juries:
        colours[jury] = SKY if jury == LIVE_JURY else BLUE if jury == DISPLACED_JURY else next(others)
    return colours


def jury_name(jury: str) -> str:
    """A jury label as the reports print it: "live", "displaced", or the AI jury's model ("AI gpt-x")."""
    if jury == LIVE_JURY:
        return t("live jury")
    if jury == DISPLACED_JURY:
        return t("displaced jury")
    return t("AI {model}", model=jury.partition(":")[2])


def jury_detection_chart(
    rounds: pd.DataFrame, pooled: pd.DataFrame, juries: Sequence[str], *, width: float = 480, height: float = 210
) -> Drawing:
    """Detection % per jury (bars, 95 % Wilson whiskers) in each round and pooled, with each group's chance level.

    ``rounds`` and ``pooled`` are :class:`analysis.juries.JuryStats`' tables; a jury without a cast vote in a group
    has no bar there (a grey dash on the axis); a round cut short is labelled so (pooled leaves it out).
    """
    groups = [
        (
            t("Round {round}", round=number) + (" " + t("(cut short)") if rows["cut_short"].any() else ""),
            rows.set_index("jury"),
        )
        for number, rows in rounds.groupby("round", sort=True)
    ]
    groups.append((t("pooled"), pooled.set_index("jury")))
    return _grouped_bars(
        groups,
        juries,
        value="detection_pct",
        caption=t("detection"),
        width=width,
        height=height,
        whiskers=True,
        outlines={},
    )


def jury_shares_chart(
    shares: pd.DataFrame, juries: Sequence[str], *, width: float = 480, height: float = 200
) -> Drawing:
    """Each jury's share (%) of its cast votes per player (by alias where the round had aliases), round by round,
    against chance (dashed: 100 / players of the round); an AI player's label and bars are vermillion-marked."""
    groups, outlines = [], {}
    for (number, player), rows in shares.groupby(["round", "player"], sort=False):
        first = rows.iloc[0]
        label = first["alias"] if isinstance(first["alias"], str) and first["alias"] else player
        key = f"{t('R{round}', round=number)} {label}"
        groups.append((key, rows.set_index("jury")))
        outlines[key] = first["kind"] == "ai"
    return _grouped_bars(
        groups,
        juries,
        value="share_pct",
        caption=t("share of votes"),
        width=width,
        height=height,
        whiskers=False,
        outlines=outlines,
    )


def _grouped_bars(
    groups: list[tuple[str, pd.DataFrame]],
    juries: Sequence[str],
    *,
    value: str,
    caption: str,
    width: float,
    height: float,
    whiskers: bool,
    outlines: dict[str, bool],
) -> Drawing:
    drawing = new_drawing(width, height)
    colours = jury_colours(juries)
    x0, y0 = 34, 40
    plot_w, plot_h = width - x0 - 4, height - y0 - 8
    y_axis(drawing, x0, y0, plot_w, plot_h, 100, 25, " %", caption)
    slot = plot_w / max(len(groups), 1)
    bar_w = min(slot * 0.8 / max(len(juries), 1), 22)

    def y_of(pct: float) -> float:
        return y0 + plot_h * min(max(pct, 0.0), 100.0) / 100

    for index, (label, rows) in enumerate(groups):
        centre = x0 + slot * (index + 0.5)
        ai_group = outlines.get(label, False)
        drawing.add(
            text_at(
                centre,
                y0 - 10,
                fit_text(label, slot - 2, SMALL_SIZE),
                size=SMALL_SIZE,
                bold=ai_group,
                colour=VERMILLION if ai_group else BLACK,
                anchor="middle",
            )
        )
        chance = rows["chance_pct"].dropna()
        if len(chance):
            level = y_of(float(chance.iloc[0]))
            drawing.add(
                Line(
                    centre - slot * 0.45,
                    level,
                    centre + slot * 0.45,
                    level,
                    strokeColor=BLACK,
                    strokeWidth=1,
                    strokeDashArray=(3, 2),
                )
            )
        left = centre - bar_w * len(juries) / 2
        for position, jury in enumerate(juries):
            x = left + bar_w * position
            shown = rows[value].get(jury) if jury in rows.index else None
            if shown is None or pd.isna(shown):  # no cast vote of this jury here
                drawing.add(Line(x + 1, y0, x + bar_w - 1, y0, strokeColor=GREY, strokeWidth=1.5))
                continue
            top = y_of(float(shown))
            drawing.add(
                Rect(
                    x + 0.5,
                    y0,
                    bar_w - 1,
                    top - y0,
                    fillColor=colours[jury],
                    strokeColor=VERMILLION if ai_group else None,
                    strokeWidth=0.8,
                )
            )
            if whiskers and not pd.isna(rows["ci_low"].get(jury)):
                middle = x + bar_w / 2
                low, high = y_of(float(rows["ci_low"][jury])), y_of(float(rows["ci_high"][jury]))
                drawing.add(Line(middle, low, middle, high, strokeColor=BLACK, strokeWidth=0.8))
                for y in (low, high):
                    drawing.add(Line(middle - 2, y, middle + 2, y, strokeColor=BLACK, strokeWidth=0.8))
    _legend(drawing, x0, 8, juries, colours, whiskers)
    return drawing


def _legend(
    drawing: Drawing, x: float, y: float, juries: Sequence[str], colours: dict[str, colors.Color], whiskers: bool
) -> None:
    """One row: a swatch per jury, then the whisker and the chance line."""
    for jury in juries:
        drawing.add(Rect(x, y - 1, 9, 7, fillColor=colours[jury], strokeColor=None))
        name = jury_name(jury)
        drawing.add(text_at(x + 12, y, name, size=SMALL_SIZE))
        x += 12 + stringWidth(name, REGULAR, SMALL_SIZE) + 10
    if whiskers:
        drawing.add(Line(x + 4, y - 2, x + 4, y + 7, strokeColor=BLACK, strokeWidth=0.8))
        caption = t("95 % Wilson CI")
        drawing.add(text_at(x + 8, y, caption, size=SMALL_SIZE))
        x += 8 + stringWidth(caption, REGULAR, SMALL_SIZE) + 10
    drawing.add(Line(x, y + 2.5, x + 16, y + 2.5, strokeColor=BLACK, strokeDashArray=(3, 2)))
    drawing.add(text_at(x + 19, y, t("chance"), size=SMALL_SIZE))
