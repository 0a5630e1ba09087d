"""The rounds of a finished session that a juror beyond the room can judge, and the refusals both juries share.

A round cut short (begun, but stopped by the host before its vote opened: the live jury never judged it) is offered
to no other jury unless the host asks for it (``cut_short``: ``--cut-short``, the forms' box); then the comparison
of juries labels it and never pools it with the whole rounds (:mod:`analysis.juries`)."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy.orm import Session

from ..engine.audiences import cut_short_rounds, judgeable_rounds
from ..engine.state import LiveState
from ..models import SessionStatus, VttSession
from ..persistence.load import load_state


class JuryError(ValueError):
    """A jury that cannot be made, joined or asked: ``message`` says why, ``code`` for programs (each caller says it
    in its own words: the command line names its options, vtt.cli.jury); nothing was written.  ``cut_short``: the
    rounds cut short that would be offered if asked for."""

    def __init__(self, message: str, code: str = "refused", cut_short: tuple[int, ...] = ()):
        super().__init__(message)
        self.message, self.code, self.cut_short = message, code, cut_short


def finished_state(db: Session, vtt_session: VttSession, *, cut_short: bool = False) -> tuple[LiveState, list[int]]:
    """The finished session's state and its judgeable rounds (dealt aliases, a revealed answer, and a vote the live
    jury was given unless ``cut_short``); refuses a session that has not finished or has nothing to judge."""
    if vtt_session.status is not SessionStatus.FINISHED:
        raise JuryError(
            f"session {vtt_session.join_code} has not finished ({vtt_session.status.value}): "
            "other juries judge a finished session",
            "not_finished",
        )
    state = load_state(db, vtt_session.id)
    judgeable = judgeable_rounds(state, cut_short=cut_short)
    if not judgeable:
        cut = judgeable_rounds(state, cut_short=True)
        raise JuryError(
            f"session {vtt_session.join_code} has no round with aliases and revealed answers to judge"
            + (f" (round {', '.join(map(str, cut))} was cut short: offered only when asked for)" if cut else ""),
            "nothing_to_judge",
            tuple(cut),
        )
    return state, judgeable


def offered_rounds(
    db: Session, vtt_session: VttSession, given: str | Iterable[int] | None, cut_short: bool = False
) -> tuple[LiveState, list[int] | None]:
    """The finished session's state and the rounds a new juror of another jury is given: ``given`` checked (a round
    cut short only with ``cut_short``), or None for every judgeable round; with ``cut_short`` and a round cut short,
    every round listed, the one cut short included (None would leave it out)."""
    state, judgeable = finished_state(db, vtt_session, cut_short=cut_short)
    numbers = chosen_rounds(given, judgeable, cut_short_rounds(state))
    if numbers is None and cut_short and set(cut_short_rounds(state)) & set(judgeable):
        numbers = judgeable
    return state, numbers


def chosen_rounds(
    given: str | Iterable[int] | None, judgeable: list[int], cut_short: Iterable[int] = ()
) -> list[int] | None:
    """``1,3`` (text or numbers) checked against the judgeable rounds; None when none are given (every
    round).  A round in ``cut_short`` that is not judgeable is refused with its reason: it was not offered."""
    if given is None or given == "":
        return None
    if isinstance(given, str):
        try:
            numbers = [int(part) for part in given.replace(" ", "").split(",") if part]
        except ValueError:
            raise JuryError(f"round numbers separated by commas, not {given!r}", "bad_rounds") from None
    else:
        numbers = list(given)
    cut = sorted(set(numbers) & set(cut_short) - set(judgeable))
    if cut:
        raise JuryError(
            f"round {', '.join(map(str, cut))} was cut short (the session stopped before its vote opened: the live "
            "jury never judged it); offered only when asked for",
            "cut_short",
            tuple(cut),
        )
    wrong = sorted(set(numbers) - set(judgeable))
    if wrong or not numbers:
        raise JuryError(
            f"{', '.join(map(str, wrong)) or 'none given'} cannot be judged; "
            f"the judgeable rounds are {', '.join(map(str, judgeable))}",
            "bad_rounds",
        )
    return sorted(set(numbers))


def cut_short_offerable(db: Session, vtt_session: VttSession) -> list[int]:
    """The finished session's rounds cut short that the host may offer another jury (aliases and a revealed
    answer); none before the session has finished."""
    if vtt_session.status is not SessionStatus.FINISHED:
        return []
    state = load_state(db, vtt_session.id)
    cut = set(cut_short_rounds(state))
    return [number for number in judgeable_rounds(state, cut_short=True) if number in cut]
