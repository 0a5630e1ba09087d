"""The load of bench/bench_load.py on 1, 2 and 3 ``vtt serve`` processes behind nginx on PostgreSQL + Redis,
beside the single SQLite process.

    python bench/bench_cluster.py [--jurors 500,1000] [--setups sqlite,pg,pg+redis-1,pg+redis-2,pg+redis-3]
                                  [--rounds paced,burst,sheets] [--seed 1]

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

PostgreSQL (``VTT_BENCH_POSTGRES``, default postgres@127.0.0.1:5432) and Redis (``VTT_BENCH_REDIS``, default
redis://127.0.0.1:6379/6, flushed) of this machine; Debian's nginx.  Run nothing else on them meanwhile: the
PostgreSQL, redis-server and PUBLISH figures are the whole server's.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_load import ROUNDS, Served, quantile, run_server, vtt_target  # noqa: E402

from tests.support.nginx import NGINX, Nginx  # noqa: E402

POSTGRES_ADMIN_URL = os.environ.get("VTT_BENCH_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
REDIS_URL = os.environ.get("VTT_BENCH_REDIS", "redis://127.0.0.1:6379/6")
SETUPS = ("sqlite", "pg", "pg+redis-1", "pg+redis-2", "pg+redis-3")
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
        self.readings.append(Reading(vtt, nginx, postgres_cpu_seconds(), redis_cpu, publishes, bytes_out))
        return sum(vtt)

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


def run_setup(setup: str, jurors: int, seed: int, rounds: tuple[str, ...]) -> list[dict]:
    """One setup at ``jurors``: per round, its figures."""
    processes = int(setup.rsplit("-", 1)[1]) if "redis" in setup else 1
    deployment = Deployment(processes, behind_nginx="redis" in setup)
    folder = Path(tempfile.mkdtemp(prefix=f"vtt-bench-cluster-{setup}-"))
    try:
        with ExitStack() as stack:
            database_url = stack.enter_context(postgres_database()) if setup != "sqlite" else None
            target = vtt_target(jurors, folder, database_url)
            # What every process shares (docs/deploy.md's vtt.env); left unset, each would generate a SECRET_KEY.
            target.env["SECRET_KEY"] = secrets.token_hex(32)
            if "redis" in setup:
                import redis

                redis.Redis.from_url(REDIS_URL).flushdb()  # rate-limit counts of an earlier run
                target.env.update({"REDIS_URL": REDIS_URL, "VTT_TRUSTED_PROXIES": "1"})
            result = run_server(target, seed, rounds, serve=deployment)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    readings = deployment.clusters[-1].readings
    figures = []
    for index, item in enumerate(result.rounds):
        before, after = readings[2 * index], readings[2 * index + 1]
        actions = item.acked["vote"] + item.acked["sheet"]
        per_thousand = 1000 / max(actions, 1)
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
                "consistent": item.recorded["votes"] == item.acked["vote"] == item.recorded["vote_events"]
                and item.recorded["sheet_events"] == item.acked["sheet"],
                "vtt_cpu": [(a - b) * per_thousand for a, b in zip(after.vtt, before.vtt)],
                "nginx_cpu": (after.nginx - before.nginx) * per_thousand,
                "postgres_cpu": (after.postgres - before.postgres) * per_thousand if database_url else 0.0,
                "redis_cpu": (after.redis - before.redis) * per_thousand,
                "publishes": (after.publishes - before.publishes) / max(actions, 1),
                "redis_bytes": (after.redis_bytes_out - before.redis_bytes_out) / max(actions, 1),
                "stall": item.stall_ms,
            }
        )
    return figures


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jurors", default="500,1000", help="comma-separated numbers of jurors")
    parser.add_argument("--setups", default=",".join(SETUPS), help="which setups, of " + ", ".join(SETUPS))
    parser.add_argument("--rounds", default=",".join(ROUNDS), help="which rounds, of " + ", ".join(ROUNDS))
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    counts = [int(n) for n in args.jurors.split(",")]
    setups = args.setups.split(",")
    rounds = tuple(kind for kind in ROUNDS if kind in args.rounds.split(","))
    if not set(setups) <= set(SETUPS) or not rounds or any(n < 1 or n > 5000 for n in counts):
        parser.error(f"--setups of {', '.join(SETUPS)}; --rounds of {', '.join(ROUNDS)}; --jurors 1-5000 each")
    print(f"bench_cluster: {os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M')}; one load process")
    rows = []
    for jurors in counts:
        for setup in setups:
            started = time.monotonic()
            rows += run_setup(setup, jurors, args.seed, rounds)
            print(f"  {setup} at {jurors} jurors: {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    print_figures(rows)
    raise SystemExit(0 if all(row["consistent"] and not row["errors"] for row in rows) else 1)


if __name__ == "__main__":
    main()
