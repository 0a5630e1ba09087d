"""The report figures, drawn with ``reportlab.graphics`` so they stay vector and use the embedded font.

Every function returns a :class:`~reportlab.graphics.shapes.Drawing` (a Flowable) sized in points.
A player keeps one :class:`PlayerStyle` across all figures of a report; AI players are always
vermillion (then black), dashed, heavier and square-marked, so they stand out in grey-scale print and
for colour-blind readers.  Every colour is from the Okabe & Ito palette, and no human colour is near
the AI's: Okabe-Ito's orange is left out, since to many readers (and in print) it merges with vermillion.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pandas as pd
from reportlab.graphics.shapes import Circle, Drawing, Group, Line, Polygon, Rect, String
from reportlab.lib import colors
from reportlab.pdfbase.pdfmetrics import stringWidth

from .fonts import BOLD, REGULAR, register_fonts
from .taxonomy import EXTENSIONS, Module, all_elements
from .words import t

# Okabe & Ito (2008), "Color Universal Design"; yellow is left out (unreadable on white), orange too
# (next to the AI's vermillion it reads as the same colour).
BLUE = colors.HexColor("#0072B2")
GREEN = colors.HexColor("#009E73")
PURPLE = colors.HexColor("#CC79A7")
SKY = colors.HexColor("#56B4E9")
VERMILLION = colors.HexColor("#D55E00")
BLACK = colors.black
GREY = colors.HexColor("#6E6E6E")
GRID = colors.HexColor("#C8C8C8")
HUMAN_COLOURS = (BLUE, GREEN, PURPLE, SKY, GREY)
AI_COLOURS = (VERMILLION, BLACK)
AI_DASH = (5, 2)
HUMAN_REPEAT_DASH = (1.2, 1.8)  # a second round of the human colours is dotted

RING_VALUES = (25, 50, 75, 100)  # the centre is 0
TITLE_SIZE = 9.5
LABEL_SIZE = 7.5
SMALL_SIZE = 6.5


@dataclass(frozen=True)
class PlayerStyle:
    colour: colors.Color
    is_ai: bool
    dash: tuple[float, ...] | None
    width: float

    def label(self, name: str) -> str:
        return f"{name} (AI)" if self.is_ai else name


def player_styles(players: Iterable[tuple[str, str]]) -> dict[str, PlayerStyle]:
    """One style per ``(name, kind)`` in display order; the first occurrence of a name wins."""
    styles: dict[str, PlayerStyle] = {}
    humans = ais = 0
    for name, kind in players:
        if name in styles:
            continue
        if kind == "ai":
            styles[name] = PlayerStyle(AI_COLOURS[ais % len(AI_COLOURS)], True, AI_DASH, 2.0)
            ais += 1
        else:
            repeat = humans // len(HUMAN_COLOURS)
            dash = HUMAN_REPEAT_DASH if repeat % 2 else None
            styles[name] = PlayerStyle(HUMAN_COLOURS[humans % len(HUMAN_COLOURS)], False, dash, 1.2)
            humans += 1
    return styles


def lighter(colour: colors.Color, amount: float = 0.7) -> colors.Color:
    """``colour`` blended towards white (an opaque tint, safe for any PDF viewer and printer)."""
    return colors.Color(*(c + (1 - c) * amount for c in (colour.red, colour.green, colour.blue)))


def fit_text(text: str, max_width: float, size: float = LABEL_SIZE, font: str = REGULAR) -> str:
    """``text`` shortened with an ellipsis so that it is at most ``max_width`` points wide."""
    register_fonts()
    if stringWidth(text, font, size) <= max_width:
        return text
    while text and stringWidth(text + "…", font, size) > max_width:
        text = text[:-1]
    return text + "…"


def new_drawing(width: float, height: float) -> Drawing:
    """An empty drawing that starts in the report font (the default, Helvetica, would be referenced unembedded)."""
    register_fonts()
    drawing = Drawing(width, height)
    drawing.initialFontName = REGULAR
    return drawing


def text_at(x, y, text, *, size=LABEL_SIZE, bold=False, colour=BLACK, anchor="start") -> String:
    """``text`` drawn at (x, y) in the report font."""
    return String(x, y, text, fontName=BOLD if bold else REGULAR, fontSize=size, fillColor=colour, textAnchor=anchor)


def _marker(x: float, y: float, style: PlayerStyle, size: float = 3.6):
    if style.is_ai:
        return Rect(x - size / 2, y - size / 2, size, size, fillColor=style.colour, strokeColor=None)
    return Circle(x, y, size / 2, fillColor=style.colour, strokeColor=None)


def _legend_width(entries: Sequence[tuple[str, PlayerStyle]]) -> float:
    return max(stringWidth(style.label(name), REGULAR, LABEL_SIZE) for name, style in entries) + 26


def _draw_legend(
    drawing: Drawing, x: float, y_top: float, entries: Sequence[tuple[str, PlayerStyle]], max_width: float
) -> None:
    """A vertical legend: a line sample in each player's style, then the (shortened) name."""
    for index, (name, style) in enumerate(entries):
        y = y_top - 6 - index * 12
        drawing.add(
            Line(x, y, x + 18, y, strokeColor=style.colour, strokeWidth=style.width, strokeDashArray=style.dash)
        )
        drawing.add(_marker(x + 9, y, style))
        label = fit_text(style.label(name), max_width - 24)
        drawing.add(text_at(x + 24, y - 2.6, label, bold=style.is_ai))


# --------------------------------------------------------------------------------------- radar


@dataclass(frozen=True)
class RadarSeries:
    name: str
    values: Sequence[float | None]  # one per axis, 0-100; None where the player had no question
    style: PlayerStyle


def radar_chart(
    title: str,
    axes: Sequence[str],
    series: Sequence[RadarSeries],
    *,
    width: float = 240,
    height: float = 200,
    legend: bool = True,
    filled: bool = False,
    axis_notes: Sequence[str] | None = None,
) -> Drawing:
    """A radar with fixed 0-100 % axes, labelled rings and one polygon per series.

    ``axis_notes`` adds a small second line under each axis name (e.g. the number of questions).
    The plot is circular whatever ``width`` and ``height`` are: the radius follows the tighter side,
    and ``height`` is a maximum (the drawing shrinks to the plot so no empty band is left).
    """
    register_fonts()  # the label widths below are measured in the report font
    entries = [(s.name, s.style) for s in series]
    legend_w = min(_legend_width(entries), width * 0.4) if legend and series else 0
    n_axes = len(axes)
    # Room for the widest CogME element name at least, so that radars of one size share one radius.
    widest = [e for module in Module for e in all_elements(module)] + list(axes)
    label_w = max(stringWidth(name, REGULAR, LABEL_SIZE) for name in widest) + 5
    # An axis label block (name, optional note) plus its gap to the tip and the descenders.
    label_h = LABEL_SIZE + 1 + (SMALL_SIZE + 1 if axis_notes else 0) + 5
    plot_w = width - legend_w
    radius = max(min(plot_w / 2 - label_w, (height - TITLE_SIZE - 6) / 2 - label_h), 10)
    plot_h = 2 * (radius + label_h)
    legend_h = TITLE_SIZE + 8 + 12 * len(entries) if legend_w else 0
    height = max(plot_h + TITLE_SIZE + 6, legend_h)

    drawing = new_drawing(width, height)
    drawing.add(text_at(0, height - TITLE_SIZE, title, size=TITLE_SIZE, bold=True))
    if legend_w:
        _draw_legend(drawing, width - legend_w, height - TITLE_SIZE - 8, entries, legend_w)
    cx, cy = plot_w / 2, plot_h / 2
    angles = [math.pi / 2 - 2 * math.pi * i / n_axes for i in range(n_axes)]

    def point(angle: float, value: float) -> tuple[float, float]:
        return cx + radius * value / 100 * math.cos(angle), cy + radius * value / 100 * math.sin(angle)

    # Polygonal rings need three spokes; with fewer they would collapse, so fall back to circles.
    for ring in RING_VALUES:
        if n_axes >= 3:
            ring_points = [c for a in angles for c in point(a, ring)]
            drawing.add(Polygon(ring_points, strokeColor=GRID, strokeWidth=0.5, fillColor=None))
        else:
            drawing.add(Circle(cx, cy, radius * ring / 100, strokeColor=GRID, strokeWidth=0.5, fillColor=None))
    for angle in angles:
        drawing.add(Line(cx, cy, *point(angle, 100), strokeColor=GRID, strokeWidth=0.5))

    for index, (angle, axis) in enumerate(zip(angles, axes)):
        _axis_label(drawing, *point(angle, 100), angle, axis, axis_notes[index] if axis_notes else None)

    for entry in series:
        present = [(angle, v) for angle, v in zip(angles, entry.values) if v is not None and not pd.isna(v)]
        outline = [c for angle, v in present for c in point(angle, v)]
        style = entry.style
        if len(present) >= 2:
            drawing.add(
                Polygon(
                    outline,
                    strokeColor=style.colour,
                    strokeWidth=style.width,
                    strokeDashArray=style.dash,
                    strokeLineJoin=1,
                    fillColor=style.colour if filled else None,
                    fillOpacity=0.18,
                )
            )
        for angle, v in present:
            drawing.add(_marker(*point(angle, v), style))
    _ring_labels(drawing, cx, cy, radius)
    return drawing


def _ring_labels(drawing: Drawing, cx: float, cy: float, radius: float) -> None:
    """Ring values just below each ring on the left of the top spoke, drawn over the polygons on a white patch.

    There they are clear of the axis label above the tip and, unlike the gap between two spokes, not squeezed
    together on a triangle; drawn last, no player's line strikes through them.  The centre needs no "0".
    """
    size = SMALL_SIZE - 0.5
    for ring in RING_VALUES:
        text = f"{ring} %" if ring == 100 else str(ring)
        x, y = cx - 2, cy + radius * ring / 100 - size - 0.5
        text_w = stringWidth(text, REGULAR, size)
        drawing.add(Rect(x - text_w - 0.8, y - 1.6, text_w + 1.6, size + 1.4, fillColor=colors.white, strokeColor=None))
        drawing.add(text_at(x, y, text, size=size, colour=GREY, anchor="end"))


def _axis_label(drawing: Drawing, x: float, y: float, angle: float, name: str, note: str | None) -> None:
    """Place an axis name just outside the 100 % ring, anchored away from the plot."""
    dx, dy = math.cos(angle), math.sin(angle)
    anchor = "start" if dx > 0.25 else "end" if dx < -0.25 else "middle"
    lines = [(name, LABEL_SIZE, BLACK)] + ([(note, SMALL_SIZE, GREY)] if note else [])
    block_h = sum(size + 1 for _, size, _ in lines)
    x += 4 * dx
    # Top labels sit above the tip, bottom labels below it, side labels centred on it.
    top = y + 3 + block_h if dy > 0.25 else y - 3 if dy < -0.25 else y + block_h / 2
    for text, size, colour in lines:
        top -= size + 1
        drawing.add(text_at(x, top + 1.5, text, size=size, colour=colour, anchor=anchor))


def module_radar(
    elements: pd.DataFrame,
    module: Module | str,
    styles: dict[str, PlayerStyle],
    *,
    players: Sequence[str] | None = None,
    legend: bool | None = None,
    width: float = 240,
    height: float = 200,
    value_column: str = "score_pct",
) -> Drawing:
    """The radar of one CogME module from a profile element table.

    Axes are the module's elements that were asked at all (taxonomy order); each notes its question
    count.  By default every player in ``styles`` is overlaid with a legend; with ``players`` of one
    name it is the single-player variant: filled, no legend.
    """
    module = Module(module)
    rows = elements[elements["module"] == module.value]
    axes = [e for e in all_elements(module) if e in set(rows["element"])]
    names = list(players) if players is not None else [p for p in styles if p in set(rows["player"])]
    counts = rows.groupby("element")["questions"].max()
    values = rows.set_index(["player", "element"])[value_column]
    series = [RadarSeries(name, [values.get((name, axis)) for axis in axes], styles[name]) for name in names]
    single = len(names) == 1
    return radar_chart(
        module.value.upper(),
        axes,
        series,
        width=width,
        height=height,
        legend=not single if legend is None else legend,
        filled=single,
        axis_notes=[f"n = {int(counts[a])}" for a in axes],
    )


def legend_chart(names: Sequence[str], styles: dict[str, PlayerStyle], *, width: float = 160) -> Drawing:
    """A stand-alone legend of players (line sample, marker, name), e.g. shared by several radars."""
    entries = [(name, styles[name]) for name in names]
    drawing = new_drawing(width, 12 * len(entries) + 2)
    _draw_legend(drawing, 0, drawing.height, entries, width)
    return drawing


# ----------------------------------------------------------------------------------- bar charts


def _nice_step(top: float, ticks: int = 5, integer: bool = False) -> float:
    raw = max(top, 1e-9) / ticks
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    return max(1, math.ceil(step)) if integer else step


def y_axis(
    drawing: Drawing,
    x0: float,
    y0: float,
    plot_w: float,
    plot_h: float,
    top: float,
    step: float,
    unit: str,
    caption: str,
) -> None:
    """Horizontal grid lines with tick labels and a rotated axis caption."""
    tick = 0.0
    while tick <= top + 1e-9:
        y = y0 + plot_h * tick / top
        drawing.add(Line(x0, y, x0 + plot_w, y, strokeColor=GRID if tick else GREY, strokeWidth=0.5))
        label = f"{tick:g}{unit}"
        drawing.add(text_at(x0 - 3, y - 2.4, label, size=SMALL_SIZE, colour=GREY, anchor="end"))
        tick += step
    vertical_caption = Group(text_at(0, 0, caption, size=SMALL_SIZE, colour=GREY, anchor="middle"))
    vertical_caption.transform = (0, 1, -1, 0, SMALL_SIZE + 1, y0 + plot_h / 2)  # rotated 90 degrees
    drawing.add(vertical_caption)


def round_votes_chart(
    tally: pd.DataFrame, styles: dict[str, PlayerStyle], *, title: str, width: float = 480, height: float = 165
) -> Drawing:
    """Votes per player in one round (``tally`` rows of that round), AI bars marked and labelled.

    A dashed line shows the votes each player would get if jurors picked at random.
    """
    drawing = new_drawing(width, height)
    drawing.add(text_at(0, height - TITLE_SIZE, title, size=TITLE_SIZE, bold=True))
    x0, y0 = 34, 24
    plot_w, plot_h = width - x0 - 4, height - y0 - TITLE_SIZE - 16
    cast = float(tally["votes"].sum())
    top_votes = max(float(tally["votes"].max()), 1.0)
    step = _nice_step(top_votes, integer=True)
    top = math.ceil(top_votes / step) * step
    y_axis(drawing, x0, y0, plot_w, plot_h, top, step, "", t("votes"))

    slot = plot_w / max(len(tally), 1)
    value_labels = []
    for index, row in enumerate(tally.itertuples(index=False)):
        style = styles[row.player]
        centre = x0 + slot * (index + 0.5)
        bar_w = min(slot * 0.6, 46)
        bar_h = plot_h * row.votes / top
        drawing.add(
            Rect(
                centre - bar_w / 2,
                y0,
                bar_w,
                bar_h,
                fillColor=style.colour,
                strokeColor=BLACK if style.is_ai else None,
                strokeWidth=1.2 if style.is_ai else 0,
            )
        )
        share = f"{row.votes:g} ({row.share_pct:.1f} %)" if cast else "0"
        if stringWidth(share, REGULAR, SMALL_SIZE) > slot - 4:  # narrow slots: the count alone
            share = f"{row.votes:g}"
        value_labels.append((centre, y0 + bar_h + 2.5, share))
        drawing.add(text_at(centre, y0 - 9, fit_text(row.player, slot - 4), anchor="middle", bold=style.is_ai))
        if style.is_ai:
            drawing.add(text_at(centre, y0 - 18, "AI", size=SMALL_SIZE, bold=True, colour=VERMILLION, anchor="middle"))
    if cast and len(tally):
        chance = cast / len(tally)
        y = y0 + plot_h * chance / top
        drawing.add(Line(x0, y, x0 + plot_w, y, strokeColor=GREY, strokeWidth=0.8, strokeDashArray=(3, 2)))
        # Explained in the title row: a label on the line itself would collide with some bar.
        caption = t("chance: {votes} votes per player", votes=f"{chance:.1f}")
        caption_x = width - stringWidth(caption, REGULAR, SMALL_SIZE)
        drawing.add(
            Line(
                caption_x - 20,
                height - 6,
                caption_x - 4,
                height - 6,
                strokeColor=GREY,
                strokeWidth=0.8,
                strokeDashArray=(3, 2),
            )
        )
        drawing.add(text_at(caption_x, height - 8.2, caption, size=SMALL_SIZE, colour=GREY))
    # Value labels go last, on a white patch, so the chance line never strikes through them.
    for x, y, text in value_labels:
        half = stringWidth(text, REGULAR, SMALL_SIZE) / 2 + 1
        drawing.add(Rect(x - half, y - 1.5, 2 * half, SMALL_SIZE + 1.5, fillColor=colors.white, strokeColor=None))
        drawing.add(text_at(x, y, text, size=SMALL_SIZE, anchor="middle"))
    return drawing


def detection_chart(
    rounds: pd.DataFrame, *, threshold_pct: float | None = None, width: float = 480, height: float = 200
) -> Drawing:
    """Detection % per round with 95 % Wilson whiskers, the chance level per round and the verdict.

    ``rounds`` needs round, detection_pct, chance_pct, ci_low, ci_high, ai_passed.  A round without
    votes has no bar.  ``threshold_pct`` draws the threshold rule's line.
    """
    drawing = new_drawing(width, height)
    x0, y0 = 34, 42
    plot_w, plot_h = width - x0 - 4, height - y0 - 12  # room above 100 % for a value label
    y_axis(drawing, x0, y0, plot_w, plot_h, 100, 25, " %", t("detection"))
    slot = plot_w / max(len(rounds), 1)

    def y_of(pct: float) -> float:
        return y0 + plot_h * pct / 100

    for index, row in enumerate(rounds.itertuples(index=False)):
        centre = x0 + slot * (index + 0.5)
        bar_w = min(slot * 0.55, 50)
        drawing.add(text_at(centre, y0 - 10, t("Round {round}", round=row.round), anchor="middle"))
        drawing.add(
            Line(
                centre - slot * 0.42,
                y_of(row.chance_pct),
                centre + slot * 0.42,
                y_of(row.chance_pct),
                strokeColor=BLACK,
                strokeWidth=1,
                strokeDashArray=(3, 2),
            )
        )
        if pd.isna(row.detection_pct):
            drawing.add(text_at(centre, y0 + 3, t("no votes"), size=SMALL_SIZE, colour=GREY, anchor="middle"))
            continue
        drawing.add(Rect(centre - bar_w / 2, y0, bar_w, y_of(row.detection_pct) - y0, fillColor=SKY, strokeColor=None))
        label_y = y_of(row.detection_pct)
        if not pd.isna(row.ci_low):
            low, high = y_of(row.ci_low), y_of(row.ci_high)
            drawing.add(Line(centre, low, centre, high, strokeColor=BLACK, strokeWidth=0.9))
            for y in (low, high):
                drawing.add(Line(centre - 4, y, centre + 4, y, strokeColor=BLACK, strokeWidth=0.9))
            label_y = high
        drawing.add(
            text_at(centre, label_y + 3, f"{row.detection_pct:.1f} %", size=SMALL_SIZE, bold=True, anchor="middle")
        )
        verdict = t("AI passed") if row.ai_passed else t("AI detected")
        drawing.add(
            text_at(
                centre,
                y0 - 19,
                verdict,
                size=SMALL_SIZE,
                colour=GREEN if row.ai_passed else VERMILLION,
                anchor="middle",
            )
        )
    if threshold_pct is not None:
        drawing.add(
            Line(
                x0,
                y_of(threshold_pct),
                x0 + plot_w,
                y_of(threshold_pct),
                strokeColor=VERMILLION,
                strokeWidth=0.8,
                strokeDashArray=(1, 2),
            )
        )
    detection_legend(drawing, x0, 6, threshold_pct)
    return drawing


def detection_legend(drawing: Drawing, x: float, y: float, threshold_pct: float | None) -> None:
    """One horizontal row explaining bar, whisker and reference lines."""
    drawing.add(Rect(x, y - 1, 9, 7, fillColor=SKY, strokeColor=None))
    x = _legend_caption(drawing, x + 12, y, t("detection (% of cast votes naming an AI)"))
    drawing.add(Line(x + 4, y - 2, x + 4, y + 7, strokeColor=BLACK, strokeWidth=0.9))
    x = _legend_caption(drawing, x + 8, y, t("95 % Wilson CI"))
    drawing.add(Line(x, y + 2.5, x + 16, y + 2.5, strokeColor=BLACK, strokeDashArray=(3, 2)))
    x = _legend_caption(drawing, x + 19, y, t("chance level (AI players / players)"))
    if threshold_pct is not None:
        drawing.add(Line(x, y + 2.5, x + 16, y + 2.5, strokeColor=VERMILLION, strokeDashArray=(1, 2)))
        _legend_caption(drawing, x + 19, y, t("threshold {threshold} %", threshold=f"{threshold_pct:g}"))


def _legend_caption(drawing: Drawing, x: float, y: float, text: str) -> float:
    """Draw a legend caption at ``x`` and return where the next legend entry starts."""
    drawing.add(text_at(x, y, text, size=SMALL_SIZE))
    return x + stringWidth(text, REGULAR, SMALL_SIZE) + 12


# ------------------------------------------------------------------------------ set composition


def element_chart(
    counts: pd.DataFrame,
    styles: dict[str, PlayerStyle] | None = None,
    per_player: pd.DataFrame | None = None,
    *,
    width: float = 480,
) -> Drawing:
    """How often each element is tagged in the set, and, per player, how many of those were right.

    ``counts``: module, element, questions (every taxonomy element; unused optional extensions are
    left out).  ``per_player``: player, element, questions, correct (a profile element table); its
    columns show correct as a solid bar and missed as a light tint of the player's colour.
    """
    extensions = {e for names in EXTENSIONS.values() for e in names}
    rows = counts[~(counts["element"].isin(extensions) & (counts["questions"] == 0))]
    players = [p for p in (styles or {}) if per_player is not None and p in set(per_player["player"])]
    row_h, header_h, label_w, freq_w = 11.0, 22.0, 78.0, 120.0
    modules = list(dict.fromkeys(rows["module"]))
    height = header_h + row_h * (len(rows) + len(modules)) + 20
    drawing = new_drawing(width, height)
    column_w = (width - label_w - freq_w) / len(players) if players else 0
    top_count = max(int(rows["questions"].max()), 1)
    table = per_player.set_index(["player", "element"]) if players else None

    y_header = height - 10
    drawing.add(text_at(label_w, y_header, t("questions tagged"), size=SMALL_SIZE, bold=True))
    for index, player in enumerate(players):
        x = label_w + freq_w + index * column_w
        drawing.add(
            text_at(
                x,
                y_header,
                fit_text(styles[player].label(player), column_w - 6, SMALL_SIZE, BOLD),
                size=SMALL_SIZE,
                bold=True,
            )
        )

    y = height - header_h
    for module in modules:
        y -= row_h
        drawing.add(text_at(0, y + 2.5, module.upper(), size=SMALL_SIZE, bold=True, colour=GREY))
        drawing.add(Line(0, y + row_h - 1, width, y + row_h - 1, strokeColor=GRID, strokeWidth=0.5))
        for row in rows[rows["module"] == module].itertuples(index=False):
            y -= row_h
            drawing.add(text_at(label_w - 4, y + 2.5, row.element, anchor="end"))
            bar_max = freq_w - 22
            drawing.add(
                Rect(label_w, y + 1.5, bar_max * row.questions / top_count, row_h - 3, fillColor=GREY, strokeColor=None)
            )
            drawing.add(
                text_at(label_w + bar_max * row.questions / top_count + 3, y + 2.5, str(row.questions), size=SMALL_SIZE)
            )
            for index, player in enumerate(players):
                _stacked_cell(
                    drawing,
                    label_w + freq_w + index * column_w,
                    y,
                    column_w - 10,
                    top_count,
                    table,
                    player,
                    row.element,
                    styles[player],
                )
    _element_legend(drawing, players, styles, label_w)
    return drawing


def _stacked_cell(
    drawing: Drawing,
    x: float,
    y: float,
    cell_w: float,
    top_count: int,
    table: pd.DataFrame,
    player: str,
    element: str,
    style: PlayerStyle,
) -> None:
    if (player, element) not in table.index:
        return
    cell = table.loc[(player, element)]
    correct, asked = int(cell["correct"]), int(cell["questions"])
    # Missed = the light remainder of the asked bar, so solid + light = questions put to the player.
    drawing.add(Rect(x, y + 1.5, cell_w * asked / top_count, 8, fillColor=lighter(style.colour), strokeColor=None))
    drawing.add(Rect(x, y + 1.5, cell_w * correct / top_count, 8, fillColor=style.colour, strokeColor=None))


def _element_legend(drawing: Drawing, players: Sequence[str], styles: dict[str, PlayerStyle] | None, x: float) -> None:
    drawing.add(Rect(x, 3, 9, 7, fillColor=GREY, strokeColor=None))
    x = _legend_caption(drawing, x + 12, 4, t("questions tagged with the element"))
    if players:
        colour = styles[players[0]].colour
        drawing.add(Rect(x, 3, 9, 7, fillColor=colour, strokeColor=None))
        x = _legend_caption(drawing, x + 12, 4, t("answered correctly"))
        drawing.add(Rect(x, 3, 9, 7, fillColor=lighter(colour), strokeColor=None))
        _legend_caption(drawing, x + 12, 4, t("missed (per player, same scale)"))
