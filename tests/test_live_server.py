"""The live session on a real server: ``python run.py`` (gevent) in a subprocess, python-socketio clients.

Everything stays on 127.0.0.1; every wait has a timeout and every loop a bound.
"""

from __future__ import annotations

import asyncio
import csv
import itertools
import json
import re
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import requests
import socketio
from sqlalchemy import func, select

from tests.support.apps import HOST_PASSWORD, host_api_token
from tests.support.live import TO_JUDGING, identity_leaks, make_session
from tests.support.paths import ROOT
from tests.support.served import ServedApp
from tests.support.waiting import wait_until, wait_until_async
from vtt.models import Event, Juror, QuestionBank, SheetEntry, Vote

CALL_TIMEOUT = 30  # seconds a client waits for one acknowledgement
SCENARIO_TIMEOUT = 60  # seconds one scenario's event loop may run
_ids = itertools.count(1)


def new_id(prefix: str) -> str:
    return f"{prefix}-{next(_ids)}"


def host_cookie(url: str) -> str:
    """Sign in as the host over HTTP (password + the login form's CSRF token); the Cookie header to connect with."""
    with requests.Session() as http:
        page = http.get(f"{url}/host/login", timeout=5).text
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
        signed_in = http.post(
            f"{url}/host/login", data={"password": HOST_PASSWORD, "csrf_token": csrf}, allow_redirects=False, timeout=5
        )
        assert signed_in.status_code == 302, signed_in.text
        return "; ".join(f"{name}={value}" for name, value in http.cookies.items())


class Peer:
    """One asyncio python-socketio client over websocket, keeping every message it receives, in order."""

    def __init__(self, url: str, auth: dict[str, Any], cookie: str | None = None):
        self.url, self.auth = url, auth
        self.headers = {"Cookie": cookie} if cookie else {}
        self.client = socketio.AsyncClient(reconnection=False)
        self.seen: list[tuple[str, Any]] = []
        self.acks: list[tuple[str, Any]] = []  # (event, ack) of every call, as the audit log records them
        self._news = asyncio.Event()
        self.client.on("*", self._record)

    async def _record(self, event: str, data: Any = None) -> None:
        self.seen.append((event, data))
        self._news.set()

    async def connect(self) -> Peer:
        await self.client.connect(
            self.url, auth=self.auth, headers=self.headers, transports=["websocket"], wait_timeout=10
        )
        return self

    async def close(self) -> None:
        await self.client.disconnect()

    async def call(self, event: str, payload: dict[str, Any]) -> dict[str, Any]:
        reply = await self.client.call(event, payload, timeout=CALL_TIMEOUT)
        self.acks.append((event, reply))
        return reply

    async def host(self, action: str, **args: Any) -> dict[str, Any]:
        reply = await self.call("host", {"id": new_id("h"), "action": action, **args})
        assert reply["ok"], (action, reply)
        return reply

    async def wait_for(self, event: str, test: Callable[[Any], bool] = lambda _p: True, timeout: float = 10) -> Any:
        """The first ``event`` message that passes ``test``, waiting for it up to ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            found = next((p for name, p in self.seen if name == event and test(p)), None)
            if found is not None:
                return found
            left = deadline - time.monotonic()
            assert left > 0, f"no {event!r} message passing the test within {timeout} s; got {self.seen[-3:]}"
            self._news.clear()
            try:
                await asyncio.wait_for(self._news.wait(), left)
            except TimeoutError:
                pass


def run(scenario) -> Any:
    async def bounded():
        return await asyncio.wait_for(scenario, SCENARIO_TIMEOUT)

    return asyncio.run(bounded())


async def connect_jurors(url: str, tokens: list[str]) -> list[Peer]:
    return list(await asyncio.gather(*(Peer(url, {"token": token}).connect() for token in tokens)))


async def connect_host(url: str, code: str) -> Peer:
    cookie = await asyncio.to_thread(host_cookie, url)
    return await Peer(url, {"code": code, "role": "host"}, cookie).connect()


def count(db_factory, model, *where) -> int:
    with db_factory() as db:
        return db.scalar(select(func.count()).select_from(model).where(*where))


# --- a: 50 jurors vote at once ----------------------------------------------------------------


def test_fifty_jurors_vote_at_once_on_a_gevent_server(database_url, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=50)

    async def scenario(url: str):
        host = await connect_host(url, people.code)
        jurors = await connect_jurors(url, list(people.jurors.values()))
        for move in TO_JUDGING:
            await host.host(move)
        opened = (await host.host("open_vote"))["state_version"]
        replies = await asyncio.gather(
            *(
                juror.call("vote", {"id": new_id("v"), "round": 1, "alias": "ABC"[i % 3], "confidence": 3})
                for i, juror in enumerate(jurors)
            )
        )
        opening = [await juror.wait_for("status", lambda s: s["state_version"] == opened) for juror in jurors]
        counted = await host.wait_for("votes", lambda v: v["voted"] == 50)
        await asyncio.gather(*(peer.close() for peer in [host, *jurors]))
        return replies, opening, counted

    database_file = Path(database_url.removeprefix("sqlite:///"))
    with ServedApp({"DATABASE_URL": database_url}) as served:
        replies, opening, counted = run(scenario(served.url))
        asked = urllib.request.Request(
            f"{served.url}/healthz?reset=1", headers={"Authorization": f"Bearer {host_api_token()}"}
        )
        with urllib.request.urlopen(asked, timeout=10) as response:
            loop = json.load(response)["loop"]
        written = database_file.stat().st_mtime_ns
        # the writer is quiet: the server copies its WAL into the database file by itself
        wait_until(
            lambda: database_file.stat().st_mtime_ns > written,
            timeout=20,
            message="the server to checkpoint its WAL into the database file",
        )
    assert [reply["ok"] for reply in replies] == [True] * 50, [r for r in replies if not r["ok"]][:3]
    assert not any(reply.get("duplicate") for reply in replies)
    assert all(status["phase"] == "voting" and status["round"] == 1 for status in opening)
    assert counted == {**counted, "round": 1, "voted": 50, "jurors": 50}
    assert count(db_factory, Vote) == 50
    assert count(db_factory, Event, Event.kind == "vote") == 50
    assert "Traceback" not in served.output, served.output
    assert loop["watching"] is True and 0 <= loop["max_stall_ms"] < 5000 and loop["window_seconds"] > 0


# --- b: a restart in the middle of a round ----------------------------------------------------


def test_a_server_killed_mid_round_resumes_on_a_new_server(database_url, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=4)
    tokens = list(people.jurors.values())

    async def before_restart(url: str, crash: Callable[[], None]):
        host = await connect_host(url, people.code)
        jurors = await connect_jurors(url, tokens)
        for move in TO_JUDGING:
            await host.host(move)
        question = (await jurors[0].wait_for("answers"))["question"]
        for juror, (alias, note) in zip(jurors[:2], [("A", "too quick"), ("B", "hesitates")]):
            for line in (
                {"alias": alias, "note": note, "human_likeness": 2, "looks_like_ai": True},
                {"alias": "C", "note": "", "human_likeness": 5, "looks_like_ai": False},
            ):
                assert (await juror.call("sheet", {"id": new_id("s"), "question": question, **line}))["ok"]
        await host.host("open_vote")
        first_vote = {"id": "j1-vote", "round": 1, "alias": "C", "confidence": 5, "reason": "too fluent"}
        for juror, vote in zip(
            jurors,
            [first_vote, {"id": new_id("v"), "round": 1, "alias": "A"}, {"id": new_id("v"), "round": 1, "alias": None}],
        ):
            assert (await juror.call("vote", vote))["ok"]
        await asyncio.to_thread(crash)  # no goodbyes: the server dies under the connections
        await wait_until_async(
            lambda: not any(peer.client.connected for peer in [host, *jurors]),
            timeout=20,
            message="every client to notice the server is gone",
        )
        return question, first_vote

    async def after_restart(url: str, question: int, first_vote: dict[str, Any]):
        juror = await Peer(url, {"token": tokens[0]}).connect()
        snapshot = await juror.wait_for("snapshot")
        assert snapshot["status"]["phase"] == "voting" and snapshot["status"]["round"] == 1
        assert snapshot["votes"] == [{"round": 1, "slot": 1, "alias": "C", "confidence": 5, "reason": "too fluent"}]
        assert sorted(snapshot["sheet"], key=lambda row: row["alias"]) == [
            {"question": question, "alias": "A", "note": "too quick", "human_likeness": 2, "looks_like_ai": True},
            {"question": question, "alias": "C", "note": "", "human_likeness": 5, "looks_like_ai": False},
        ]
        assert (await juror.call("vote", first_vote))["duplicate"] is True  # its ack was lost in the crash
        last = await Peer(url, {"token": tokens[3]}).connect()
        assert (await last.call("vote", {"id": new_id("v"), "round": 1, "alias": "C"}))["ok"]
        host = await connect_host(url, people.code)
        assert (await host.wait_for("snapshot"))["votes"]["voted"] == 4
        await host.host("close_vote")
        tally = await host.wait_for("tally")
        await asyncio.gather(*(peer.close() for peer in (juror, last, host)))
        return tally

    env = {"DATABASE_URL": database_url}
    with ServedApp(env) as first:

        def crash() -> None:  # SIGKILL, not a shutdown: what was acknowledged was committed
            first.process.kill()
            first.process.wait(10)

        question, first_vote = run(before_restart(first.url, crash))
    with ServedApp(env) as second:
        tally = run(after_restart(second.url, question, first_vote))
    assert {row["alias"]: row["votes"] for row in tally["players"]} == {"A": 1, "B": 0, "C": 2}
    assert (tally["cast"], tally["abstentions"]) == (3, 1)
    assert count(db_factory, SheetEntry) == 4 and count(db_factory, Vote) == 4


# --- c: another process holding SQLite's write lock does not freeze the server ---------------

HOLD_LOCK = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
db.execute("BEGIN IMMEDIATE")
db.execute("INSERT INTO event (session_id, at, kind, actor, payload) "
           "VALUES (NULL, '2026-11-23', 'lock.test', 'cli', '{}')")
print("locked", time.monotonic(), flush=True)
sys.stdin.readline()  # held until the test says so (or, should it die, its end closes the pipe)
print("releasing", time.monotonic(), flush=True)
db.execute("COMMIT")
"""
MIN_LOCK_SECONDS = 2  # the server is watched for at least this long while the other process holds the lock


class Heartbeat(threading.Thread):
    """GET /healthz every ``every`` seconds from a thread of its own; (start, latency) of each, failures counted."""

    def __init__(self, url: str, every: float = 0.05):
        super().__init__(daemon=True)
        self.url, self.every = f"{url}/healthz", every
        self.samples: list[tuple[float, float]] = []
        self.failures = 0
        self.halt = threading.Event()

    def run(self) -> None:
        for _ in range(2000):  # bounded: 2,000 x >= 50 ms
            if self.halt.is_set():
                return
            started = time.monotonic()
            try:
                with urllib.request.urlopen(self.url, timeout=5) as response:
                    response.read()
            except OSError:
                self.failures += 1
            self.samples.append((started, time.monotonic() - started))
            self.halt.wait(self.every)

    def worst(self, start: float = 0, end: float = float("inf")) -> float:
        return max((latency for at, latency in self.samples if start <= at <= end), default=0.0)

    def answered(self, start: float, end: float = float("inf")) -> int:
        """How many requests started between ``start`` and ``end`` have been answered (or failed)."""
        return len([at for at, _latency in self.samples if start <= at <= end])


def write_native_bank(path: Path, rows: int) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["qid", "question", "type", "choices", "answer"])
        for i in range(rows):
            writer.writerow([f"load-{i:05d}", f"Question {i}: what does she feel?", "mcq", "sad|happy|angry", i % 3])


async def reported(process: asyncio.subprocess.Process, word: str) -> float:
    """The time.monotonic() (one clock for every process) on the next line of ``process``: "<word> <time>"."""
    line = (await asyncio.wait_for(process.stdout.readline(), 45)).decode()
    if not line.startswith(f"{word} "):
        rest = (await asyncio.wait_for(process.stdout.read(), 10)).decode()
        raise AssertionError(f"the lock holder said {line + rest!r}, not {word!r}")
    return float(line.split()[1])


async def import_a_bank(bank: Path) -> str:
    """``vtt questions import`` of ``bank`` in its own process; what it printed."""
    importing = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).parent / "vtt"),
        "questions",
        "import",
        str(bank),
        "--bank",
        "Load test",
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    return (await asyncio.wait_for(importing.communicate(), 40))[0].decode()


def assert_the_votes_waited_for_the_lock(db_factory, acks, lock, heartbeat, labels, latecomers) -> None:
    """The server answered while the lock was held, every vote it held was acknowledged only once the lock was let
    go, and what it recorded is what it acknowledged."""
    voters = labels[: len(labels) - len(latecomers)]
    locked, releasing = lock["locked"], lock["releasing"]
    assert releasing - locked >= MIN_LOCK_SECONDS
    assert heartbeat.worst() < 1.0, f"/healthz took {heartbeat.worst():.2f} s at worst"
    assert heartbeat.answered(locked, releasing) >= 10, "the heartbeat did not run while the lock was held"
    assert heartbeat.failures == 0
    assert [ack for ack in acks if not ack[3]["ok"]] == []
    # every juror had a vote held by the lock, and every vote sent while it was held was acknowledged only after
    held = {label for label, _key, _alias, _ack, sent, acked in acks if sent < releasing <= acked}
    assert held == set(labels)
    during = [(label, sent, acked) for label, _key, _alias, _ack, sent, acked in acks if locked <= sent < releasing]
    assert set(latecomers) <= {label for label, _sent, _acked in during}
    early = [(label, round(acked - releasing, 3)) for label, _sent, acked in during if acked < releasing]
    assert early == [], f"acknowledged before the lock was released: {early}"
    per_juror = Counter(ack[0] for ack in acks)
    assert set(per_juror) == set(labels) and min(per_juror[label] for label in voters) >= 3  # each changed its vote
    # recorded == acknowledged: one event per acknowledged vote, and each juror's row is its last acknowledged one
    assert count(db_factory, Event, Event.kind == "vote") == len(acks)
    last = {label: (key, alias) for label, key, alias, *_rest in acks}
    with db_factory() as db:
        rows = db.execute(select(Vote.client_key, Vote.alias)).all()
        assert db.scalar(select(func.count()).select_from(QuestionBank).where(QuestionBank.name == "Load test")) == 1
    assert sorted(rows) == sorted(last.values())


def test_a_cli_writing_to_the_sqlite_file_does_not_freeze_the_server(database_url, db_factory, tmp_path):
    """While another process holds SQLite's write lock the server still answers; the votes it cannot write wait
    for the lock, and are all acknowledged once it is let go."""
    people = make_session(db_factory, rounds=1, per_round=1, jurors=23)
    labels = list(people.jurors)
    voters, latecomers = labels[:20], labels[20:]  # latecomers vote once, only once the lock is known to be held
    db_file = database_url.removeprefix("sqlite:///")
    bank = tmp_path / "big.csv"
    write_native_bank(bank, 20_000)
    lock: dict[str, float] = {}  # when the other process had taken the lock ("locked") and let it go ("releasing")
    waiting: dict[str, float] = {}  # each juror's vote still waiting for its acknowledgement: when it was sent
    acks: list = []  # (juror, vote key, alias, ack, sent, acknowledged) of every vote
    served = ServedApp({"DATABASE_URL": database_url})
    heartbeat = Heartbeat(served.url)

    async def vote(juror: Peer, label: str, n: int) -> None:
        key, alias = f"{label}-{n}", "ABC"[n % 3]
        sent = waiting[label] = time.monotonic()
        reply = await juror.call("vote", {"id": key, "round": 1, "alias": alias, "confidence": 1 + n % 5})
        del waiting[label]
        acks.append((label, key, alias, reply, sent, time.monotonic()))

    async def keep_voting(juror: Peer, label: str, others_done: asyncio.Event) -> None:
        """Change the vote every ~50 ms until the other processes are done and this juror has voted since the
        lock was released (bounded by count, and by SCENARIO_TIMEOUT)."""
        for n in range(2000):
            if others_done.is_set() and any(
                ack[0] == label and ack[4] >= lock.get("releasing", float("inf")) for ack in acks
            ):
                return
            await vote(juror, label, n)
            await asyncio.sleep(0.05)  # a juror's pace of changing their mind

    def held_long_enough() -> bool:
        """Every juror's vote is waiting for the lock (a vote sent before it that still waits this long after
        is held by it too), and the heartbeat was answered meanwhile."""
        since = lock["locked"]
        return (
            time.monotonic() - since >= MIN_LOCK_SECONDS
            and set(waiting) == set(labels)
            and heartbeat.answered(since) >= 10
        )

    async def hold_the_lock(late: list[Peer]) -> None:
        holding = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            HOLD_LOCK,
            db_file,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        try:
            lock["locked"] = await reported(holding, "locked")
            late_votes = asyncio.gather(*(vote(juror, label, 0) for juror, label in zip(late, latecomers)))
            await wait_until_async(
                held_long_enough,
                timeout=30,
                message="every juror's vote waiting for the lock, and 10 heartbeats meanwhile",
            )
            holding.stdin.write(b"release\n")
            await holding.stdin.drain()
            lock["releasing"] = await reported(holding, "releasing")
            assert await asyncio.wait_for(holding.wait(), 30) == 0
            await late_votes
        finally:
            if holding.returncode is None:
                holding.kill()
                await holding.wait()

    async def other_processes(late: list[Peer], done: asyncio.Event) -> str:
        await wait_until_async(
            lambda: {ack[0] for ack in acks} == set(voters), timeout=30, message="every voter's first vote acknowledged"
        )  # votes are flowing
        try:
            _held, imported = await asyncio.gather(hold_the_lock(late), import_a_bank(bank))
        finally:
            done.set()
        return imported

    async def scenario(url: str) -> str:
        host = await connect_host(url, people.code)
        jurors = dict(zip(labels, await connect_jurors(url, list(people.jurors.values()))))
        for move in TO_JUDGING:
            await host.host(move)
        await host.host("open_vote")
        done = asyncio.Event()
        voting = [keep_voting(jurors[label], label, done) for label in voters]
        imported = (await asyncio.gather(other_processes([jurors[label] for label in latecomers], done), *voting))[0]
        await asyncio.gather(*(peer.close() for peer in [host, *jurors.values()]))
        return imported

    with served:
        heartbeat.start()
        try:
            imported = run(scenario(served.url))
        finally:
            heartbeat.halt.set()
            heartbeat.join(10)
    assert "imported 20000 questions" in imported, imported
    assert_the_votes_waited_for_the_lock(db_factory, acks, lock, heartbeat, labels, latecomers)


# --- d: the audit log ------------------------------------------------------------------------------


def test_the_audit_log_has_every_message_and_the_jury_lines_are_blind(database_url, db_factory, tmp_path):
    players = [  # Mina's page reads aloud (a young child's): neither that nor her page's voice notice reaches the jury
        {"name": "Mina", "kind": "human", "age": 4, "stage": "pre-operational", "answer_modes": ["text", "read_aloud"]},
        {"name": "Grace", "kind": "human", "age": 31},
        {"name": "Agent", "kind": "ai"},
    ]
    people = make_session(db_factory, rounds=1, per_round=1, jurors=2, players=players)
    audit = tmp_path / "audit.jsonl"

    async def scenario(url: str):
        host = await connect_host(url, people.code)
        stage = await Peer(url, people.stage_auth).connect()
        jurors = await connect_jurors(url, list(people.jurors.values()))
        players = {name: await Peer(url, {"token": token}).connect() for name, token in people.players.items()}
        notice = {"id": new_id("n"), "notice": "no_voice", "language": "ko"}
        assert (await players["Mina"].call("notice", notice))["ok"]
        for move in TO_JUDGING[:4]:
            await host.host(move)
        question = await players["Mina"].wait_for("question")
        for name, player in players.items():
            answer = {"choice": 1} if question["type"] == "mcq" else {"text": f"she is sad ({len(name)})"}
            assert (await player.call("answer", {"id": new_id("a"), "question": question["id"], **answer}))["ok"]
        for move in ("close_answering", "reveal"):
            await host.host(move)
        for juror in jurors:
            line = {"id": new_id("s"), "question": question["id"], "alias": "B", "note": "odd", "looks_like_ai": True}
            assert (await juror.call("sheet", line))["ok"]
        await host.host("open_vote")
        for juror in jurors:
            assert (await juror.call("vote", {"id": new_id("v"), "round": 1, "alias": "B", "confidence": 4}))["ok"]
        for move in ("close_vote", "show_tally", "reveal_identities"):
            await host.host(move)
        finished = (await host.host("finish"))["state_version"]
        for peer in (stage, jurors[0]):  # the finish's identities message is the last one each gets
            await peer.wait_for("identities", lambda message: message["state_version"] == finished)
        sids = {"stage": stage.client.get_sid(), "juror": jurors[0].client.get_sid()}
        await asyncio.gather(*(peer.close() for peer in [host, stage, *jurors, *players.values()]))
        return stage, jurors[0], sids

    with ServedApp({"DATABASE_URL": database_url, "VTT_AUDIT_LOG": str(audit)}) as served:
        stage, juror, sids = run(scenario(served.url))
    lines = [json.loads(line) for line in audit.read_text(encoding="utf-8").splitlines()]
    assert lines and all(set(line) == {"t", "audience", "room", "event", "payload"} for line in lines)
    assert {line["audience"] for line in lines} == {"host", "player", "juror", "stage"}
    room = f"vtt:{people.session_id}:"
    with db_factory() as db:
        juror_id = db.scalar(select(Juror.id).where(Juror.token == list(people.jurors.values())[0]))
    own = {"stage": set(), "juror": {f"{room}juror:{juror_id}"}}  # the juror's own room: ``mine``
    for who, peer in (("stage", stage), ("juror", juror)):
        mine = [line for line in lines if line["room"] in {room + who, sids[who], *own[who]}]
        assert all(line["audience"] == who for line in mine)
        # one line per message: what the client received (and its acks) is exactly what the log says, in order
        logged = [(line["event"], line["payload"]) for line in mine]
        sent = [(event, payload) for event, payload in peer.seen]
        assert [entry for entry in logged if not entry[0].startswith("ack:")] == sent
        assert [
            (event.removeprefix("ack:"), payload) for event, payload in logged if event.startswith("ack:")
        ] == peer.acks
    jury = [line for line in lines if line["audience"] in ("juror", "stage")]
    assert {"snapshot", "status", "round", "question", "answers", "tally", "identities"} <= {j["event"] for j in jury}
    for line in jury:
        assert not identity_leaks(line["payload"], people, allow_reveal=line["event"] == "identities"), line
        assert "answer_modes" not in json.dumps(line["payload"]) and line["event"] != "notice", line
    hosts = [line for line in lines if line["audience"] == "host"]
    assert any(line["event"] == "notice" for line in hosts)  # the host heard of Mina's page
    assert any("answer_modes" in json.dumps(line["payload"]) for line in hosts)
