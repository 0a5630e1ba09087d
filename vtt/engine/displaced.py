"""A displaced juror's actions: judging a finished session's rounds later, at their own pace.

A displaced juror sees what the live jury saw (``audiences.judged_round``) and answers with the live jury's
``sheet`` and ``vote`` messages, naming the round.  Their actions never touch the live state: they change no phase,
no tally and no ``state_version``, and no one else is told (``vtt.persistence.batch`` writes them beside the live
actions, in the same transaction).  An instructed-response line (``attention``) may check that they read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..kinds import Phase
from ..protocol.messages import AttentionIn
from .actions import ACTIONS, Action, Outcome, declare_later
from .audiences import judgeable_rounds
from .checks import require
from .state import LiveState, LogEvent, SaveSheet, SetAttention
from .voting import sheet_line, sheet_lines, vote_effect

ROLE = "displaced"


@dataclass
class Assignment:
    """A displaced juror's task as stored: the rounds to judge, their votes so far, the code they get at the end."""

    juror_id: int
    rounds: list[int] | None  # None: every judgeable round
    completion_code: str | None = None
    attention_check: bool = False
    attention_passed: bool | None = None
    removed: bool = False
    votes: dict[tuple[int, int], int | None] = field(default_factory=dict)  # (round, slot) -> player (None: abstain)

    def rounds_to_judge(self, state: LiveState) -> list[int]:
        """Every judgeable round, or the rounds the host listed (a round cut short only when listed: the host
        offered it explicitly)."""
        if self.rounds is None:
            return judgeable_rounds(state)
        judgeable = judgeable_rounds(state, cut_short=True)
        return [n for n in self.rounds if n in judgeable]

    def done(self, state: LiveState) -> bool:
        """Every round voted on (an abstention counts), and the attention line answered where there is one."""
        voted = {number for number, _slot in self.votes}
        answered = not self.attention_check or self.attention_passed is not None
        return answered and all(number in voted for number in self.rounds_to_judge(state))


def attention_value(juror_id: int) -> int:
    """The rating (1-5) a juror's instructed-response line asks for: fixed per juror, varied across jurors."""
    return 1 + (juror_id * 3 + 1) % 5


def outcome_of(state: LiveState, assignment: Assignment, action: Action, now: datetime) -> Outcome:
    """What a displaced juror's action does (``sheet``, ``vote`` or ``attention``: the actions declared with
    :func:`declare_later`); raises :class:`Refusal` when it does not fit.  Unlike ``vtt.engine.rules.decide``
    it changes nothing of ``state``: its effects are the batch's to write."""
    declared = ACTIONS.get(action.name)
    later = declared.later if declared is not None else None
    require(later is not None, "not_allowed", f"a displaced juror cannot {action.name.replace('_', ' ')}")
    require(not assignment.removed, "removed", "the host removed you from this jury")
    require(state.phase is Phase.FINISHED, "not_finished", "this session has not finished")
    outcome = later(state, assignment, action, now)
    outcome.effects.append(LogEvent(action.name, action.actor.label, dict(action.args), action.client_key, now))
    if assignment.done(state) and assignment.completion_code:
        outcome.reply["completion_code"] = assignment.completion_code
    return outcome


@declare_later("sheet")
def _sheet(state: LiveState, assignment: Assignment, action: Action, now: datetime) -> Outcome:
    rounds = assignment.rounds_to_judge(state)
    return Outcome(
        effects=[_sheet_line(state, rounds, assignment, action, line, now) for line in sheet_lines(action.args)]
    )


def _sheet_line(
    state: LiveState, rounds: list[int], assignment: Assignment, action: Action, line: dict[str, Any], now: datetime
) -> SaveSheet:
    item = state.questions.get(line.get("question"))
    require(
        item is not None and item.revealed_at is not None and item.round in rounds,
        "not_revealed",
        "that question is not one of the rounds you judge",
    )
    where = f"round {item.round}"
    return sheet_line(state, item.round, assignment.juror_id, item.id, line, action, now, where=where)


@declare_later("vote")
def _vote(state: LiveState, assignment: Assignment, action: Action, now: datetime) -> Outcome:
    number = action.args.get("round")
    require(
        number in assignment.rounds_to_judge(state), "not_your_round", f"round {number} is not one of yours to judge"
    )
    others = {slot: named for (each, slot), named in assignment.votes.items() if each == number}
    effect = vote_effect(state, number, assignment.juror_id, others, action, now, where=f"round {number}")
    assignment.votes[(number, effect.slot)] = effect.player_id
    return Outcome(effects=[effect])


@declare_later("attention", schema=AttentionIn)
def _attention(state: LiveState, assignment: Assignment, action: Action, now: datetime) -> Outcome:
    require(assignment.attention_check, "no_attention_check", "your jury has no attention line")
    passed = action.args["value"] == attention_value(assignment.juror_id)
    assignment.attention_passed = passed
    return Outcome(effects=[SetAttention(assignment.juror_id, passed)])
