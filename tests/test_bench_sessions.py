"""bench/bench_cluster.py's many-sessions load at a tiny size, so that the harness cannot rot: three sessions of five
jurors at once on two processes behind nginx, their jurors from two load processes, one burst round.  Nothing is
timed: the figures are the benchmark's; this checks that every ack is recorded, that each session's connections
reach one process which owns it, and that no broadcast went through Redis.

A Redis server of the test's own, so that its PUBLISH count is this run's alone."""

from __future__ import annotations

import importlib
import sys
from contextlib import contextmanager

import pytest

from tests.support.cluster import OwnRedis
from tests.support.paths import ROOT

SESSIONS, JURORS = 3, 5


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        yield importlib.import_module("bench_cluster")
    finally:
        sys.path.remove(str(ROOT / "bench"))


@pytest.mark.slow
@pytest.mark.postgres
def test_many_sessions_each_on_one_process_record_every_ack_and_publish_nothing(
    bench, postgres_url, nginx_binary, tmp_path, monkeypatch
):
    @contextmanager
    def the_tests_database():
        yield postgres_url

    monkeypatch.setattr(bench, "postgres_database", the_tests_database)
    with OwnRedis(tmp_path / "redis") as redis:
        monkeypatch.setattr(bench, "REDIS_URL", redis.url)
        (row,) = bench.run_setup("pg+redis-2", JURORS, 1, ("burst",), sessions=SESSIONS, sessions_per_load=2)
    assert row["round"] == "burst" and row["sessions"] == SESSIONS and row["jurors"] == JURORS
    assert row["unconnected"] == 0 and row["errors"] == 0 and row["actions"] == SESSIONS * JURORS
    assert row["consistent"]  # per session: vote rows == vote events == acked
    assert row["publishes"] == 0
    assert row["on_one"]
    # every session served by exactly one of the two processes: its jurors and its host there
    assert sum(count for count, _, _ in row["spread"]) == SESSIONS
    assert sum(connections for _, connections, _ in row["spread"]) == SESSIONS * (JURORS + 1)
    assert len(row["vtt_cpu"]) == 2 and row["vtt_cpu_all"] > 0
