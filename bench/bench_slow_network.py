"""The live pages on a venue's slow Wi-Fi: Chromium throttled to Chrome DevTools' network presets.

    python bench/bench_slow_network.py [--runs 5] [--profiles slow-3g,fast-3g] [--shots FOLDER]

The server is ``python run.py`` (gevent) on a fresh SQLite instance with the demo's clips; a session of one round
and one question (3 players, one AI) is driven over Socket.IO by a host bot to the open vote.  Debian's Chromium
(Playwright, 390x844) then opens juror pages with ``Network.emulateNetworkConditions`` on the profile:

- **time to a usable ballot**: from the navigation's start (``performance.timeOrigin``) to the first moment the
  page says it is connected (``#connection`` without ``.offline``) and its ballot is there and enabled (a
  ``slot-1`` radio and ``#vote-submit`` in the shown ``#vote``, not disabled): a juror can vote now.  The first
  contentful paint too.  Cold: a fresh browser context (empty cache); warm: the same page loaded again.
- **a vote's round trip**: from the click on "Cast/Change my vote" to the page showing the server's ack
  (``#vote-state.received``), over the page's own connection (websocket).  DevTools does not throttle a
  websocket's frames, so the juror pages reach the server through a relay (``SlowLink``) that gives websocket
  connections the profile's latency and throughput.
- **each page's weight** (juror, player, stage), from the DevTools network log, per resource type: transferred
  bytes (``encodedDataLength``: headers and body as they crossed the wire, compressed if served so) and decoded
  bytes (``dataReceived``), cold and warm; requests answered from the cache count as 0 transferred.

Median and worst over --runs.  --shots saves screenshots of a cold juror page every second while it loads on
Slow 3G (what a juror sees).  The presets are DevTools' (front_end/core/sdk/NetworkManager.ts): "Slow 3G"
~400 kbit/s each way with 2 s latency (a 400 ms target RTT x 5), "Fast 3G" (since renamed "Slow 4G")
1.44 Mbit/s down, 675 kbit/s up, 562.5 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import socketio
from bench_host_work import bench_instance
from playwright.sync_api import sync_playwright

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, PHONE
from tests.support.live import make_session
from tests.support.served import ServedApp
from vtt.access.admission import stage_key
from vtt.access.host_token import host_token
from vtt.db import make_db_factory, make_engine
from vtt.sessions.demo.clips import ensure_demo_clips

PASSWORD = "bench password"
SECRET = "bench secret key " * 4
PROFILES = {  # bytes per second and ms, as DevTools gives them to Network.emulateNetworkConditions
    "slow-3g": {
        "latency": 400 * 5,
        "downloadThroughput": 500 * 1000 / 8 * 0.8,
        "uploadThroughput": 500 * 1000 / 8 * 0.8,
    },
    "fast-3g": {
        "latency": 150 * 3.75,
        "downloadThroughput": 1.6 * 1000 * 1000 / 8 * 0.9,
        "uploadThroughput": 750 * 1000 / 8 * 0.9,
    },
}
TIMEOUT_MS = 120_000

# Runs in every page before its own scripts: notes when the ballot becomes usable (see the module's docstring).
WATCH_BALLOT = """
(() => {
  const usable = () => {
    const line = document.getElementById('connection');
    const box = document.getElementById('vote');
    const radio = box && !box.hidden && box.querySelector('input[name=slot-1]');
    const submit = document.getElementById('vote-submit');
    return line && line.textContent !== '' && !line.classList.contains('offline')
      && radio && !radio.disabled && submit && !submit.disabled;
  };
  const look = () => {
    const line = document.getElementById('connection');
    if (window.vttConnectedAt === undefined && line && line.textContent !== '' && !line.classList.contains('offline')) {
      window.vttConnectedAt = performance.now();
    }
    if (usable()) { window.vttBallotAt = performance.now(); return; }
    setTimeout(look, 20);
  };
  look();
})();
"""

VOTE = """(pick) => new Promise((resolve) => {
  const state = () => document.getElementById('vote-state');
  const pills = document.querySelectorAll('#vote-form .suspects .pill');
  pills[pick % pills.length].click();
  const started = performance.now();
  const done = () => {
    const line = state();
    if (line && line.classList.contains('received')) resolve(performance.now() - started);
    else setTimeout(done, 5);
  };
  document.getElementById('vote-submit').click();
  done();
})"""


class SlowLink(threading.Thread):
    """A TCP relay in front of the server that gives websockets the profile DevTools gives HTTP requests.

    Chromium's ``Network.emulateNetworkConditions`` throttles HTTP requests only: a websocket's frames pass at full
    speed.  Through this relay a connection that upgrades to a websocket has each chunk delivered half the
    profile's latency later each way, no faster than its throughput; other connections pass untouched (DevTools
    throttles them).
    """

    def __init__(self, target_port: int):
        super().__init__(daemon=True)
        self.target_port, self.profile = target_port, None
        self.ready = threading.Event()

    def run(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        self.ready.set()
        async with server:
            await server.serve_forever()

    async def _relay(self, client_reader, client_writer) -> None:
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        first = await client_reader.read(65536)
        profile = self.profile if b"upgrade: websocket" in first.lower() else None
        up = profile and (profile["latency"] / 2000, profile["uploadThroughput"])
        down = profile and (profile["latency"] / 2000, profile["downloadThroughput"])
        server_writer.write(first)
        await asyncio.gather(
            self._pipe(client_reader, server_writer, up), self._pipe(server_reader, client_writer, down)
        )

    @staticmethod
    async def _pipe(reader, writer, shape) -> None:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue()

        async def deliver() -> None:
            free_at = 0.0  # when the link has sent what it was given before
            while (item := await queue.get()) is not None:
                arrived, data = item
                if shape:
                    delay, rate = shape
                    free_at = max(free_at, arrived) + len(data) / rate
                    await asyncio.sleep(max(0.0, free_at + delay - loop.time()))
                writer.write(data)
                await writer.drain()
            writer.close()

        sender = asyncio.create_task(deliver())
        try:
            while data := await reader.read(65536):
                queue.put_nowait((loop.time(), data))
        except ConnectionError:
            pass
        queue.put_nowait(None)
        await sender


class NetworkLog:
    """A page's requests from the DevTools protocol: type, transferred and decoded bytes, from the cache or not."""

    def __init__(self, cdp):
        self.requests: dict[str, dict] = {}
        cdp.on("Network.requestWillBeSent", self._sent)
        cdp.on("Network.responseReceived", self._response)
        cdp.on("Network.dataReceived", self._data)
        cdp.on("Network.loadingFinished", self._finished)
        cdp.on("Network.requestServedFromCache", self._cached)

    def _entry(self, request_id: str) -> dict:
        return self.requests.setdefault(
            request_id, {"type": "Other", "url": "", "sent": 0, "decoded": 0, "cached": False, "encoding": ""}
        )

    def _sent(self, event) -> None:
        entry = self._entry(event["requestId"])
        entry["url"] = event["request"]["url"]
        entry["type"] = event.get("type", "Other")

    def _response(self, event) -> None:
        entry = self._entry(event["requestId"])
        entry["type"] = event.get("type", entry["type"])
        response = event["response"]
        entry["status"] = response["status"]
        entry["cached"] = entry["cached"] or response.get("fromDiskCache") or response.get("fromMemoryCache", False)
        headers = {k.lower(): v for k, v in response.get("headers", {}).items()}
        entry["encoding"] = headers.get("content-encoding", "")

    def _data(self, event) -> None:
        self._entry(event["requestId"])["decoded"] += event["dataLength"]

    def _finished(self, event) -> None:
        self._entry(event["requestId"])["sent"] = event["encodedDataLength"]

    def _cached(self, event) -> None:
        self._entry(event["requestId"])["cached"] = True

    def by_type(self) -> dict[str, dict[str, int]]:
        """Per resource type: requests, transferred and decoded bytes (a cached answer transfers nothing)."""
        totals: dict[str, dict[str, int]] = defaultdict(lambda: {"requests": 0, "transferred": 0, "decoded": 0})
        for entry in self.requests.values():
            if entry["url"].startswith("data:"):
                continue
            row = totals[entry["type"]]
            row["requests"] += 1
            row["transferred"] += 0 if entry["cached"] else entry["sent"]
            row["decoded"] += entry["decoded"]
        return dict(totals)


def throttled_page(context, profile: str | None):
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    if profile:
        cdp.send("Network.emulateNetworkConditions", {"offline": False, **PROFILES[profile]})
    return page, NetworkLog(cdp)


def drive_to_open_vote(url: str, people) -> list[socketio.Client]:
    """The host bot's moves to round 1's open vote, every player answering; the clients (kept connected)."""
    host = socketio.Client()
    token = host_token(SECRET, PASSWORD)
    host.connect(url, auth={"code": people.code, "role": "host", "host_token": token}, transports=["websocket"])
    players = []
    for player_token in people.players.values():
        client = socketio.Client()
        client.questions = []
        client.on("question", client.questions.append)
        client.connect(url, auth={"token": player_token}, transports=["websocket"])
        players.append(client)

    def move(action: str) -> None:
        reply = host.call("host", {"id": f"h-{action}-{time.time_ns()}", "action": action}, timeout=30)
        assert reply["ok"], (action, reply)

    for action in ("open_lobby", "start_round", "show_question", "open_answering"):
        move(action)
    time.sleep(0.5)
    for number, client in enumerate(players):
        reply = client.call("answer", {"id": f"a-{number}", "question": client.questions[-1]["id"], "choice": 0})
        assert reply["ok"], reply
    for action in ("close_answering", "reveal", "open_vote"):
        move(action)
    return [host, *players]


def wait_usable(page) -> dict[str, float]:
    page.wait_for_function("window.vttBallotAt !== undefined", timeout=TIMEOUT_MS, polling=50)
    return page.evaluate(
        """() => ({ ballot: window.vttBallotAt, connected: window.vttConnectedAt,
                   paint: (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime ?? null,
                   files: Math.max(0, ...performance.getEntriesByType('resource')
                     .filter((entry) => ['script', 'link', 'css'].includes(entry.initiatorType)
                       || entry.name.endsWith('.js')).map((entry) => entry.responseEnd)) })"""
    )


def juror_runs(browser, url: str, people, profile: str, runs: int, shots: Path | None) -> dict[str, list[float]]:
    figures: dict[str, list[float]] = defaultdict(list)
    jurors = list(people.jurors.values())
    for run in range(runs):
        context = browser.new_context(viewport=PHONE, bypass_csp=True)
        context.add_init_script(WATCH_BALLOT)
        page, _log = throttled_page(context, profile)
        page.goto(f"{url}/jury/{jurors[run % len(jurors)]}", wait_until="commit", timeout=TIMEOUT_MS)
        if shots and run == 0:
            for second in range(1, 30):
                page.wait_for_timeout(1000)
                page.screenshot(path=str(shots / f"juror-{profile}-{second:02d}s.png"))
                if page.evaluate("window.vttBallotAt !== undefined"):
                    break
        cold = wait_usable(page)
        figures["cold_ballot"].append(cold["ballot"] / 1000)
        figures["cold_files"].append(cold["files"] / 1000)
        figures["cold_connected"].append(cold["connected"] / 1000)
        figures["cold_paint"].append((cold["paint"] or 0) / 1000)
        figures["vote"].append(page.evaluate(VOTE, run) / 1000)
        page.reload(wait_until="commit", timeout=TIMEOUT_MS)
        warm = wait_usable(page)
        figures["warm_ballot"].append(warm["ballot"] / 1000)
        figures["warm_paint"].append((warm["paint"] or 0) / 1000)
        figures["vote"].append(page.evaluate(VOTE, run + 1) / 1000)
        context.close()
    return figures


def page_weights(browser, url: str, people) -> dict[str, dict[str, dict[str, dict[str, int]]]]:
    """Per page, cold and warm: its requests by type once the page has settled (unthrottled)."""
    pages = {
        "juror": f"{url}/jury/{next(iter(people.jurors.values()))}",
        "player": f"{url}/play/{people.players['Grace']}",
        "stage": f"{url}/stage/{people.code}?key={stage_key(SECRET, people.session_id)}",
    }
    weights = {}
    for name, address in pages.items():
        context = browser.new_context(viewport=PHONE if name != "stage" else {"width": 1280, "height": 720})
        weights[name] = {}
        for visit in ("cold", "warm"):
            page, log = throttled_page(context, None)
            page.goto(address, wait_until="networkidle", timeout=TIMEOUT_MS)
            page.wait_for_timeout(1500)  # the connection's first messages, a clip's metadata
            weights[name][visit] = log.by_type()
            weights[name][f"{visit}_media"] = sorted(
                {entry["url"].replace(url, "") for entry in log.requests.values() if entry["type"] == "Media"}
            )
            page.close()
        context.close()
    return weights


def seconds(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} / {max(values):.2f}"


def kilobytes(value: int) -> str:
    return f"{value / 1024:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--profiles", default="slow-3g,fast-3g")
    parser.add_argument("--shots", type=Path, help="a folder for screenshots of a juror page loading on Slow 3G")
    args = parser.parse_args()
    if args.shots:
        args.shots.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-slow-network-") as folder:
        instance, database_url, env = bench_instance(folder, SECRET_KEY=SECRET)
        ensure_demo_clips(instance / "media")
        engine = make_engine(database_url)
        people = make_session(make_db_factory(engine), rounds=1, per_round=1, jurors=max(args.runs, 2))
        engine.dispose()
        with ServedApp(env) as server:
            clients = drive_to_open_vote(server.url, people)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                weights = page_weights(browser, server.url, people)
                link = SlowLink(server.port)
                link.start()
                link.ready.wait(10)
                timings = {}
                for profile in args.profiles.split(","):
                    link.profile = PROFILES[profile]
                    slow_url = f"http://127.0.0.1:{link.port}"
                    timings[profile] = juror_runs(browser, slow_url, people, profile, args.runs, args.shots)
                version = browser.version
                browser.close()
            for client in clients:
                client.disconnect()
        if "Traceback" in server.output:
            print(server.output, file=sys.stderr)
    report(args, weights, timings, version)


def report(args, weights, timings, version: str) -> None:
    cpu = subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo"], capture_output=True, text=True)
    print(
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {cpu.stdout.split(':')[-1].strip()} x {os.cpu_count()}; "
        f"Python {platform.python_version()}; Chromium {version}; {args.runs} runs"
    )
    print("\n| profile | first paint, cold | usable ballot, cold | first paint, warm | usable ballot, warm | vote |")
    print("|---|---|---|---|---|---|")
    for profile, figures in timings.items():
        print(
            f"| {profile} | {seconds(figures['cold_paint'])} | {seconds(figures['cold_ballot'])} "
            f"| {seconds(figures['warm_paint'])} | {seconds(figures['warm_ballot'])} | {seconds(figures['vote'])} |"
        )
    print("\n(seconds, median / worst; the vote's round trip over cold and warm pages)")
    print("\n| profile | cold: scripts and styles in | cold: connected | cold: usable ballot |")
    print("|---|---|---|---|")
    for profile, figures in timings.items():
        print(
            f"| {profile} | {seconds(figures['cold_files'])} | {seconds(figures['cold_connected'])} "
            f"| {seconds(figures['cold_ballot'])} |"
        )
    print("\n| page | visit | type | requests | transferred KB | decoded KB |")
    print("|---|---|---|---|---|---|")
    for page, visits in weights.items():
        for visit in ("cold", "warm"):
            rows = visits[visit]
            for kind in sorted(rows):
                row = rows[kind]
                print(
                    f"| {page} | {visit} | {kind} | {row['requests']} | {kilobytes(row['transferred'])} "
                    f"| {kilobytes(row['decoded'])} |"
                )
            total_sent = sum(row["transferred"] for row in rows.values())
            total_decoded = sum(row["decoded"] for row in rows.values())
            print(f"| {page} | {visit} | **all** | | **{kilobytes(total_sent)}** | **{kilobytes(total_decoded)}** |")
        print(f"\n{page}: clip requests {visits['cold_media'] or 'none'}")


if __name__ == "__main__":
    main()
