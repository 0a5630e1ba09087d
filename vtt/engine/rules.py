"""The rules' entry point: ``decide`` answers an action, ``host_moves`` lists the host's moves that fit now.

``decide(state, action, now, tally)`` checks an action of the host, a player, a juror, a guest (open join) or the
system clock against the actor's role and the action's declared precondition, then runs its handler (each declared
once, in ``flow``, ``voting``, ``answers``, ``jury`` and ``page_reports``), which checks the rest.  The action's
fields come read by the schema of the client message that carries it (``parse_action`` at the socket,
``read_args`` for the server's callers): the handlers check only what depends on the session.  A misfit raises
a refusal with a code and a sentence, and changes nothing; an accepted action's outcome is applied to ``state``
before it is returned.

Flow: draft -> lobby -> per round [round -> per question (clip [-> play_clip] -> answering -> answers_closed ->
judging) -> voting -> vote_closed -> tally -> (identities)] -> finished.  Deadlines are data: an expired one closes
its phase on the next action or clock tick (``decide`` runs the clock first).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..kinds import Phase
from ..protocol.messages import CLIENT_MESSAGES
from . import answers, audiences, displaced, jury, page_reports  # noqa: F401 - all but audiences: their declarations
from .actions import ACTIONS, SYSTEM, Action, Message, Outcome, Precondition, Refusal, Tally
from .flow import close_answering_outcome, open_answering_outcome
from .state import LiveState, LogEvent, apply_effect
from .voting import close_vote_outcome


def decide(state: LiveState, action: Action, now: datetime, tally: Tally) -> list[Outcome]:
    """The outcomes of ``action`` (an expired deadline's own outcome first, if any).

    Each outcome is already applied to ``state`` and counted in ``state_version``.  Raises
    :class:`Refusal` when the action does not fit; the clock's outcome, if any, still stands
    (the refusal carries it as ``before``).  The action ``tick`` only runs the clock.
    """
    outcomes = []
    expired = _expire(state, now, tally)
    if expired:
        outcomes.append(expired)
    if action.name == "tick":
        return outcomes
    declared = ACTIONS.get(action.name)
    try:
        if declared is None:
            raise Refusal("unknown_action", f"there is no action called {action.name!r}")
        if declared.handler is None or action.actor.role not in declared.roles:
            raise Refusal("not_allowed", f"a {action.actor.role} cannot {action.name.replace('_', ' ')}")
        if action.actor.role == "juror" and action.actor.id in state.removed_jurors:
            raise Refusal("removed", "the host removed you from this session's jury")
        if declared.fits is not None and not (declared.waived and declared.waived(state, action)):
            declared.fits(state)
        outcome = declared.handler(state, action, now, tally)
    except Refusal as refusal:
        refusal.before = outcomes
        raise
    outcome.effects.append(LogEvent(action.name, action.actor.label, _loggable(action.args), action.client_key, now))
    _commit(state, outcome)
    outcomes.append(outcome)
    return outcomes


def _commit(state: LiveState, outcome: Outcome) -> None:
    for effect in outcome.effects:
        apply_effect(state, effect)
    state.state_version += 1
    outcome.reply.setdefault("state_version", state.state_version)
    if outcome.status_changed:
        shared = audiences.status(state)
        outcome.messages += [
            Message("host", "status", audiences.host_status(state, host_moves(state))),
            *(Message(audience, "status", shared) for audience in ("player", "juror", "stage")),
        ]
    if outcome.announce:
        outcome.messages += outcome.announce(state)


def _loggable(args: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in args.items() if key != "token"}


def _expire(state: LiveState, now: datetime, tally: Tally) -> Outcome | None:
    """Close the current phase when its deadline has passed."""
    if state.deadline is None or now < state.deadline:
        return None
    if state.phase is Phase.CLIP:  # the host's screening has ended: answering opens
        outcome = open_answering_outcome(state, now, state.answer_seconds)
    elif state.phase is Phase.ANSWERING:
        outcome = close_answering_outcome(state, now)
    elif state.phase is Phase.VOTING:
        outcome = close_vote_outcome(state, now, tally)
    else:
        return None
    outcome.effects.append(LogEvent("deadline", SYSTEM.label, {"phase": state.phase.value}, None, now))
    _commit(state, outcome)
    return outcome


# The moves of the flow, ranked: when several fit at once, the earlier one is the move a host normally takes (the
# tally and the identities before the next round, closing before extending, the clip before opening answering
# without it).  Every action declared with a precondition is a move of the flow, and must be ranked here.
RANKING = (
    "open_lobby",
    "show_tally",
    "reveal_identities",
    "start_round",
    "finish",
    "show_question",
    "open_vote",
    "reveal",
    "close_answering",
    "close_vote",
    "extend",
    "play_clip",
    "open_answering",
)
FLOW_MOVES: dict[str, Precondition] = {
    name: ACTIONS[name].fits  # type: ignore[misc]
    for name in sorted((name for name, each in ACTIONS.items() if each.fits), key=RANKING.index)
}


def host_moves(state: LiveState) -> list[str]:
    """The moves of the flow that fit ``state``, the usual one first: the host console's buttons, the host bot's
    choice.  A move is listed when its precondition (which :func:`decide` checks before its handler) holds; its
    arguments are checked when it is made.  ``finish`` with ``force``, which stops a session at any time, is not
    a move of the flow.  Once the clip has been played a replay is never the usual move: it comes last."""
    moves = [name for name, fits in FLOW_MOVES.items() if _holds(fits, state)]
    current = state.current_question
    if "play_clip" in moves and current is not None and current.clip_started_at is not None:
        moves = [name for name in moves if name != "play_clip"] + ["play_clip"]
    return moves


def _holds(fits: Precondition, state: LiveState) -> bool:
    try:
        fits(state)
    except Refusal:
        return False
    return True


def client_events() -> list[str]:
    """The socket events that carry the declared actions (every declaring module is loaded above), in the
    protocol's order (``CLIENT_MESSAGES``)."""
    carried = {each.schema for each in ACTIONS.values() if each.schema is not None}
    return [event for event, schema in CLIENT_MESSAGES.items() if schema in carried]
