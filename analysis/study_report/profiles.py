"""CogME profiles by developmental stage and by AI program: accuracy per session and pooled, radars overlaid per
group, and the counts behind them."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from reportlab.graphics.shapes import Drawing
from reportlab.platypus import Flowable, PageBreak, Spacer

from .. import charts
from ..pdf.layout import RADAR_MIN_SCALE, FitOnPage, frame_width, radar_grid
from ..pdf.look import Look
from ..pdf.numbers import number_text
from ..pdf.tables import Column, block_starts, ruled_table
from ..pdf.text import markup
from ..study import ALL, ELEMENT_RANK
from ..taxonomy import Module, all_elements
from ..words import t
from .labels import chart_label, group_label, nothing_note, session_label

GROUPS_PER_TABLE = 5  # per-element tables: more groups side by side squeeze each cell to a word per line


def _group_styles(order: Sequence[str], by: str) -> dict[str, charts.PlayerStyle]:
    """Stages in the human colours; programs in the AI's (dashed, square-marked), then, beyond its two
    colours, in the other palette colours, square-marked too, so each program stays apart."""
    if by == "stage":
        return charts.player_styles((label, "human") for label in order)
    colours = charts.AI_COLOURS + charts.HUMAN_COLOURS
    dashes = (charts.AI_DASH, charts.HUMAN_REPEAT_DASH)  # a second round of the colours is dotted
    return {
        label: charts.PlayerStyle(colours[index % len(colours)], True, dashes[index // len(colours) % len(dashes)], 2.0)
        for index, label in enumerate(order)
    }


def profiles_section(
    elements: pd.DataFrame, groups: pd.DataFrame, by: str, order: list[str], look: Look
) -> list[Flowable]:
    """One group kind (stages or programs): the groups' overall accuracy per session and pooled, the pooled
    radars overlaid (a polygon per group), and the per-element counts behind them."""
    width = frame_width()
    heading = t("CogME profiles by developmental stage") if by == "stage" else t("CogME profiles by AI program")
    story: list[Flowable] = [PageBreak(), look.para(heading, "h1")]
    if not order:
        return story + nothing_note(look, t("No answers to profile."))
    story.append(
        look.para(
            t(
                "Accuracy = correct / attempts, where an attempt is one answer (no answer counts as wrong) to a "
                "question tagged with the element. Elements are pooled, not questions: each answer counts under its "
                "own session's tags, so sessions with other banks add up. The radars plot accuracy, unweighted: the "
                "sessions' own reports may score with a weighted method."
            )
            if by == "stage"
            else t(
                "AI answers grouped by the program that gave them (from each answer's provenance), whichever AI "
                "player they answered for. Accuracy = correct / attempts; elements pooled over the sessions, each "
                "answer under its own session's tags. The radars plot accuracy, unweighted: the sessions' own "
                "reports may score with a weighted method."
            )
        )
    )
    by_group = groups.assign(rank=groups[by].map({label: index for index, label in enumerate(order)}))
    by_group = by_group.sort_values("rank", kind="stable")
    starts = block_starts(list(by_group[by]))
    rows = [
        [
            group_label(row[by]) if start else "",
            session_label(row["session"]),
            str(row["players"]),
            str(row["attempts"]),
            str(row["correct"]),
            number_text(row["accuracy_pct"]),
        ]
        for row, start in zip(by_group.to_dict("records"), starts)
    ]
    story.append(
        ruled_table(
            look,
            [
                Column(t("Stage") if by == "stage" else t("Program"), 0.3),
                Column(t("Session"), 0.14),
                Column(t("Players"), 0.12, True),
                Column(t("Attempts"), 0.14, True),
                Column(t("Correct"), 0.14, True),
                Column(t("Accuracy %"), 0.16, True),
            ],
            rows,
            width,
            block_starts=starts,
        )
    )
    pooled = elements[elements["session"] == ALL]
    styles = _group_styles(order, by)
    radars = [_module_radar(pooled, module, by, order, styles, width / 2) for module in Module]
    radars = [radar for radar in radars if radar is not None]
    key = [
        charts.legend_chart([chart_label(label) for label in order], _renamed(styles), width=width / 2 - 30),
        Spacer(1, 8),
        look.para(
            t(
                "Accuracy % per element, all sessions pooled; rings at 0, 25, 50, 75 and 100 %; n = attempts of "
                "all the groups on the element."
            ),
            "caption",
        ),
    ]
    story += [Spacer(1, 10), FitOnPage(radar_grid(radars, key, width), min_scale=RADAR_MIN_SCALE)]
    return story + _element_counts(pooled, by, order, look, width)


def _renamed(styles: dict[str, charts.PlayerStyle]) -> dict[str, charts.PlayerStyle]:
    return {chart_label(label): style for label, style in styles.items()}


def _module_radar(
    pooled: pd.DataFrame, module: Module, by: str, order: list[str], styles: dict, width: float
) -> Drawing | None:
    """The radar of one module: one polygon per group (its pooled accuracy), None when no question carried it."""
    rows = pooled[pooled["module"] == module.value]
    if rows.empty:
        return None
    axes = [element for element in all_elements(module) if element in set(rows["element"])]
    accuracy = rows.set_index([by, "element"])["accuracy_pct"]
    attempts = rows.groupby("element")["attempts"].sum()
    series = [
        charts.RadarSeries(chart_label(label), [accuracy.get((label, axis)) for axis in axes], styles[label])
        for label in order
        if label in set(rows[by])
    ]
    return charts.radar_chart(
        module.value.upper(),
        axes,
        series,
        width=width,
        height=225,
        legend=False,
        axis_notes=[f"n = {int(attempts[axis])}" for axis in axes],
    )


def _element_counts(pooled: pd.DataFrame, by: str, order: list[str], look: Look, width: float) -> list[Flowable]:
    """The numbers behind the radars: per element and group, accuracy and correct / attempts (all sessions);
    a table per :data:`GROUPS_PER_TABLE` groups."""
    cells = pooled.set_index([by, "element"])
    elements = pooled.drop_duplicates("element")
    elements = elements.assign(rank=elements["element"].map(ELEMENT_RANK)).sort_values("rank")
    starts = block_starts(list(elements["module"]))
    story: list[Flowable] = [look.para(t("Per element, all sessions"), "h2")]
    for first in range(0, len(order), GROUPS_PER_TABLE):
        block = order[first : first + GROUPS_PER_TABLE]
        rows = [
            [element.module.upper() if start else "", markup(element.element)]
            + [_element_cell(cells, label, element.element) for label in block]
            for element, start in zip(elements.itertuples(index=False), starts)
        ]
        each = 0.72 / len(block)
        columns = [Column(t("Module"), 0.12), Column(t("Element"), 0.16)]
        story += [
            ruled_table(
                look,
                columns + [Column(group_label(label), each, True) for label in block],
                rows,
                width,
                block_starts=starts,
            ),
            Spacer(1, 6),
        ]
    return story + [look.para(t("Accuracy % (correct / attempts); – where the group had no attempt."), "caption")]


def _element_cell(cells: pd.DataFrame, label: str, element: str) -> str:
    if (label, element) not in cells.index:
        return "–"
    cell = cells.loc[(label, element)]
    return f"{number_text(cell['accuracy_pct'])} ({cell['correct']}/{cell['attempts']})"
