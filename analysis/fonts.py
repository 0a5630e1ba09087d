"""The report font: NanumGothic, vendored in ``analysis/fonts`` and embedded in every PDF.

ReportLab's built-in Helvetica has no Hangul, and a laptop without fonts-nanum would print tofu
boxes for a Korean player name, so the reports carry their own TrueType font (SIL OFL, see
``fonts/OFL.txt``).  ReportLab embeds only the glyphs a document uses.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from reportlab.lib.fonts import addMapping
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont

FONT_DIR = Path(__file__).with_name("fonts")
REGULAR = "NanumGothic"
BOLD = "NanumGothic-Bold"
_FILES = {REGULAR: "NanumGothic.ttf", BOLD: "NanumGothicBold.ttf"}


@cache
def register_fonts() -> tuple[str, str]:
    """Register the regular and bold faces with ReportLab (once per process) and return their names.

    The family mapping lets ``<b>`` in Paragraph markup switch to the bold file; the fonts have no
    italic, so italic maps to the upright faces rather than failing.
    """
    for name, filename in _FILES.items():
        font = TTFont(name, str(FONT_DIR / filename))
        _draw_comparisons_as_math(font.face)
        pdfmetrics.registerFont(font)
    for italic in (0, 1):
        addMapping(REGULAR, 0, italic, REGULAR)
        addMapping(REGULAR, 1, italic, BOLD)
    return REGULAR, BOLD


# NanumGothic draws ASCII "<" and ">" as CJK angle brackets (like 〈 〉), so "p < 0.001" reads as
# "p ‹ 0.001"; its glyphs for U+2039/U+203A are the plain mathematical shapes.
MATH_COMPARISONS = {"<": "\u2039", ">": "\u203a"}


def _draw_comparisons_as_math(face) -> None:
    """Map "<" and ">" to the font's mathematical-looking glyphs.

    Only the drawing changes: the PDF's ToUnicode map still says U+003C/U+003E, so copied or extracted
    text (pdftotext) is the "<" the source had.
    """
    for char, lookalike in MATH_COMPARISONS.items():
        face.charToGlyph[ord(char)] = face.charToGlyph[ord(lookalike)]
        face.charWidths[ord(char)] = face.charWidths[ord(lookalike)]


def missing_glyphs(text: str, font_name: str = REGULAR) -> set[str]:
    """The characters of ``text`` the registered font cannot draw (whitespace ignored)."""
    register_fonts()
    char_to_glyph = pdfmetrics.getFont(font_name).face.charToGlyph
    return {ch for ch in text if not ch.isspace() and ord(ch) not in char_to_glyph}
