"""The load of bench/bench_load.py on 1, 2 and 3 ``vtt serve`` processes behind nginx on PostgreSQL + Redis,
beside the single SQLite process.

    python bench/bench_cluster.py [--jurors 500,1000] [--setups sqlite,pg,pg+redis-1,pg+redis-2,pg+redis-3]
                                  [--rounds paced,burst,sheets] [--seed 1]
    python bench/bench_cluster.py --sessions 20 --jurors 250 [--setups pg+redis-1,pg+redis-2,pg+redis-3]
                                  [--rounds paced,burst] [--sessions-per-load 5]

Setups (each on a fresh database: SQLite file, or a new PostgreSQL database dropped afterwards):

- ``sqlite``: bench_load's single process, the load connected to it directly;
- ``pg``: one process on PostgreSQL, directly, without Redis (what the queue costs is the difference to the next);
- ``pg+redis-N``: N processes on PostgreSQL with ``REDIS_URL``, behind nginx with deploy/nginx.conf (tests/
  test_cluster.py's ``Nginx``, with room for thousands of connections); the jurors' websockets are spread over the
  processes by nginx (each connection routed by its own request id: the load client keeps no cookie).

The same rounds as bench_load (paced, burst, sheets; one load process, one host).  Printed per setup and round: vote
ack p50/p99, actions (votes + sheet saves) acked per second from go to the last ack, and CPU seconds per 1,000 actions
of each vtt process, of nginx, of every PostgreSQL process and of redis-server (utime + stime from /proc before and
after the round); for Redis, PUBLISH calls and bytes sent to subscribers per action.  The burst round (every juror
votes at once) is what one session's write path commits at most: votes/s from go to its last ack.

**Many sessions** (``--sessions S``: S sessions of ``--jurors`` jurors each, in one database): each session has its
own host connection, all sessions' rounds go at the same moment, and every connection names its session on its URL
(``?session=<join code>``, as the pages do), so nginx routes each session to one process, which owns it and keeps its
broadcasts to itself (vtt.realtime.ownership).  The jurors of ``--sessions-per-load`` sessions share a load process.
Printed per setup and round: the same figures over all sessions, and per vtt process its CPU per 1,000 of the actions
of the sessions it serves (which process serves which session: /healthz's ``sessions``, asked as the host with the
host API token at the round's end), how many sessions and connections each serves, whether each session is on one
process that owns it, and per round the projection: N processes on their own cores would ack N x one's CPU per 1,000
actions / theirs x one process's actions/s (target: 1.9x for two, 2.8x for three).

PostgreSQL (``VTT_BENCH_POSTGRES``, default postgres@127.0.0.1:5432) and Redis (``VTT_BENCH_REDIS``, default
redis://127.0.0.1:6379/6, flushed) of this machine; Debian's nginx.  Run nothing else on them meanwhile: the
PostgreSQL, redis-server and PUBLISH figures are the whole server's.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import secrets
import shutil
import sys
import tempfile
import time
import urllib.request
import uuid
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_load import (  # noqa: E402
    RoundResult,
    consistent,
    quantile,
    run_server,
    run_sessions,
)
from servers import ROUNDS, Served, vtt_target, vtt_targets  # noqa: E402

from tests.support.nginx import NGINX, Nginx  # noqa: E402
from vtt.access.host_token import host_token  # noqa: E402

POSTGRES_ADMIN_URL = os.environ.get("VTT_BENCH_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
REDIS_URL = os.environ.get("VTT_BENCH_REDIS", "redis://127.0.0.1:6379/6")
SETUPS = ("sqlite", "pg", "pg+redis-1", "pg+redis-2", "pg+redis-3")
SESSIONS_SETUPS = ("pg+redis-1", "pg+redis-2", "pg+redis-3")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def children(pid: int) -> list[int]:
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def postgres_cpu_seconds() -> float:
    """Every PostgreSQL process of this machine (the vtt processes' backends among them)."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "comm").read_text().strip() == "postgres":
                total += cpu_seconds(int(entry.name))
        except OSError:
            continue  # ended meanwhile
    return total


class RoomyNginx(Nginx):
    """tests/test_cluster.py's nginx (deploy/nginx.conf as it is), with room for a juror's two connections (client
    and upstream) at a thousand jurors and more: its main config allows 1,024 connections in all."""

    def __init__(self, binary: str, folder: Path, backends: list[str]):
        super().__init__(binary, folder, backends)
        config = folder / "nginx.conf"
        events = "events { worker_connections 1024; }"
        assert events in config.read_text(), "tests/test_cluster.py's Nginx changed its events block"
        roomy = "worker_processes 1;\nworker_rlimit_nofile 20000;\nevents { worker_connections 16384; }"
        config.write_text(config.read_text().replace(events, roomy))


@dataclass
class Reading:
    """CPU seconds of each part at one moment, and Redis's counters."""

    vtt: list[float]
    nginx: float
    postgres: float
    redis: float
    publishes: int
    redis_bytes_out: int
    sessions: list[dict[str, dict]]  # per vtt process, /healthz's sessions: join code -> connections, owner


class Cluster:
    """``processes`` vtt processes, behind nginx when ``behind_nginx``; to bench_load.run_server it looks like one
    ``Served`` (url, cpu_seconds, stall_ms, memory_mib).  Each ``cpu_seconds()`` call (run_server makes one before
    and one after each round) also keeps a ``Reading`` of every part."""

    def __init__(self, command: list[str], env: dict[str, str], folder: Path, processes: int, behind_nginx: bool):
        self.servers = [Served(command, env, folder) for _ in range(processes)]
        self.behind_nginx, self.folder = behind_nginx, folder
        self.redis = None
        if env.get("REDIS_URL"):
            import redis

            self.redis = redis.Redis.from_url(env["REDIS_URL"])
        self.readings: list[Reading] = []
        self._stack = ExitStack()
        self.host_api_token = host_token(env["SECRET_KEY"], env["VTT_HOST_PASSWORD"])

    def __enter__(self) -> Cluster:
        for server in self.servers:
            self._stack.enter_context(server)
        self.process = self.servers[0].process  # bench_load's --profile samples the first
        self.url = self.servers[0].url
        self.nginx = None
        if self.behind_nginx:
            backends = [f"127.0.0.1:{server.port}" for server in self.servers]
            self.nginx = self._stack.enter_context(RoomyNginx(NGINX, self.folder / "nginx", backends))
            self.url = self.nginx.url
        return self

    def __exit__(self, *exc) -> None:
        self._stack.__exit__(*exc)

    def cpu_seconds(self) -> float:
        nginx = 0.0
        if self.nginx is not None:
            master = self.nginx.process.pid
            nginx = cpu_seconds(master) + sum(cpu_seconds(worker) for worker in children(master))
        redis_cpu, publishes, bytes_out = 0.0, 0, 0
        if self.redis is not None:
            redis_cpu = cpu_seconds(self.redis.info("server")["process_id"])
            publishes = self.redis.info("commandstats").get("cmdstat_publish", {}).get("calls", 0)
            bytes_out = self.redis.info("stats")["total_net_output_bytes"]
        vtt = [server.cpu_seconds() for server in self.servers]
        postgres = postgres_cpu_seconds()
        sessions = [self.sessions_served(server) for server in self.servers]
        self.readings.append(Reading(vtt, nginx, postgres, redis_cpu, publishes, bytes_out, sessions))
        return sum(vtt)

    def sessions_served(self, server: Served) -> dict[str, dict]:
        """/healthz's ``sessions`` of one process, asked as the host (keyed by join code)."""
        headers = {"Authorization": f"Bearer {self.host_api_token}"}
        with urllib.request.urlopen(
            urllib.request.Request(f"{server.url}/healthz", headers=headers), timeout=10
        ) as reply:
            return json.load(reply)["sessions"]

    def stall_ms(self, reset: bool = False) -> float:
        return max(server.stall_ms(reset) for server in self.servers)

    def memory_mib(self, key: str = "VmRSS") -> float:
        return sum(server.memory_mib(key) for server in self.servers)


@dataclass
class Deployment:
    """How run_server's server is made for one setup; keeps the cluster it made, for its readings."""

    processes: int
    behind_nginx: bool
    clusters: list[Cluster] = field(default_factory=list)

    def __call__(self, command: list[str], env: dict[str, str], folder: Path) -> Cluster:
        self.clusters.append(Cluster(command, env, folder, self.processes, self.behind_nginx))
        return self.clusters[-1]


@contextmanager
def postgres_database():
    """A new, empty PostgreSQL database; dropped afterwards."""
    from sqlalchemy import create_engine, text

    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    name = f"vtt_bench_{uuid.uuid4().hex[:10]}"
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def run_setup(
    setup: str, jurors: int, seed: int, rounds: tuple[str, ...], sessions: int = 0, sessions_per_load: int = 5
) -> list[dict]:
    """One setup at ``jurors``: per round, its figures.  ``sessions``: that many sessions of ``jurors`` jurors each,
    played at once, every connection naming its session (so nginx routes each session to one process), the jurors
    of ``sessions_per_load`` sessions per load process; 0: bench_load's one session, its jurors spread by nginx."""
    processes = int(setup.rsplit("-", 1)[1]) if "redis" in setup else 1
    deployment = Deployment(processes, behind_nginx="redis" in setup)
    folder = Path(tempfile.mkdtemp(prefix=f"vtt-bench-cluster-{setup}-"))
    try:
        with ExitStack() as stack:
            database_url = stack.enter_context(postgres_database()) if setup != "sqlite" else None
            targets = vtt_targets(sessions, jurors, folder, database_url) if sessions else None
            target = targets[0] if targets else vtt_target(jurors, folder, database_url)
            # What every process shares (docs/deploy.md's vtt.env); left unset, each would generate a SECRET_KEY.
            target.env["SECRET_KEY"] = secrets.token_hex(32)
            if "redis" in setup:
                import redis

                redis.Redis.from_url(REDIS_URL).flushdb()  # rate-limit counts of an earlier run
                target.env.update({"REDIS_URL": REDIS_URL, "VTT_TRUSTED_PROXIES": "1"})
            if targets:
                loads = math.ceil(sessions / sessions_per_load)
                results = run_sessions(
                    targets, seed, rounds, serve=deployment, load_processes=loads, name_sessions=True
                )
            else:
                result = run_server(target, seed, rounds, serve=deployment)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    readings = deployment.clusters[-1].readings
    if targets:
        codes = [target.host_auth["code"] for target in targets]
        connected = sum(result.connected for result in results)
        return [
            {
                **sessions_figures(
                    setup, jurors, codes, [result.rounds[i] for result in results], *readings[2 * i : 2 * i + 2]
                ),
                "unconnected": sessions * jurors - connected,
            }
            for i in range(len(rounds))
        ]
    figures = []
    for index, item in enumerate(result.rounds):
        before, after = readings[2 * index], readings[2 * index + 1]
        actions = item.acked["vote"] + item.acked["sheet"]
        figures.append(
            {
                "setup": setup,
                "jurors": jurors,
                "connected": result.connected,
                "round": item.kind,
                "p50": quantile(item.latencies["vote"], 0.5),
                "p99": quantile(item.latencies["vote"], 0.99),
                "actions": actions,
                "rate": actions / max(item.seconds, 1e-9),
                "errors": sum(item.errors.values()),
                "consistent": consistent("vtt", item),
                "vtt_cpu": [(a - b) * 1000 / max(actions, 1) for a, b in zip(after.vtt, before.vtt)],
                **shared_figures(before, after, actions, database_url is not None),
                "stall": item.stall_ms,
            }
        )
    return figures


def shared_figures(before: Reading, after: Reading, actions: int, on_postgres: bool) -> dict:
    """What nginx, PostgreSQL and Redis spent per 1,000 actions, and the PUBLISH calls and bytes per action."""
    per_thousand = 1000 / max(actions, 1)
    return {
        "nginx_cpu": (after.nginx - before.nginx) * per_thousand,
        "postgres_cpu": (after.postgres - before.postgres) * per_thousand if on_postgres else 0.0,
        "redis_cpu": (after.redis - before.redis) * per_thousand,
        "publishes": (after.publishes - before.publishes) / max(actions, 1),
        "redis_bytes": (after.redis_bytes_out - before.redis_bytes_out) / max(actions, 1),
    }


def sessions_figures(
    setup: str, jurors: int, codes: list[str], items: list[RoundResult], before: Reading, after: Reading
) -> dict:
    """One round of many sessions (``items``: each session's result): the figures of all, and per vtt process the
    sessions it serves and its CPU per 1,000 of their actions (/healthz's sessions at the round's end say which
    process serves which session's connections)."""
    actions = [item.acked["vote"] + item.acked["sheet"] for item in items]
    # per process, its share of each session's actions: by the session's connections there
    connections = [[served.get(code, {}).get("connections", 0) for code in codes] for served in after.sessions]
    totals = [max(sum(column), 1) for column in zip(*connections)]
    handled = [sum(n * a / t for n, a, t in zip(row, actions, totals)) for row in connections]
    cpu = [a - b for a, b in zip(after.vtt, before.vtt)]
    on_one = all(
        sum(1 for served in after.sessions if served.get(code, {}).get("connections")) == 1
        and any(served.get(code, {}).get("connections") and served[code]["owner"] for served in after.sessions)
        for code in codes
    )
    votes = [latency for item in items for latency in item.latencies["vote"]]
    seconds = max(max(item.seconds for item in items), 1e-9)
    return {
        "setup": setup,
        "sessions": len(items),
        "jurors": jurors,
        "round": items[0].kind,
        "p50": quantile(votes, 0.5),
        "p99": quantile(votes, 0.99),
        "actions": sum(actions),
        "rate": sum(actions) / seconds,
        "errors": sum(sum(item.errors.values()) for item in items),
        "consistent": all(consistent("vtt", item) for item in items),
        "vtt_cpu": [seconds * 1000 / share if share else float("nan") for seconds, share in zip(cpu, handled)],
        "vtt_cpu_all": sum(cpu) * 1000 / max(sum(actions), 1),
        **shared_figures(before, after, sum(actions), True),
        "spread": [  # per process: sessions, connections, its actions/s
            (sum(1 for code in codes if served.get(code, {}).get("connections")), sum(row), share / seconds)
            for served, row, share in zip(after.sessions, connections, handled)
        ],
        "on_one": on_one,
    }


def print_figures(rows: list[dict]) -> None:
    print(
        "| jurors | setup | round | vote ack p50 / p99 | actions | actions/s | CPU s per 1,000 actions: each vtt "
        "process | nginx | PostgreSQL | Redis | PUBLISH per action | Redis bytes out per action | recorded == acked |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        each = " + ".join(f"{cpu:.2f}" for cpu in row["vtt_cpu"])
        print(
            f"| {row['jurors']:,} | {row['setup']} | {row['round']} | {row['p50']:.0f} / {row['p99']:.0f} ms "
            f"| {row['actions']:,} | {row['rate']:,.0f} | {each} | {row['nginx_cpu']:.2f} | {row['postgres_cpu']:.2f} "
            f"| {row['redis_cpu']:.2f} | {row['publishes']:.2f} | {row['redis_bytes']:,.0f} "
            f"| {'yes' if row['consistent'] and not row['errors'] else 'NO (' + str(row['errors']) + ' errors)'} |",
            flush=True,
        )


def print_sessions_figures(rows: list[dict]) -> None:
    print(
        "| sessions x jurors | setup | round | vote ack p50 / p99 | actions | actions/s | CPU s per 1,000 of its "
        "actions: each vtt process | all vtt processes | nginx | PostgreSQL | Redis | PUBLISH per action "
        "| sessions (connections; its actions/s) per process | each session on one process | recorded == acked |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        each = " + ".join(f"{cpu:.2f}" for cpu in row["vtt_cpu"])
        spread = " + ".join(f"{count} ({connections:,}; {rate:,.0f}/s)" for count, connections, rate in row["spread"])
        print(
            f"| {row['sessions']} x {row['jurors']:,} | {row['setup']} | {row['round']} "
            f"| {row['p50']:.0f} / {row['p99']:.0f} ms | {row['actions']:,} | {row['rate']:,.0f} | {each} "
            f"| {row['vtt_cpu_all']:.2f} | {row['nginx_cpu']:.2f} | {row['postgres_cpu']:.2f} "
            f"| {row['redis_cpu']:.2f} | {row['publishes']:.2f} | {spread} | {'yes' if row['on_one'] else 'NO'} "
            f"| {'yes' if row['consistent'] and not row['errors'] else 'NO (' + str(row['errors']) + ' errors)'}"
            + (f"; {row['unconnected']} jurors not connected |" if row["unconnected"] else " |"),
            flush=True,
        )


def projections(rows: list[dict]) -> list[str]:
    """Per round, what N processes on their own cores would do relative to one: N x (1,000 / CPU per 1,000 actions
    of a process), the vtt processes' CPU per 1,000 actions at N against it at one (``pg+redis-1``)."""
    lines = []
    for kind in dict.fromkeys(row["round"] for row in rows):
        one = next((row for row in rows if row["round"] == kind and row["setup"] == "pg+redis-1"), None)
        if one is None:
            continue
        for row in rows:
            processes = len(row["vtt_cpu"])
            if row["round"] != kind or row is one or not row["setup"].startswith("pg+redis-"):
                continue
            target = {2: 1.9, 3: 2.8}.get(processes, 0.95 * processes)
            times = processes * one["vtt_cpu_all"] / row["vtt_cpu_all"]
            flat = max(cpu for cpu in row["vtt_cpu"] if not math.isnan(cpu)) / one["vtt_cpu_all"]
            lines.append(
                f"{kind}: {processes} processes on their own cores would ack {times:.2f} x one process's actions/s "
                f"({'met' if times >= target else 'MISSED'}: >= {target:g} x); the busiest process spends "
                f"{flat:.2f} x one process's CPU per 1,000 actions ({'met' if flat <= 1.1 else 'MISSED'}: <= 1.10 x)"
            )
    return lines


def same_load(rows: list[dict]) -> list[str]:
    """Each process of N against one process alone at about its own load (the ``pg+redis-1`` row of the same round
    whose actions/s is nearest the process's): CPU per 1,000 actions falls as a process's load rises (bigger
    batches, fixed costs spread), so this is the comparison that isolates what the other processes cost it."""
    lines = []
    for row in rows:
        alone = [one for one in rows if one["setup"] == "pg+redis-1" and one["round"] == row["round"]]
        if row["setup"] == "pg+redis-1" or not row["setup"].startswith("pg+redis-") or not alone:
            continue
        for (sessions, _, rate), cpu in zip(row["spread"], row["vtt_cpu"]):
            if not sessions:
                continue
            one = min(alone, key=lambda one: abs(math.log(max(rate, 1e-9) / one["rate"])))
            lines.append(
                f"{row['setup']} {row['round']} ({row['sessions']} x {row['jurors']}): a process of {sessions} "
                f"sessions at {rate:,.0f} actions/s spends {cpu:.2f} CPU s per 1,000; one process alone at "
                f"{one['rate']:,.0f} actions/s ({one['sessions']} x {one['jurors']}) {one['vtt_cpu_all']:.2f} "
                f"({cpu / one['vtt_cpu_all']:.2f} x)"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jurors", default="500,1000", help="comma-separated numbers of jurors (per session)")
    parser.add_argument(
        "--setups",
        help="which setups, of " + ", ".join(SETUPS) + " (default: all; with "
        "--sessions: " + ", ".join(SESSIONS_SETUPS) + ")",
    )
    parser.add_argument("--rounds", default=",".join(ROUNDS), help="which rounds, of " + ", ".join(ROUNDS))
    parser.add_argument(
        "--sessions", default="0", help="comma-separated numbers of sessions of --jurors jurors each, played at once"
    )
    parser.add_argument("--sessions-per-load", type=int, default=5, help="sessions per load process (--sessions)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    counts = [int(n) for n in args.jurors.split(",")]
    setups = (args.setups or ",".join(SESSIONS_SETUPS if args.sessions != "0" else SETUPS)).split(",")
    rounds = tuple(kind for kind in ROUNDS if kind in args.rounds.split(","))
    if not set(setups) <= set(SETUPS) or not rounds or any(n < 1 or n > 5000 for n in counts):
        parser.error(f"--setups of {', '.join(SETUPS)}; --rounds of {', '.join(ROUNDS)}; --jurors 1-5000 each")
    many = [int(n) for n in args.sessions.split(",")]
    if (any(many) and min(many) < 1) or max(many) * max(counts) > 6000 or args.sessions_per_load < 1:
        parser.error("--sessions 1 or more each, x --jurors at most 6,000 jurors; --sessions-per-load at least 1")
    loads = (
        f"{args.sessions} sessions at once, {args.sessions_per_load} a load process"
        if any(many)
        else "one load process"
    )
    print(f"bench_cluster: {os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M')}; {loads}")
    rows = []
    for sessions in many:
        for jurors in counts:
            for setup in setups:
                started = time.monotonic()
                rows += run_setup(setup, jurors, args.seed, rounds, sessions, args.sessions_per_load)
                took = time.monotonic() - started
                print(f"  {setup}, {sessions or 1} x {jurors} jurors: {took:.0f} s", file=sys.stderr, flush=True)
    if any(many):
        print_sessions_figures(rows)
        for sessions in many:
            for jurors in counts:
                for line in projections(
                    [row for row in rows if (row["sessions"], row["jurors"]) == (sessions, jurors)]
                ):
                    print(f"  {sessions} x {jurors}, {line}")
        for line in same_load(rows):
            print(f"  {line}")
    else:
        print_figures(rows)
    sound = all(
        row["consistent"] and not row["errors"] and row.get("on_one", True) and not row.get("unconnected")
        for row in rows
    )
    raise SystemExit(0 if sound else 1)


if __name__ == "__main__":
    main()
