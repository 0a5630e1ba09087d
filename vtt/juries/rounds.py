"""The rounds of a finished session that a juror beyond the room can judge, and the refusals both juries share."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy.orm import Session

from ..engine.audiences import judgeable_rounds
from ..engine.state import LiveState
from ..models import SessionStatus, VttSession
from ..persistence.load import load_state


class JuryError(ValueError):
    """A jury that cannot be made, joined or asked: ``message`` says why (naming the option), ``code`` for programs;
    nothing was written."""

    def __init__(self, message: str, code: str = "refused"):
        super().__init__(message)
        self.message, self.code = message, code


def finished_state(db: Session, vtt_session: VttSession) -> tuple[LiveState, list[int]]:
    """The finished session's state and its judgeable rounds (dealt aliases and a revealed answer); refuses a
    session that has not finished or has nothing to judge."""
    if vtt_session.status is not SessionStatus.FINISHED:
        raise JuryError(
            f"session {vtt_session.join_code} has not finished ({vtt_session.status.value}): "
            "other juries judge a finished session",
            "not_finished",
        )
    state = load_state(db, vtt_session.id)
    judgeable = judgeable_rounds(state)
    if not judgeable:
        raise JuryError(
            f"session {vtt_session.join_code} has no round with aliases and revealed answers to judge",
            "nothing_to_judge",
        )
    return state, judgeable


def chosen_rounds(given: str | Iterable[int] | None, judgeable: list[int]) -> list[int] | None:
    """``--rounds 1,3`` (text or numbers) checked against the judgeable rounds; None when none are given (every
    round)."""
    if given is None or given == "":
        return None
    if isinstance(given, str):
        try:
            numbers = [int(part) for part in given.replace(" ", "").split(",") if part]
        except ValueError:
            raise JuryError(f"--rounds: round numbers separated by commas, not {given!r}", "bad_rounds") from None
    else:
        numbers = list(given)
    wrong = sorted(set(numbers) - set(judgeable))
    if wrong or not numbers:
        raise JuryError(
            f"--rounds: {', '.join(map(str, wrong)) or 'none given'} cannot be judged; "
            f"the judgeable rounds are {', '.join(map(str, judgeable))}",
            "bad_rounds",
        )
    return sorted(set(numbers))
