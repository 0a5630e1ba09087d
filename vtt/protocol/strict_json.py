"""JSON as a model may send it, read strictly: the one reader of every model's output (the AI jurors' replies, the
judge's, the chat-completions bodies :mod:`vtt.model_calls.http` reads, a transcription server's reply).

Python's ``json`` reads more than JSON: ``NaN``, ``Infinity`` and ``-Infinity`` become floats, a number such as
``1e999`` becomes ``inf``, and a value nested a few thousand deep raises RecursionError instead of ValueError.  None
of these is a vote, a score or a chat completion, and a float that is not finite breaks every comparison after it.
This reader refuses them with :class:`JsonRefused` (a ValueError) naming what it found, before decoding anything:

* ``NaN``, ``Infinity``, ``-Infinity`` and any number that is not finite as a float (``1e999``, ``-1e999``);
* nesting deeper than ``MAX_DEPTH`` (arrays and objects), measured by a scan that recurses into nothing;
* a text longer than ``max_chars``.
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_DEPTH = 64  # levels of arrays and objects: a chat completion nests about 6, a juror's verdict 1
MAX_CHARS = 8 << 20  # characters of one text read (a chat-completions body is read to at most a few MiB)


class JsonRefused(ValueError):
    """JSON this reader will not decode; the message says what was found."""


def _constant(name: str) -> Any:
    raise JsonRefused(f"{name} is not a number JSON allows")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonRefused(f"{text} is not a finite number")
    return value


_DECODER = json.JSONDecoder(parse_constant=_constant, parse_float=_finite)


def too_deep(text: str, start: int = 0, max_depth: int = MAX_DEPTH) -> bool:
    """Whether the JSON value starting at ``start`` nests deeper than ``max_depth`` (the scan stops where the value
    ends, or at the first level too many; a bracket inside a string does not count)."""
    depth, inside, escaped = 0, False, False
    for index in range(start, len(text)):
        char = text[index]
        if inside:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                inside = False
        elif char == '"':
            inside = True
        elif char in "[{":
            depth += 1
            if depth > max_depth:
                return True
        elif char in "]}":
            depth -= 1
            if depth <= 0:
                return False
    return False


def _deep(max_depth: int) -> JsonRefused:
    return JsonRefused(f"it is nested more than {max_depth} levels deep")


def loads(text: str | bytes, *, max_depth: int = MAX_DEPTH, max_chars: int = MAX_CHARS) -> Any:
    """``text`` as one JSON value; JsonRefused for what the module refuses, ValueError when it is not JSON."""
    if isinstance(text, bytes | bytearray):
        text = text.decode("utf-8")
    if len(text) > max_chars:
        raise JsonRefused(f"it is longer than {max_chars:,} characters")
    begins = len(text) - len(text.lstrip())
    if too_deep(text, begins, max_depth):
        raise _deep(max_depth)
    value, end = _DECODER.raw_decode(text, begins)
    if text[end:].strip():
        raise ValueError(f"extra data after the JSON value at character {end}")
    return value


def decode_at(text: str, start: int, *, max_depth: int = MAX_DEPTH) -> tuple[Any, int]:
    """The JSON value starting at ``start`` of ``text`` and where it ends (``json.JSONDecoder.raw_decode``, strict)."""
    if too_deep(text, start, max_depth):
        raise _deep(max_depth)
    return _DECODER.raw_decode(text, start)


def refusal(value: Any, max_depth: int = MAX_DEPTH, depth: int = 0) -> str | None:
    """What this reader would refuse in ``value``, read by another parser (``ast.literal_eval``): the first number
    that is not finite, or nesting too deep; None when there is nothing."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value!r} is not a finite number"
    if isinstance(value, dict | list | tuple | set):
        if depth >= max_depth:
            return f"it is nested more than {max_depth} levels deep"
        items = list(value.keys()) + list(value.values()) if isinstance(value, dict) else list(value)
        for item in items:
            problem = refusal(item, max_depth, depth + 1)
            if problem:
                return problem
    return None
