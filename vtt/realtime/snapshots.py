"""Snapshots: all a connection's role may see now, read from the database, and the pace of displaced jurors' ones.

Per session this keeps the state last read (a thousand jurors connecting at once cost one full read) and the rounds
as displaced jurors see them (built once per state read); each lets a session go by the rule beside it
(docs/design.md, "Memory over months").
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from ..access.admission import session_route
from ..engine import audiences, displaced
from ..engine.rules import host_moves
from ..engine.state import LiveState
from ..persistence.load import current_version, load_state
from ..persistence.queries import assignments, juror_rows, jury_rows, rows_of_rounds
from .identify import Identity

# A displaced juror's snapshot (every round they judge) costs the loop ~10 ms: thousands arriving at once from a crowd
# platform would hold it for seconds.  Beyond a burst, their snapshots are sent at this pace (the connection is
# accepted at once); a live session's pages are never held back.
DISPLACED_SNAPSHOTS_PER_SECOND = 40
DISPLACED_SNAPSHOT_BURST = 40


class Snapshots:
    """``reader`` makes the live side's database sessions; ``secret_key`` signs a displaced juror's route;
    ``presence(session_id)`` is the host's presence message; ``serving(session_id)`` whether a connection of the
    session is on this process (nothing is kept of a session none of whose connections is here)."""

    def __init__(
        self,
        reader: sessionmaker[Session],
        secret_key: str,
        presence: Callable[[int], dict[str, Any]],
        serving: Callable[[int], bool],
    ):
        self.reader, self.secret_key = reader, secret_key
        self._presence, self._serving = presence, serving
        # per session, for snapshots; never changed once read: gone with the session's last connection here
        self._read_states: dict[int, LiveState] = {}
        # per session: the state read, and its rounds as judged_round gives them to displaced jurors: gone with the
        # session's last connection here
        self._judged_rounds: dict[int, tuple[LiveState, dict[int, dict[str, Any]]]] = {}

    def snapshot(self, who: Identity) -> dict[str, Any]:
        """All the connection's role may see now, with the state_version it is valid for."""
        with self.reader() as db:
            state = self._state_for_reading(db, who.session_id)
            if who.role == displaced.ROLE:
                view = self._displaced_view(db, state, who)
            elif who.role == "juror":
                sheet, votes = juror_rows(db, who.session_id, who.actor_id, state.round)
                view = audiences.juror_snapshot(state, who.label, sheet, votes)
                if who.token:
                    view["me"]["token"] = who.token
            elif who.role == "player":
                view = audiences.player_snapshot(state, who.actor_id)
            elif who.role == "stage":
                view = audiences.stage_snapshot(state)
            else:
                view = {
                    **audiences.host_snapshot(state, host_moves(state), self._presence(who.session_id)),
                    "jurors": jury_rows(db, who.session_id),
                    "open_join_cap": state.open_join_cap,
                }
        return {**view, "state_version": state.state_version}

    def _displaced_view(self, db: Session, state: LiveState, who: Identity) -> dict[str, Any]:
        task = assignments(db, who.session_id, [who.actor_id])[who.actor_id]
        rounds = task.rounds_to_judge(state)
        sheet, votes = rows_of_rounds(db, who.session_id, who.actor_id, rounds)
        # the rounds as the live jury saw them are the same for every displaced juror: built once per state read
        kept = self._judged_rounds.get(who.session_id)
        if kept is None or kept[0] is not state:
            kept = (state, {})
            if self._serving(who.session_id):  # not for a connection that left while its snapshot was read
                self._judged_rounds[who.session_id] = kept
        judged = kept[1]
        shown = [judged[n] if n in judged else judged.setdefault(n, audiences.judged_round(state, n)) for n in rounds]
        attention = None
        if task.attention_check:
            asks = displaced.attention_value(who.actor_id)
            attention = {"asks": asks, "answered": task.attention_passed is not None}
        code = task.completion_code if task.done(state) else None
        return audiences.displaced_snapshot(
            state,
            who.label,
            shown,
            sheet,
            votes,
            attention=attention,
            completion_code=code,
            route=session_route(self.secret_key, who.session_id),
        )

    def _state_for_reading(self, db: Session, session_id: int) -> LiveState:
        """The session's state, read again only when its state_version has moved (a thousand jurors
        connecting at once cost one full read)."""
        cached = self._read_states.get(session_id)
        if cached is not None and cached.state_version == current_version(db, session_id):
            return cached
        state = load_state(db, session_id)
        if self._serving(session_id):  # not for a connection that left while its snapshot was read
            self._read_states[session_id] = state
        return state

    def let_go(self, session_id: int) -> None:
        """The session's last connection here left (the writer's state stays while a deadline is ahead)."""
        self._read_states.pop(session_id, None)
        self._judged_rounds.pop(session_id, None)

    def sweep(self) -> None:
        """The housekeeping: what a snapshot read while the last connection left put back."""
        for cache in (self._read_states, self._judged_rounds):
            for session_id in [session_id for session_id in list(cache) if not self._serving(session_id)]:
                cache.pop(session_id, None)

    def held_sessions(self) -> dict[str, set[int]]:
        return {"snapshots.read_states": set(self._read_states), "snapshots.judged_rounds": set(self._judged_rounds)}


class TokenBucket:
    """``rate`` a second, up to ``burst`` at once: :meth:`wait` says how long the next one waits for its turn."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic):
        self.rate, self.burst, self.clock = rate, burst, clock
        self._tokens, self._at = float(burst), clock()

    def wait(self) -> float:
        now = self.clock()
        self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
        self._at = now
        self._tokens -= 1  # taken now, even if in debt: the debt is the wait
        return 0.0 if self._tokens >= 0 else -self._tokens / self.rate


class Pacing:
    """The snapshot a connection gets when it connects: at once, or for a displaced juror beyond the burst
    (``arrivals``, one per process), when their turn comes (a page simply waits for it).  ``spawn`` starts a
    background task and ``sleep`` waits (the server's async mode)."""

    def __init__(self, spawn: Callable[..., Any], sleep: Callable[[float], Any]):
        self._spawn, self._sleep = spawn, sleep
        self.arrivals = TokenBucket(DISPLACED_SNAPSHOTS_PER_SECOND, DISPLACED_SNAPSHOT_BURST)

    def send(self, who: Identity, send: Callable[[], None], still_there: Callable[[], bool]) -> None:
        """``send()`` the snapshot now, or later if ``still_there()`` then."""
        delay = self.arrivals.wait() if who.role == displaced.ROLE else 0.0
        if not delay:
            send()
            return

        def later() -> None:
            self._sleep(delay)
            if still_there():
                send()

        self._spawn(later)
