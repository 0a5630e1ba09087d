"""The served app's loop health: the stall heartbeat and the full collections kept to quiet moments."""

from __future__ import annotations

import contextlib
import gc
import threading
import time
import weakref

from tests.support.waiting import wait_until
from vtt.realtime import loopwatch
from vtt.realtime.loopwatch import LoopWatch, QuietCollector


class ThreadedSocketIO:
    """What the two need of Flask-SocketIO: background tasks and sleep (threads here, greenlets when served)."""

    @staticmethod
    def start_background_task(target, *args):
        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()
        return thread

    @staticmethod
    def sleep(seconds: float) -> None:
        time.sleep(seconds)  # the loop's own sleep, as Flask-SocketIO's: not a wait of the test


def test_the_heartbeat_reports_how_late_the_loop_ran_and_resets():
    watch = LoopWatch(ThreadedSocketIO())
    assert watch.report()["watching"] is False
    watch.start()
    try:
        time.sleep(0.1)  # the window the report covers: the sleep is the test
        first = watch.report(reset=True)
        assert first["watching"] is True and 0 <= first["max_stall_ms"] < 1000 and first["window_seconds"] >= 0.1
        watch.worst = 0.25  # as if the loop had been held for 250 ms
        assert watch.report(reset=True)["max_stall_ms"] >= 250
        assert watch.report()["max_stall_ms"] < 250  # a new window
    finally:
        watch.running = False


@contextlib.contextmanager
def started_collector(**timing):
    """A started QuietCollector over a writer whose batch count the test moves; the process's GC restored after."""
    busy = {"batches": 0}
    collector = QuietCollector(ThreadedSocketIO(), lambda: busy["batches"], every_seconds=0.0, **timing)
    try:
        collector.start()
        yield collector, busy
    finally:
        collector.running = False
        gc.unfreeze()
        gc.enable()


def keep_busy(busy: dict, seconds: float, every: float) -> None:
    """A busy writer: its batch count keeps moving."""
    stop_at = time.monotonic() + seconds
    while time.monotonic() < stop_at:
        busy["batches"] += 1
        time.sleep(every)  # the writer's pace: the sleep is the test


def trims(monkeypatch) -> list[int]:
    """Every call of malloc_trim the collector makes, none of them real."""
    calls: list[int] = []
    monkeypatch.setattr(loopwatch, "MALLOC_TRIM", lambda pad: calls.append(pad) or 1)
    return calls


def test_full_collections_wait_for_a_quiet_writer_and_then_give_memory_back(monkeypatch):
    """The heap's free pages go back to the system after a quiet full collection: glibc's malloc kept them, and a
    process serving 50 sessions at once grew 6-13 MiB of RSS over 150 of them with its Python heap flat."""
    trimmed = trims(monkeypatch)
    # quiet means 2 s without a batch: a loaded machine's sleep of 0.1 s may oversleep by far less than that
    with started_collector(quiet_seconds=2.0, at_most_seconds=60) as (collector, busy):
        assert gc.get_freeze_count() > 0  # the start-up heap is frozen
        assert not gc.isenabled()  # no automatic collection: the collector's own, in small steps
        keep_busy(busy, 1.5, 0.1)
        assert collector.collections == 0 and trimmed == []
        wait_until(
            lambda: collector.collections >= 1 and trimmed,
            timeout=10,
            interval=0.02,
            message="a full collection once the writer is quiet for 2 s, then the trim",
        )


def test_a_server_that_is_never_quiet_still_collects_at_the_upper_bound(monkeypatch):
    trimmed = trims(monkeypatch)
    with started_collector(quiet_seconds=60, at_most_seconds=0.8) as (collector, busy):
        keep_busy(busy, 2.0, 0.05)
        assert collector.collections >= 1
    assert trimmed == []  # a busy loop is not held for the trim


class Node:
    """An object that can be put in a reference cycle and watched with a weak reference."""


def test_young_cycles_are_freed_by_the_collectors_small_steps_and_python_takes_over_when_it_stops():
    with started_collector(quiet_seconds=60, at_most_seconds=60, young_seconds=0.02) as (collector, _busy):
        node = Node()
        node.itself = node  # garbage only a collection can free, and Python's automatic one is off
        freed = weakref.ref(node)
        del node
        wait_until(lambda: freed() is None, timeout=10, interval=0.02, message="the cycle freed by a young collection")
        assert collector.young_collections >= 1
        assert collector.collections == 0  # never quiet: no full collection
        collector.running = False
        wait_until(gc.isenabled, timeout=10, interval=0.02, message="Python's own collection back on")
