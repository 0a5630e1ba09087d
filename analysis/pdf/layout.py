"""The page (A4, its margins, the frame's width) and flowables that place others: a grid of radars, a block kept
whole on one page."""

from __future__ import annotations

from reportlab.lib.pagesizes import A4, landscape
from reportlab.lib.units import mm
from reportlab.platypus import Flowable, Table, TableStyle

from ..fonts import REGULAR

PAGE = A4
MARGIN = 18 * mm
RADAR_MIN_SCALE = 0.7  # a grid of radars shrinks this far to stay on the page with the table above it


def frame_width(orientation: str = "portrait") -> float:
    size = landscape(PAGE) if orientation == "landscape" else PAGE
    return size[0] - 2 * MARGIN


def radar_grid(radars: list[Flowable], last_cell: list[Flowable], width: float) -> Table:
    """Radars two by two, the last cell (legend, caption) filling the gap the third radar leaves."""
    cells = radars + [last_cell]
    grid = Table([cells[i : i + 2] for i in range(0, len(cells), 2)], colWidths=[width / 2] * 2, hAlign="LEFT")
    grid.setStyle(
        TableStyle(
            [
                ("FONTNAME", (0, 0), (-1, -1), REGULAR),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("VALIGN", (-1, -1), (-1, -1), "MIDDLE"),
                ("LEFTPADDING", (0, 0), (-1, -1), 0),
                ("RIGHTPADDING", (0, 0), (-1, -1), 0),
            ]
        )
    )
    return grid


class FitOnPage(Flowable):
    """``content`` kept whole: drawn in the space left on the page, scaled down to ``min_scale`` if need be;
    when even that does not fit, whole on the next page (a grid of radars split row by row left a page
    holding one radar and nothing else)."""

    def __init__(self, content: Flowable, min_scale: float):
        super().__init__()
        self.content, self.min_scale, self.scale = content, min_scale, 1.0

    def wrap(self, available_width: float, available_height: float) -> tuple[float, float]:
        width, height = self.content.wrap(available_width, available_height)
        fits = min(1.0, available_height / height) if height else 1.0
        self.scale = fits if fits >= self.min_scale else 1.0  # too small: the frame moves it to the next page
        self.width, self.height = width * self.scale, height * self.scale
        return self.width, self.height

    def split(self, available_width: float, available_height: float) -> list[Flowable]:
        return []  # never in pieces

    def draw(self) -> None:
        self.canv.saveState()
        self.canv.scale(self.scale, self.scale)
        self.content.drawOn(self.canv, 0, 0)
        self.canv.restoreState()
