"""bench/bench_displaced.py's scenario at a tiny size, so that the harness cannot rot: a session played to its end
over Socket.IO, 20 displaced jurors connected at once judging it, a live session of 5 jurors beside it, on a real
server process.  Nothing is timed: the figures are the benchmark's; this checks that every action is acknowledged
and recorded once."""

from __future__ import annotations

import importlib
import sys

import pytest

from tests.support.paths import ROOT


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        yield importlib.import_module("bench_displaced")
    finally:
        sys.path.remove(str(ROOT / "bench"))


@pytest.mark.slow
def test_a_tiny_displaced_jury_beside_a_live_session_records_what_was_acknowledged(bench, tmp_path):
    result = bench.run(displaced=20, live=5, pace=0.2, folder=tmp_path / "run", live_window=1.0, live_lead=0.0)
    judged = result.judged
    assert result.connected == 20 and result.connect_failures == [] and len(result.to_snapshot) == 20
    assert judged["errors"] == {}
    # every juror judged its 3 rounds: 4 sheet lines and a vote each, and got its completion code with the last
    rounds, lines = 3, bench.LINES_PER_ROUND
    assert judged["acked"]["vote"] == 20 * rounds and judged["acked"]["lines"] == 20 * rounds * lines
    assert judged["acked"]["completed"] == 20
    assert result.recorded == {
        "votes": 20 * rounds,
        "lines": 20 * rounds * lines,
        "vote_events": 20 * rounds,
        "sheet_events": judged["acked"]["sheet"],
    }
    assert result.displaced_consistent
    # the live session's 4 rounds, alone and beside: every live ack recorded once
    assert [(when, item.kind) for when, item in result.live_rounds] == [
        ("alone", "paced"),
        ("alone", "sheets"),
        ("beside", "paced"),
        ("beside", "sheets"),
    ]
    for _when, item in result.live_rounds:
        assert item.errors == {} and item.acked["vote"] == 5 and item.recorded["votes"] == 5
        assert item.recorded["vote_events"] == 5 and item.recorded["sheet_events"] == item.acked["sheet"]
    assert bench.sound(result)
