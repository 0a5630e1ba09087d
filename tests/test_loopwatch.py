"""The served app's loop health: the stall heartbeat and the full collections kept to quiet moments."""

from __future__ import annotations

import contextlib
import gc
import threading
import time

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
        time.sleep(seconds)


def wait_until(condition, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def test_the_heartbeat_reports_how_late_the_loop_ran_and_resets():
    watch = LoopWatch(ThreadedSocketIO())
    assert watch.report()["watching"] is False
    watch.start()
    try:
        time.sleep(0.1)
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
    thresholds = gc.get_threshold()
    busy = {"batches": 0}
    collector = QuietCollector(ThreadedSocketIO(), lambda: busy["batches"], every_seconds=0.0, **timing)
    try:
        collector.start()
        yield collector, busy
    finally:
        collector.running = False
        gc.unfreeze()
        gc.set_threshold(*thresholds)


def keep_busy(busy: dict, seconds: float, every: float) -> None:
    """A busy writer: its batch count keeps moving."""
    stop_at = time.monotonic() + seconds
    while time.monotonic() < stop_at:
        busy["batches"] += 1
        time.sleep(every)


def test_full_collections_wait_for_a_quiet_writer():
    with started_collector(quiet_seconds=0.6, at_most_seconds=60) as (collector, busy):
        assert gc.get_freeze_count() > 0  # the start-up heap is frozen
        assert gc.get_threshold()[2] >= 10**9  # no automatic full collection
        keep_busy(busy, 1.5, 0.1)
        assert collector.collections == 0
        assert wait_until(lambda: collector.collections >= 1, timeout=3)  # quiet for 0.6 s: collected


def test_a_server_that_is_never_quiet_still_collects_at_the_upper_bound():
    with started_collector(quiet_seconds=60, at_most_seconds=0.8) as (collector, busy):
        keep_busy(busy, 2.0, 0.05)
        assert collector.collections >= 1
