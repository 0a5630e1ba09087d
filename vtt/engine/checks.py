"""The checks the handlers share: each refuses with its code and a sentence for people.

A client message's fields are checked once, by its schema (at the socket, ``vtt.protocol.messages.parse_action``;
for the server's callers, ``vtt.engine.actions.read_args``).  These check what a schema cannot: the phase, a bound
that depends on the session, a text left empty once trimmed, and the fields of the actions that no client message
carries (the server's own: an upload, a transcription, an open join).
"""

from __future__ import annotations

from typing import Any

from ..kinds import Phase
from ..protocol.text import unstorable
from ..protocol.vocabulary import MAX_TEXT
from .actions import Refusal
from .state import LiveState


def require(condition: bool, code: str, message: str) -> None:
    if not condition:
        raise Refusal(code, message)


def in_phase(state: LiveState, *phases: Phase, doing: str) -> None:
    if state.phase not in phases:
        raise Refusal("wrong_phase", f"cannot {doing} now: the session is at {state.phase.value.replace('_', ' ')}")


def filled(value: str | None, name: str) -> str:
    """A text field its schema has read (a string within bounds, or None), trimmed: refused when nothing is left."""
    given = (value or "").strip()
    require(bool(given), "empty", f"{name} is empty")
    return given


def trimmed_text(value: Any, name: str, *, required: bool = False) -> str:
    """A text no schema has read (the server's own actions): a string within bounds, storable, once trimmed."""
    given = "" if value is None else value
    require(isinstance(given, str), "bad_field", f"{name} must be text")
    given = given.strip()
    require(len(given) <= MAX_TEXT, "too_long", f"{name} is longer than {MAX_TEXT} characters")
    require(bool(given) or not required, "empty", f"{name} is empty")
    problem = unstorable(given)
    require(problem is None, "bad_text", f"{name} {problem}")
    return given


def whole_number(value: Any, name: str, low: int, high: int, *, optional: bool = True) -> int | None:
    if value is None and optional:
        return None
    require(
        isinstance(value, int) and not isinstance(value, bool) and low <= value <= high,
        "bad_field",
        f"{name} must be a whole number from {low} to {high}",
    )
    return value
