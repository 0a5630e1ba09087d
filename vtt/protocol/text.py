"""Which text the database can keep: valid UTF-8 and no NUL.

JSON can carry a lone surrogate (``"\\ud800"``) that no UTF-8 encoder accepts, and a NUL that PostgreSQL
refuses in text; both pass a length check.  Every text a client sends is checked here before it reaches a
transaction, so that one client's bad text is refused alone instead of failing the batch it was written in.
"""

from __future__ import annotations

from typing import Any

MAX_DEPTH = 16  # how deeply a client's message may nest (the deepest real one, a provenance's settings, is ~4)


def unstorable(text: str) -> str | None:
    """Why ``text`` cannot be stored, or None."""
    if "\x00" in text:
        return "contains a NUL character"
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as error:
            return f"contains {text[error.start]!r}, which is not a character (a lone surrogate)"
    return None


def first_unstorable(value: Any, where: str = "message", depth: int = 0) -> str | None:
    """The first problem in ``value`` (a decoded JSON message: its keys and texts), naming where it is."""
    if isinstance(value, str):
        problem = unstorable(value)
        return f"field '{where}' {problem}" if problem else None
    if depth >= MAX_DEPTH and isinstance(value, (dict, list)):
        return f"field '{where}' is nested more than {MAX_DEPTH} levels deep"
    if isinstance(value, dict):
        for key, item in value.items():
            shown = _shown(key) if isinstance(key, str) else str(key)
            path = f"{where}.{shown}" if where != "message" else shown
            problem = first_unstorable(key, path, depth + 1) if isinstance(key, str) else None
            problem = problem or first_unstorable(item, path, depth + 1)
            if problem:
                return problem
    elif isinstance(value, list):
        for index, item in enumerate(value):
            problem = first_unstorable(item, f"{where}.{index}", depth + 1)
            if problem:
                return problem
    return None


def _shown(text: str) -> str:
    """``text`` safe to put in a reply: what cannot be encoded is written as an escape."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")
