"""Ruled tables (booktabs style: rules above, below the header and at the end; no verticals) and their columns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reportlab.lib import colors
from reportlab.platypus import Table, TableStyle

from .. import charts
from ..fonts import REGULAR
from .look import Look


@dataclass(frozen=True)
class Column:
    header: str
    width: float  # share of the width given to the table (which is as wide as its shares add up to)
    numeric: bool = False  # right-aligned
    style: str | None = None  # the body cells' paragraph style, when not the plain cell

    @property
    def body_style(self) -> str:
        return self.style or ("cell_right" if self.numeric else "cell")


def ruled_table(
    look: Look,
    columns: Sequence[Column],
    rows: Sequence[Sequence[str]],
    width: float,
    zebra: bool = False,
    header: bool = True,
    block_starts: Sequence[bool] = (),
) -> Table:
    """A booktabs-style table (rules above, below the header and at the end; no verticals).

    Cells are markup strings (user text already passed through :func:`markup`); they wrap.
    Without ``header`` it is a key/value box: the column headers are not shown.  ``block_starts``
    (one flag per body row, see :func:`block_starts`): a thin rule above each block but the first.
    """
    head = [[look.para(c.header, "head_right" if c.numeric else "head") for c in columns]] if header else []
    body = [[look.para(cell, c.body_style) for c, cell in zip(columns, row)] for row in rows]
    table = Table(head + body, colWidths=[c.width * width for c in columns], repeatRows=len(head), hAlign="LEFT")
    commands = [
        ("LINEABOVE", (0, 0), (-1, 0), 0.9, colors.black),
        ("LINEBELOW", (0, -1), (-1, -1), 0.9, colors.black),
        ("FONTNAME", (0, 0), (-1, -1), REGULAR),  # the default, Helvetica, would be referenced unembedded
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ("TOPPADDING", (0, 0), (-1, -1), 1.6),
        ("BOTTOMPADDING", (0, 0), (-1, -1), 1.6),
        ("LEFTPADDING", (0, 0), (-1, -1), 3),
        ("RIGHTPADDING", (0, 0), (-1, -1), 3),
    ]
    if header:
        commands.append(("LINEBELOW", (0, 0), (-1, 0), 0.5, colors.black))
    if zebra:
        commands.append(("ROWBACKGROUNDS", (0, 1), (-1, -1), [None, colors.HexColor("#F2F2F2")]))
    commands += [
        ("LINEABOVE", (0, row + len(head)), (-1, row + len(head)), 0.3, charts.GRID)
        for row, start in enumerate(block_starts)
        if start and row
    ]
    table.setStyle(TableStyle(commands))
    return table


def block_starts(keys: Sequence) -> list[bool]:
    """Whether each row starts a block of equal consecutive keys (shows the key, gets a rule above)."""
    return [index == 0 or key != keys[index - 1] for index, key in enumerate(keys)]
