"""The checks the handlers share: each refuses with its code and a sentence for people.

They check what a client message's schema cannot (the phase, a bound that depends on the session, a text's
content after trimming) and the arguments of the actions that reach the engine from the server's own views.
"""

from __future__ import annotations

from typing import Any

from ..kinds import Phase
from ..protocol.text import unstorable
from ..protocol.vocabulary import MAX_EXTEND_SECONDS, MAX_TEXT
from .actions import Refusal
from .state import LiveState


def require(condition: bool, code: str, message: str) -> None:
    if not condition:
        raise Refusal(code, message)


def in_phase(state: LiveState, *phases: Phase, doing: str) -> None:
    if state.phase not in phases:
        raise Refusal("wrong_phase", f"cannot {doing} now: the session is at {state.phase.value.replace('_', ' ')}")


def seconds_given(value: Any, default: int | None) -> int | None:
    if value is None:
        return default
    require(
        isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_EXTEND_SECONDS,
        "bad_seconds",
        f"seconds must be a whole number from 1 to {MAX_EXTEND_SECONDS}",
    )
    return value


def trimmed_text(value: Any, name: str, *, required: bool = False) -> str:
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
