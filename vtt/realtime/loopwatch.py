"""How late the server's event loop runs: a heartbeat that sleeps 10 ms and notes how much longer it took.

Under gevent one greenlet that does not yield holds every connection; this is how long that was,
at worst, since the last reset.  ``GET /healthz`` reports it (``?reset=1``, the host's only, starts a new window),
so a benchmark or an operator can see stalls from outside.
"""

from __future__ import annotations

import ctypes
import gc
import time
from collections.abc import Callable
from typing import Any

HEARTBEAT_SECONDS = 0.01


class LoopWatch:
    def __init__(self, socketio):
        self.socketio = socketio
        self.worst = 0.0
        self.since = time.monotonic()
        self.running = False

    def start(self) -> None:
        if not self.running:
            self.running = True
            self.socketio.start_background_task(self._beat)

    def _beat(self) -> None:
        while self.running:
            before = time.perf_counter()
            self.socketio.sleep(HEARTBEAT_SECONDS)
            self.worst = max(self.worst, time.perf_counter() - before - HEARTBEAT_SECONDS)

    def report(self, reset: bool = False) -> dict[str, Any]:
        figures = {
            "watching": self.running,
            "max_stall_ms": round(self.worst * 1000, 1),
            "window_seconds": round(time.monotonic() - self.since, 1),
        }
        if reset:
            self.worst, self.since = 0.0, time.monotonic()
        return figures


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where the C library has none (musl, macOS)."""
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None


MALLOC_TRIM = _malloc_trim()


def give_back_memory() -> None:
    """Return the heap's free pages to the system.  glibc's malloc keeps what it freed for later, so a long-lived
    server's RSS stays at its busiest moment's and creeps up as its arenas fragment (bench/bench_soak.py: 50
    sessions at once, 6-13 MiB over 150 sessions with nothing of theirs left in Python's heap)."""
    if MALLOC_TRIM is not None:
        MALLOC_TRIM(0)


class QuietCollector:
    """The server's garbage collection, in small steps and at quiet moments instead of when Python likes.

    A full (generation 2) collection walks every live object; with 2,000 connected jurors that took
    150-400 ms, during which no connection was served, and Python started one every few seconds
    of a loaded round.  Young collections cost what they walk, too: 5,000 jurors voting at once renew
    every connection's waits (a timeout, a timer, callbacks: ~50,000 live objects), and Python's own
    young collections then walked them for 40-130 ms each, freeing nothing.

    So: the heap built at start-up is frozen (never walked again) and automatic collection is off.
    Every ``young_seconds`` the youngest generation is collected, which walks only what was made since
    and is still alive (a few ms at the busiest); what survives waits, with the old objects, for the
    full collection, which runs once the writer has been idle for ``quiet_seconds`` (at most every
    ``every_seconds``), or after ``at_most_seconds`` whatever is happening, so a server that is never
    quiet still frees cycles.  After a full collection at a quiet moment the heap's free pages go back to the system
    (:func:`give_back_memory`), so the process's RSS follows what it holds over months of sessions.
    """

    def __init__(
        self,
        socketio,
        activity,
        *,
        young_seconds: float = 0.05,
        quiet_seconds: float = 2.0,
        every_seconds: float = 60.0,
        at_most_seconds: float = 900.0,
    ):
        self.socketio, self.activity = socketio, activity  # activity(): a number that changes while busy
        self.young, self.quiet, self.every, self.at_most = young_seconds, quiet_seconds, every_seconds, at_most_seconds
        self.collections = self.young_collections = 0
        self.running = False

    def start(self) -> None:
        if self.running:
            return
        self.running = True
        gc.collect()
        gc.freeze()  # imports, the app, SQLAlchemy's caches: never garbage, never walked again
        gc.disable()
        self.socketio.start_background_task(self._run)

    def _run(self) -> None:
        last_full = last_change = time.monotonic()
        seen = self.activity()
        try:
            while self.running:
                self.socketio.sleep(self.young)
                if not self.running:  # stopped while asleep
                    break
                gc.collect(0)
                self.young_collections += 1
                now, current = time.monotonic(), self.activity()
                if current != seen:
                    seen, last_change = current, now
                due = now - last_full >= self.every and now - last_change >= self.quiet
                if due or now - last_full >= self.at_most:
                    gc.collect()
                    if due:  # quiet: nobody waits for the trim (a few ms)
                        give_back_memory()
                    self.collections += 1
                    last_full = time.monotonic()
        finally:
            gc.enable()  # whatever stopped this, Python collects by itself again
