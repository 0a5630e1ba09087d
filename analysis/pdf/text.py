"""User text in the PDFs: made safe for Paragraph markup, gathered, and held against the embedded font."""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterable, Sequence
from xml.sax.saxutils import escape

from ..fonts import BOLD, REGULAR, missing_glyphs

MAX_MISSING_LISTED = 20  # characters the font cannot show, listed on the cover


def markup(text: object) -> str:
    """User text made safe for Paragraph markup: ``&``, ``<``, ``>`` escaped, newlines kept."""
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return ""
    return escape(str(text)).replace("\n", "<br/>")


def user_texts(*groups: Iterable) -> set[str]:
    """The user text of some values (None and NaN left out), as a set of strings."""
    return {
        str(value)
        for group in groups
        for value in group
        if value is not None and not (isinstance(value, float) and math.isnan(value))
    }


def missing_characters(texts: Iterable[str]) -> list[str]:
    """The characters of ``texts`` that the regular or the bold face cannot draw, in code point order."""
    characters = "".join(set("".join(texts)))
    return sorted(missing_glyphs(characters, REGULAR) | missing_glyphs(characters, BOLD))


def character_names(characters: Sequence[str], limit: int = MAX_MISSING_LISTED) -> str:
    """``U+1F600 GRINNING FACE, ...``: characters named by code point and Unicode name (the font cannot draw them)."""
    named = [f"U+{ord(ch):04X} {unicodedata.name(ch, '')}".rstrip() for ch in characters[:limit]]
    more = len(characters) - limit
    return ", ".join(named) + (f" and {more} more" if more > 0 else "")
