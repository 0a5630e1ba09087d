"""bench/bench_connect.py at a tiny size, so that the harness cannot rot: 30 jurors connect to a served process,
then all leave at once.  Nothing is timed: this checks that every juror connected and that the server let every
connection go."""

from __future__ import annotations

import importlib
import sys

import pytest

from tests.support.paths import ROOT


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        yield importlib.import_module("bench_connect")
    finally:
        sys.path.remove(str(ROOT / "bench"))


@pytest.mark.slow
def test_thirty_jurors_connect_and_leave_and_the_server_lets_every_connection_go(bench):
    run = bench.one_run(30, None, 1)
    assert run["connected"] == 30 and run["failures"] == []
    assert run["cpu_per_1000"] > 0 and run["seconds"] > 0
    assert run["left"] < 120  # the server's /healthz listed no session before the bench gave up waiting
