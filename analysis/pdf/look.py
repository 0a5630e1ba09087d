"""Paragraph styles and player styles shared by every section of one PDF."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from reportlab.lib.enums import TA_CENTER, TA_RIGHT
from reportlab.lib.styles import ParagraphStyle
from reportlab.platypus import Paragraph

from .. import charts
from ..fonts import BOLD, REGULAR, register_fonts
from .text import markup


@dataclass(frozen=True)
class Look:
    """Paragraph styles and player styles shared by every section of one report."""

    text: dict[str, ParagraphStyle]
    players: dict[str, charts.PlayerStyle]

    @classmethod
    def of_players(cls, roster: Iterable[tuple[str, str]]) -> Look:
        """The look of a report on these players (``(name, kind)`` pairs); registers the fonts."""
        register_fonts()
        return cls(paragraph_styles(), charts.player_styles(roster))

    def para(self, text: str, style: str = "body") -> Paragraph:
        return Paragraph(text, self.text[style])

    def player(self, name: str) -> str:
        """A player's name as markup, bold with "(AI)" for AI players."""
        style = self.players.get(name)
        return f"<b>{markup(name)} (AI)</b>" if style and style.is_ai else markup(name)


def paragraph_styles() -> dict[str, ParagraphStyle]:
    base = ParagraphStyle("body", fontName=REGULAR, fontSize=9, leading=12, spaceAfter=4)
    cell = ParagraphStyle("cell", base, fontSize=7.5, leading=9.2, spaceAfter=0)
    return {
        "body": base,
        # Sub- and superscripts in the method note need more room between lines.
        "method": ParagraphStyle("method", base, leading=14.5),
        "title": ParagraphStyle("title", base, fontName=BOLD, fontSize=16, leading=20, spaceAfter=8),
        "h1": ParagraphStyle(
            "h1", base, fontName=BOLD, fontSize=13, leading=16, spaceBefore=8, spaceAfter=6, keepWithNext=True
        ),
        "h2": ParagraphStyle(
            "h2", base, fontName=BOLD, fontSize=10.5, leading=13, spaceBefore=6, spaceAfter=4, keepWithNext=True
        ),
        "caption": ParagraphStyle(
            "caption", base, fontSize=7.5, leading=9.5, textColor=charts.GREY, spaceBefore=2, spaceAfter=8
        ),
        "cell": cell,
        "cell_right": ParagraphStyle("cell_right", cell, alignment=TA_RIGHT),
        # A hanging indent keeps wrapped answer text clear of the tick or cross in front of it.
        "answer": ParagraphStyle("answer", cell, leftIndent=9, firstLineIndent=-9),
        "head": ParagraphStyle("head", cell, fontName=BOLD),
        "head_right": ParagraphStyle("head_right", cell, fontName=BOLD, alignment=TA_RIGHT),
        "head_centre": ParagraphStyle("head_centre", cell, fontName=BOLD, alignment=TA_CENTER),
    }
