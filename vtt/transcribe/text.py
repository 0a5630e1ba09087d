"""What a backend heard, made safe to keep and show: control characters out, one space between words, a cap.

A backend's text is data from outside (a server on the network, or a recogniser): it may carry terminal escapes,
NULs, lone surrogates (JSON can encode them; a database refuses them), bidirectional overrides that make a line read
as something else, or megabytes.  None of that belongs in a suggestion the host reads and may keep as an answer.
"""

from __future__ import annotations

import unicodedata

from ..protocol.vocabulary import MAX_TRANSCRIPT  # characters: minutes of a child's speech are well under it

# Format characters that reorder or hide text (bidi embeddings, overrides and isolates; the marks): a suggestion
# is shown as it reads.  Joiners stay: scripts and emoji need them.
_REORDERING = {*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C}


def clean(text: str, limit: int = MAX_TRANSCRIPT) -> str:
    """``text`` without control, surrogate, unassigned or reordering characters (each becomes a space), its words
    one space apart, cut at ``limit`` characters (at a word's end when one is near, with "…")."""
    kept = "".join(" " if _unsafe(char) else char for char in text)
    words = " ".join(kept.split())
    if len(words) <= limit:
        return words
    cut = words[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut) + "…"


def _unsafe(char: str) -> bool:
    category = unicodedata.category(char)
    return category in ("Cc", "Cs", "Cn", "Co") or ord(char) in _REORDERING


def shown(raw: bytes, limit: int = 300) -> str:
    """The start of a server's reply for an error message: decoded, cleaned, short."""
    return clean(raw[: limit * 4].decode("utf-8", "replace"), limit)


__all__ = ["MAX_TRANSCRIPT", "clean", "shown"]
