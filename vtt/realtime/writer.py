"""The one writer of a process: a queue drained by one greenlet (or thread), a batch per transaction.

Handlers ``submit`` an action and wait; the writer takes everything queued (up to ``MAX_BATCH_WEIGHT``), runs it
through ``vtt.persistence.batch.run_batch`` in one transaction, and only after the commit emits the batch's messages
and then wakes each waiting handler with its reply (the acknowledgement).  A ticker submits a ``tick`` for every
session whose deadline has passed, so an expired phase closes by itself even when nobody acts; with several
processes on one database a session is ticked by its owner, or when nobody owns it by the process holding the
timers (``vtt.realtime.ownership``).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from flask_socketio import SocketIO
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from ..db import KeptDb
from ..engine import displaced
from ..engine.actions import SERVER_ERROR, SYSTEM, Action
from ..models import VttSession
from ..persistence.batch import StateCache, Submission, run_batch
from ..protocol.replies import error_message
from .outbox import Outbox
from .ownership import Ownership

log = logging.getLogger(__name__)

# A batch holds the loop while it is decided and written: keep it short.  Its weight is its actions
# plus their sheet lines (a page's save carries several); at 500 actions of ~3 lines a batch held the
# loop for up to half a second with 5,000 jurors saving, at this weight ~45 ms.
MAX_BATCH_WEIGHT = 300
TICK_SECONDS = 0.25
REPLY_TIMEOUT = 60
OWN_ACTIONS = frozenset({"vote", "sheet", "answer"})  # echoed to the person's other connections as ``mine``


def _weight(item: tuple[Submission, Any]) -> int:
    lines = item[0].action.args.get("lines")
    return 1 + len(lines) if isinstance(lines, list) else 1


class ActionQueue:
    """The actions waiting for the writer, taken a batch at a time, live actions first.

    ``queue`` is a queue of the server's async mode (gevent's under ``vtt serve``); each item is a submission and
    the event its handler waits on, or None to stop.  A displaced jury's actions (a finished session judged again,
    ``vtt.engine.displaced``) fill what room a batch has left, and the rest wait, in their order, behind the live
    ones for the next batches (``later``: drained batch by batch), so that thousands of displaced jurors never put
    their backlog ahead of a live session's acks."""

    def __init__(self, queue: Any):
        self._queue = queue
        self._later: deque[tuple[Submission, Any]] = deque()
        self.stopped = False  # a None was taken while a batch was gathered

    def put(self, item: tuple[Submission, Any] | None) -> None:
        self._queue.put(item)

    def queued(self) -> int:
        """How many items wait in the queue (the displaced ones held back not counted)."""
        return self._queue.qsize()

    def empty(self) -> bool:
        return self._queue.empty() and not self._later

    def first(self) -> tuple[Submission, Any] | None:
        """The next batch's first item, waiting for one (None: stop)."""
        return self._later.popleft() if self._later and self._queue.empty() else self._queue.get()

    def batch(self, first: tuple[Submission, Any]) -> list[tuple[Submission, Any]]:
        """Everything queued after ``first``, live actions first, up to ``MAX_BATCH_WEIGHT``."""
        batch: list[tuple[Submission, Any]] = []  # the live actions, then displaced ones
        weight = 0
        if first[0].action.actor.role == displaced.ROLE:
            self._later.appendleft(first)
        else:
            batch, weight = [first], _weight(first)
        while weight < MAX_BATCH_WEIGHT:
            try:
                item = self._queue.get_nowait()
            except Exception:
                break
            if item is None:
                self.stopped = True
                break
            if item[0].action.actor.role == displaced.ROLE:
                self._later.append(item)
            else:
                batch.append(item)
                weight += _weight(item)
        while self._later and weight < MAX_BATCH_WEIGHT:
            item = self._later.popleft()
            batch.append(item)
            weight += _weight(item)
        return batch


class Writer:
    def __init__(
        self, socketio: SocketIO, database: KeptDb, reader: sessionmaker[Session], outbox: Outbox, ownership: Ownership
    ):
        self.socketio = socketio
        self.database = database  # on the writer engine (BEGIN IMMEDIATE on SQLite)
        self.reader = reader
        self.outbox = outbox
        self.cache = StateCache()  # the live states; let go by let_go (the hub's housekeeping)
        eio = socketio.server.eio
        self.actions = ActionQueue(eio.create_queue())
        self._make_event = eio.create_event
        self._pending_ticks: set[int] = set()  # sessions with a tick queued: each gone once its batch ran
        self.ownership = ownership
        self.claims = ownership.claims
        self._running = False
        self.batches = 0

    def start(self) -> None:
        if not self._running:
            self._running = True
            self.socketio.start_background_task(self._drain)
            self.socketio.start_background_task(self._tick)

    def stop(self) -> None:
        self._running = False
        self.actions.put(None)

    def submit(self, session_id: int, action: Action) -> dict[str, Any]:
        """Queue ``action`` and wait until its batch has committed; returns the reply for the client."""
        done = self._make_event()
        submission = Submission(session_id, action)
        self.actions.put((submission, done))
        if not done.wait(REPLY_TIMEOUT):
            return error_message("timeout", "the server is busy; try again")
        return submission.reply

    def _drain(self) -> None:
        try:
            self._drain_until_stopped()
        finally:
            self.database.close()

    def _drain_until_stopped(self) -> None:
        while self._running:
            first = self.actions.first()
            if first is None:
                break
            # No waiting for more: waiting 3 ms made batches bigger and saved up to a third of the CPU
            # at a few hundred actions a second, but put 3-5 ms on every ack (docs/benchmarks.md).  Under
            # load the queue fills while a batch is written, so batches grow by themselves.
            self.socketio.sleep(0)  # the handlers already woken queue theirs first
            batch = self.actions.batch(first)
            if self.actions.stopped:
                self._running = False
            try:
                self.apply(batch)
            except Exception:
                log.exception("a batch of %d actions failed", len(batch))
            self.socketio.sleep(0)  # let the woken handlers and the connections run before the next batch

    def apply(self, batch: list[tuple[Submission, Any]]) -> None:
        """Run a batch (the drain's, one at a time); after its commit, emit what it caused, then wake the senders
        (their acks).

        Emitting first means a client never holds an ack for a change whose broadcast is still to come.
        """
        submissions = [submission for submission, _done in batch]
        try:
            messages = run_batch(self.database, submissions, self.cache, self.socketio.sleep).messages
            self.batches += 1
            for message in messages:
                try:
                    self.outbox.to_audience(message.session_id, message.audience, message.event, message.payload)
                except Exception:
                    log.exception("emitting %s to %s failed", message.event, message.audience)
            for submission in submissions:
                self._echo_own(submission)
        finally:  # whatever happened, nobody waits for a reply that will not come
            for submission, done in batch:
                if submission.action.name == "tick":
                    self._pending_ticks.discard(submission.session_id)
                if submission.reply is None:
                    submission.reply = error_message(*SERVER_ERROR)
                if done is not None:
                    done.set()

    def _echo_own(self, submission: Submission) -> None:
        """A player's or juror's accepted action reaches all their connections (another tab, a second device)
        as ``mine``; the sender's page applies it as it did on the ack."""
        action, reply = submission.action, submission.reply
        if (
            action.name not in OWN_ACTIONS
            or action.actor.id is None
            or not reply
            or not reply.get("ok")
            or reply.get("duplicate")
        ):
            return
        try:
            self.outbox.to_person(
                submission.session_id,
                action.actor.role,
                action.actor.id,
                "mine",
                {"action": action.name, **action.args},
            )
        except Exception:
            log.exception("echoing %s to %s failed", action.name, action.actor.label)

    def let_go(self, serving: Callable[[int], bool]) -> None:
        """Forget the states of the sessions with no connection here (``serving``), no deadline ahead and no tick
        queued: a finished session's or a quiet one's (docs/design.md, "Memory over months")."""
        now = datetime.now(UTC)
        self.cache.let_go(
            lambda state: (
                serving(state.session_id)
                or state.session_id in self._pending_ticks
                or (state.deadline is not None and state.deadline > now)
            )
        )

    def held_sessions(self) -> dict[str, set[int]]:
        """Which sessions the writer keeps something of (``Hub.held_sessions``)."""
        return {"writer.states": self.cache.sessions(), "writer.pending_ticks": set(self._pending_ticks)}

    @property
    def holds_timers(self) -> bool:
        """Whether this process's ticker closed expired phases at its last tick (for ``/healthz``)."""
        return self.claims.holds

    def _tick(self) -> None:
        try:
            self._tick_until_stopped()
        finally:
            self.claims.release()

    def _tick_until_stopped(self) -> None:
        while self._running:
            self.socketio.sleep(TICK_SECONDS)
            holds_timers = self.claims.held()
            if not holds_timers and not self.claims.sessions:
                continue
            try:
                with self.reader() as db:
                    due = db.scalars(
                        select(VttSession.id).where(VttSession.phase_deadline_at <= datetime.now(UTC))
                    ).all()
            except Exception:
                log.exception("deadline check failed")
                continue
            for session_id in due:
                if session_id in self._pending_ticks:
                    continue
                try:
                    ours = self.ownership.runs_deadlines(session_id, holds_timers)
                except Exception:
                    log.exception("claiming session %s for its deadline failed", session_id)
                    continue
                if ours:
                    self._pending_ticks.add(session_id)
                    self.actions.put((Submission(session_id, Action(SYSTEM, "tick")), None))
