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
from ..protocol.vocabulary import MAX_SHEET_LINES
from .actions import Action, Outcome, Refusal, Tally, declare
from .audiences import judgeable_rounds
from .checks import require, trimmed_text, whole_number
from .state import LiveState, LogEvent, SaveSheet, SaveVote, SetAttention

ROLE = "displaced"
ACTIONS = ("sheet", "vote", "attention")


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


def decide(state: LiveState, assignment: Assignment, action: Action, now: datetime) -> Outcome:
    """A displaced juror's ``sheet``, ``vote`` or ``attention``; raises :class:`Refusal` when it does not fit."""
    require(action.name in ACTIONS, "not_allowed", f"a displaced juror cannot {action.name.replace('_', ' ')}")
    require(not assignment.removed, "removed", "the host removed you from this jury")
    require(state.phase is Phase.FINISHED, "not_finished", "this session has not finished")
    if action.name == "sheet":
        outcome = _sheet(state, assignment, action, now)
    elif action.name == "vote":
        outcome = _vote(state, assignment, action, now)
    else:
        outcome = _attention(assignment, action, now)
    outcome.effects.append(LogEvent(action.name, action.actor.label, dict(action.args), action.client_key, now))
    if assignment.done(state) and assignment.completion_code:
        outcome.reply["completion_code"] = assignment.completion_code
    return outcome


@declare("attention", roles=(ROLE,), schema=AttentionIn)
def _not_live(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    """The live rules never answer a displaced juror: the batch sends their actions to :func:`decide`."""
    raise Refusal("not_allowed", "a displaced juror's actions are decided apart from the live session")


def _sheet(state: LiveState, assignment: Assignment, action: Action, now: datetime) -> Outcome:
    lines = action.args.get("lines")
    if lines is None:
        lines = [action.args]
    require(
        isinstance(lines, list) and 1 <= len(lines) <= MAX_SHEET_LINES,
        "bad_field",
        f"lines must be a list of 1 to {MAX_SHEET_LINES} sheet lines",
    )
    rounds = assignment.rounds_to_judge(state)
    return Outcome(effects=[_sheet_line(state, rounds, assignment, action, line, now) for line in lines])


def _sheet_line(
    state: LiveState, rounds: list[int], assignment: Assignment, action: Action, line: dict[str, Any], now: datetime
) -> SaveSheet:
    item = state.questions.get(line.get("question"))
    require(
        item is not None and item.revealed_at is not None and item.round in rounds,
        "not_revealed",
        "that question is not one of the rounds you judge",
    )
    player = state.round_info[item.round].player_of(line.get("alias"))
    require(player is not None, "unknown_alias", f"no player is called {line.get('alias')!r} in round {item.round}")
    marked = line.get("looks_like_ai", False)
    require(isinstance(marked, bool), "bad_field", "looks_like_ai must be true or false")
    return SaveSheet(
        assignment.juror_id,
        item.id,
        player,
        line["alias"],
        trimmed_text(line.get("note"), "note"),
        whole_number(line.get("human_likeness"), "human_likeness", 1, 5),
        marked,
        action.client_key or "",
        now,
    )


def _vote(state: LiveState, assignment: Assignment, action: Action, now: datetime) -> Outcome:
    args = action.args
    number = args.get("round")
    require(
        number in assignment.rounds_to_judge(state), "not_your_round", f"round {number} is not one of yours to judge"
    )
    slot = whole_number(args.get("slot", 1), "slot", 1, state.ai_votes_per_juror, optional=False)
    alias = args.get("alias")
    player = None
    if alias is not None:
        player = state.round_info[number].player_of(alias)
        require(player is not None, "unknown_alias", f"no player is called {alias!r} in round {number}")
        require(
            all(named != player for (r, s), named in assignment.votes.items() if r == number and s != slot),
            "named_twice",
            f"you have already named {alias} in another slot",
        )
    effect = SaveVote(
        number,
        assignment.juror_id,
        slot,
        player,
        alias,
        whole_number(args.get("confidence"), "confidence", 1, 5),
        trimmed_text(args.get("reason"), "reason"),
        action.client_key or "",
        now,
    )
    assignment.votes[(number, slot)] = player
    return Outcome(effects=[effect])


def _attention(assignment: Assignment, action: Action, now: datetime) -> Outcome:
    require(assignment.attention_check, "no_attention_check", "your jury has no attention line")
    value = whole_number(action.args.get("value"), "value", 1, 5, optional=False)
    passed = value == attention_value(assignment.juror_id)
    assignment.attention_passed = passed
    return Outcome(effects=[SetAttention(assignment.juror_id, passed)])
