"""One batch of actions, one transaction: decide each, write all effects, commit, then answer.

``run_batch`` is the whole commit path without Socket.IO: the writer (``vtt.realtime.writer``)
feeds it what clients sent and, after it returns, acknowledges and emits.  Nothing here yields
while the transaction is open: no network, no sleeping, no emitting.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.orm import Session

from ..db import KeptDb, is_locked
from ..engine import displaced
from ..engine.actions import SERVER_ERROR, Action, Message, Outcome, Refusal
from ..engine.rules import decide
from ..engine.state import Effect, LiveState
from ..protocol.replies import error_message, result_message
from .load import current_version, load_state
from .queries import assignments, seen_client_keys
from .tally import tally_reading_stored_votes
from .write import write_effects

log = logging.getLogger(__name__)

LOCK_RETRY_SECONDS = 30  # how long a batch keeps retrying a database another process holds


@dataclass
class Submission:
    """An action for one VTT session, and (after the batch) the reply for its sender."""

    session_id: int
    action: Action
    reply: dict[str, Any] | None = None


@dataclass(frozen=True)
class Outgoing:
    """A message to emit after the commit: to the audience's room of one session."""

    session_id: int
    audience: str
    event: str
    payload: dict[str, Any]


@dataclass
class BatchResult:
    submissions: list[Submission]
    messages: list[Outgoing] = field(default_factory=list)


class StateCache:
    """Live states by session, valid while the database's state_version matches.

    The writer's (``vtt.realtime.writer``): it lets a session go once no connection of it is on this process and no
    deadline of it is ahead (:meth:`let_go`, from the hub's housekeeping); a session let go is read again at its next
    action, so letting go is never wrong, only a read."""

    def __init__(self) -> None:
        self._states: dict[int, LiveState] = {}  # per session; let go by let_go, or forgotten when a batch failed

    def fresh(self, db: Session, session_id: int) -> LiveState:
        version = current_version(db, session_id, lock=True)
        if version is None:
            raise LookupError(f"no session with id {session_id}")
        state = self._states.get(session_id)
        if state is None or state.state_version != version:
            state = self._states[session_id] = load_state(db, session_id)
        return state

    def forget(self, session_ids) -> None:
        for session_id in session_ids:
            self._states.pop(session_id, None)

    def sessions(self) -> set[int]:
        """The sessions whose state is kept."""
        return set(self._states)

    def let_go(self, keep: Callable[[LiveState], bool]) -> None:
        """Forget every state but those ``keep`` says to keep."""
        self.forget([session_id for session_id, state in list(self._states.items()) if not keep(state)])


def run_batch(
    database: KeptDb,
    submissions: list[Submission],
    cache: StateCache,
    sleep: Callable[[float], None],
    now: Callable[[], datetime] | None = None,
) -> BatchResult:
    """Apply ``submissions`` in one transaction; every submission gets its ``reply``.

    A database held by another process (SQLite's lock) is retried after ``sleep`` (which yields
    under gevent), and a lost connection once on a new one.  Any other failure rolls the batch back
    and the batch is tried again in halves, in order, so that an action the database refuses fails
    alone and the others commit; the one that fails by itself is answered ``server_error``.
    """
    clock = now or (lambda: datetime.now(UTC))
    result = _run_once(database, submissions, cache, sleep, clock)
    if isinstance(result, BatchResult):
        return result
    if len(submissions) == 1 or isinstance(result, OperationalError):  # the database itself is in trouble
        if len(submissions) == 1:
            action = submissions[0].action
            log.error("%s by %s could not be saved", action.name, action.actor, exc_info=result)
        else:
            log.error("a batch of %d actions failed", len(submissions), exc_info=result)
        for submission in submissions:
            submission.reply = error_message(*SERVER_ERROR)
        return BatchResult(submissions)
    log.warning("a batch of %d actions failed (%s); trying its halves apart", len(submissions), type(result).__name__)
    for submission in submissions:
        submission.reply = None
    middle = len(submissions) // 2
    first = run_batch(database, submissions[:middle], cache, sleep, clock)
    second = run_batch(database, submissions[middle:], cache, sleep, clock)
    return BatchResult(submissions, first.messages + second.messages)


def _run_once(
    database: KeptDb,
    submissions: list[Submission],
    cache: StateCache,
    sleep: Callable[[float], None],
    clock: Callable[[], datetime],
) -> BatchResult | Exception:
    """The batch in one transaction, retried while the database is locked or once reconnected; else what
    made it fail (rolled back)."""
    waited = 0.0
    delay = 0.002
    reconnected = False
    while True:
        try:
            with database.transaction() as db:
                return _decide_and_write(db, submissions, cache, clock())
        except Exception as error:
            cache.forget({s.session_id for s in submissions})
            if isinstance(error, DBAPIError) and error.connection_invalidated and not reconnected:
                reconnected = True
                continue
            if is_locked(error) and waited < LOCK_RETRY_SECONDS:
                sleep(delay)
                waited += delay
                delay = min(delay * 2, 0.05)
                continue
            return error


def _decide_and_write(db: Session, submissions: list[Submission], cache: StateCache, now: datetime) -> BatchResult:
    by_session: dict[int, list[Submission]] = {}
    for submission in submissions:
        by_session.setdefault(submission.session_id, []).append(submission)
    result = BatchResult(submissions)
    for session_id, items in by_session.items():
        try:
            state = cache.fresh(db, session_id)
        except LookupError:
            for item in items:
                item.reply = error_message("no_session", "that session does not exist")
            continue
        live = [item for item in items if item.action.actor.role != displaced.ROLE]
        later = [item for item in items if item.action.actor.role == displaced.ROLE]
        if later:  # a finished session judged again: nothing of the live state changes
            write_effects(db, state, _decide_displaced(db, state, later, now), session_row=False)
        if not live:
            continue
        outcomes = _decide_all(db, state, live, now)
        effects = [effect for outcome in outcomes for effect in outcome.effects]
        result.messages += _stamped(state, outcomes)
        new_jurors = write_effects(db, state, effects)
        state.juror_ids.update(new_jurors)  # ids come with the write: the host may remove a juror who just joined
        for item in items:
            if item.reply and item.reply.get("ok") and "label" in item.reply and item.reply["label"] in new_jurors:
                item.reply["juror"] = new_jurors[item.reply["label"]]
    return result


def _decide_all(db: Session, state: LiveState, items: list[Submission], now: datetime) -> list[Outcome]:
    keyed = [(item.action.actor.label, item.action.client_key) for item in items if item.action.client_key]
    seen = seen_client_keys(db, state.session_id, keyed)
    tally = tally_reading_stored_votes(db)
    outcomes: list[Outcome] = []
    for item in items:
        action = item.action
        key = (action.actor.label, action.client_key)
        if action.client_key and key in seen:
            item.reply = result_message(duplicate=True, state_version=state.state_version)
            continue
        try:
            done = decide(state, action, now, tally)
        except Refusal as refusal:
            outcomes += refusal.before
            item.reply = refusal.reply(state.state_version)
            continue
        outcomes += done
        if action.client_key:
            seen.add(key)
        item.reply = result_message(**(done[-1].reply if done else {"state_version": state.state_version}))
    return outcomes


def _decide_displaced(db: Session, state: LiveState, items: list[Submission], now: datetime) -> list[Effect]:
    """Displaced jurors' actions (``vtt.engine.displaced``): the same replays and refusals as the live ones', no
    state_version and no messages."""
    keyed = [(item.action.actor.label, item.action.client_key) for item in items if item.action.client_key]
    seen = seen_client_keys(db, state.session_id, keyed)
    tasks = assignments(db, state.session_id, {item.action.actor.id for item in items})
    effects: list[Effect] = []
    for item in items:
        action = item.action
        key = (action.actor.label, action.client_key)
        if action.client_key and key in seen:
            item.reply = result_message(duplicate=True)
            continue
        try:
            task = tasks.get(action.actor.id)
            if task is None:
                raise Refusal("not_allowed", "this link is not a displaced juror's")
            outcome = displaced.outcome_of(state, task, action, now)
        except Refusal as refusal:
            item.reply = refusal.reply()
            continue
        effects += outcome.effects
        if action.client_key:
            seen.add(key)
        item.reply = result_message(**outcome.reply)
    return effects


def _stamped(state: LiveState, outcomes: list[Outcome]) -> list[Outgoing]:
    """The batch's messages, later ones replacing earlier ones where they say so, each carrying
    its ``state_version`` and the ``prev_version`` of the message its audience got before it."""
    chosen: list[tuple[int, Message]] = []
    replaced: dict[tuple[str, str], int] = {}
    for outcome in outcomes:
        version = outcome.reply["state_version"]
        for message in outcome.messages:
            if message.replaces:
                slot = (message.audience, message.replaces)
                if slot in replaced:
                    chosen[replaced[slot]] = (-1, message)  # superseded: dropped below
                replaced[slot] = len(chosen)
            chosen.append((version, message))
    stamped = []
    for version, message in chosen:
        if version < 0:
            continue
        previous = state.audience_versions.get(message.audience, 0)
        state.audience_versions[message.audience] = version
        payload = {**message.payload, "state_version": version, "prev_version": previous}
        stamped.append(Outgoing(state.session_id, message.audience, message.event, payload))
    return stamped
