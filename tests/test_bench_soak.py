"""bench/bench_soak.py at a tiny size, so that the harness cannot rot: 4 sessions played whole on a served process,
2 at once, each followed by a displaced juror.  Nothing is timed and no memory figure is judged here (the bench's own
target is); this checks that every session was played and that the server serves and owns none of them at the end."""

from __future__ import annotations

import importlib
import sys

import pytest

from tests.support.paths import ROOT


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        yield importlib.import_module("bench_soak")
    finally:
        sys.path.remove(str(ROOT / "bench"))


@pytest.mark.slow
def test_four_sessions_are_played_whole_and_the_server_keeps_none_of_them(bench):
    figures, held = bench.soak_run(sessions=4, alive=2, warmup=2, jurors=2, settle=1.0, every=1)
    assert set(figures) == {2, 3, 4} and all(rss > 0 for rss in figures.values())
    assert held == {}
