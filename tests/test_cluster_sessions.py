"""Many sessions on two ``vtt serve`` processes behind nginx (deploy/nginx.conf): each session owned by one process,
its connections routed there by their ``?session=`` and its broadcasts kept there (vtt.realtime.ownership).

Each test has a Redis server of its own, so that what was published on it is this test's alone.  Required when
CI=true (PostgreSQL, Redis and Debian's nginx)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
import urllib.request

import pytest

from tests.support.apps import host_api_token
from tests.support.cluster import (
    Client,
    OwnRedis,
    WatchedApp,
    all_see,
    answer_to,
    cluster_env,
    deadline_events,
    recorded_keys,
    sheet_lines,
    stage_snapshot,
)
from tests.support.live import People, make_session
from tests.support.nginx import Nginx
from vtt.db import make_db_factory, make_engine

SESSIONS = 12  # spread by nginx's hash: all twelve on one of two processes would happen once in 2,048 runs
ANSWER_SECONDS = 8


def publishes(redis: OwnRedis) -> int:
    """PUBLISH calls Redis has served (the broadcasts that left their process, and the ownership channel's)."""
    stats = subprocess.run(
        ["redis-cli", "-p", str(redis.port), "info", "commandstats"], capture_output=True, text=True, timeout=10
    ).stdout
    for line in stats.splitlines():
        if line.startswith("cmdstat_publish:"):
            return int(line.split("calls=", 1)[1].split(",", 1)[0])
    return 0


def sessions_on(url: str) -> dict[str, dict]:
    """``/healthz``'s ``sessions`` of one process, asked as the host (keyed by join code)."""
    request = urllib.request.Request(f"{url}/healthz", headers={"Authorization": f"Bearer {host_api_token()}"})
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())["sessions"]


def routed_seat(url: str, people: People) -> list[Client]:
    """The host, players and jurors of ``people``, each naming its session on the URL (as the pages and bots do)."""
    auth = {"code": people.code, "role": "host", "host_token": host_api_token()}
    clients = [Client(url, auth, "none", f"{people.code}-host", session=people.code)]
    clients += [
        Client(url, {"token": t}, "none", f"{people.code}-{n}", session=people.code) for n, t in people.players.items()
    ]
    clients += [
        Client(url, {"token": t}, "none", f"{people.code}-{n}", session=people.code) for n, t in people.jurors.items()
    ]
    return clients


def cast(clients: list[Client]) -> tuple[Client, list[Client], list[Client]]:
    """(host, players, jurors) of a session's clients."""
    host, others = clients[0], clients[1:]
    players = [client for client in others if not client.id_prefix.rsplit("-", 1)[1].startswith("J")]
    return host, players, [client for client in others if client not in players]


async def first_question(clients: list[Client], seconds: int = 60) -> None:
    """The host opens the session, shows question 1 and opens answering; every player answers."""
    host, players, _jurors = cast(clients)
    for move in ("open_lobby", "start_round", "show_question"):
        await host.host(move)
    await host.host("open_answering", seconds=seconds)
    await all_see(players, lambda c: c.view.phase == "answering", "question 1's answering")
    for player in players:
        await player.act("answer", answer_to(player.view.data["question"]))


def sessions(postgres_url: str, count: int) -> list[People]:
    engine = make_engine(postgres_url)
    try:
        factory = make_db_factory(engine)
        return [make_session(factory, rounds=1, per_round=2, jurors=3, name=f"Room {n}") for n in range(count)]
    finally:
        engine.dispose()


@pytest.mark.postgres
@pytest.mark.slow
def test_sessions_spread_over_the_processes_each_on_one_and_their_broadcasts_never_leave_it(
    postgres_url, nginx_binary, tmp_path, monkeypatch
):
    with OwnRedis(tmp_path / "redis") as redis:
        served = cluster_env(postgres_url, redis.url, monkeypatch)
        everyone = sessions(postgres_url, SESSIONS)
        with (
            WatchedApp(served) as first,
            WatchedApp(served) as second,
            Nginx(nginx_binary, tmp_path / "nginx", [f"127.0.0.1:{app.port}" for app in (first, second)]) as nginx,
        ):
            seated = [routed_seat(nginx.url, people) for people in everyone]

            async def play() -> dict:
                await asyncio.gather(*(client.open() for clients in seated for client in clients))
                before = publishes(redis)
                await asyncio.gather(*(first_question(clients) for clients in seated))
                for clients in seated:
                    host, _players, jurors = cast(clients)
                    await host.host("close_answering")
                    await host.host("reveal")
                    await all_see(jurors, lambda c: c.view.data.get("revealed"), "question 1's answers")
                    for juror in jurors:
                        await juror.act("sheet", sheet_lines(juror, "routed"))
                published = publishes(redis) - before
                health = {"first": sessions_on(first.url), "second": sessions_on(second.url)}
                versions = [{client.view.known for client in clients} for clients in seated]
                await asyncio.gather(*(client.close() for clients in seated for client in clients))
                return {"published": published, "health": health, "versions": versions}

            outcome = asyncio.run(play())
    for app in (first, second):
        assert "Traceback" not in app.output, app.output
    health = outcome["health"]
    per_session = len(everyone[0].players) + len(everyone[0].jurors) + 1
    for people in everyone:
        # Every connection of a session is on one process, which owns it; the other process knows nothing of it.
        on = [name for name, listed in health.items() if people.code in listed]
        assert len(on) == 1, (people.code, health)
        assert health[on[0]][people.code] == {"connections": per_session, "owner": True}, health
    owners = {name for name, listed in health.items() if any(entry["owner"] for entry in listed.values())}
    assert owners == {"first", "second"}, health  # the sessions spread over both processes
    # Not one broadcast went through Redis: each session's stayed on its process ...
    assert outcome["published"] == 0, outcome
    # ... and every client of a session heard every one of them (one version per session, the host's).
    assert all(len(versions) == 1 for versions in outcome["versions"]), outcome["versions"]


@pytest.mark.postgres
@pytest.mark.slow
def test_a_host_console_on_another_process_still_drives_its_session(postgres_url, nginx_binary, tmp_path, monkeypatch):
    with OwnRedis(tmp_path / "redis") as redis:
        served = cluster_env(postgres_url, redis.url, monkeypatch)
        (people,) = sessions(postgres_url, 1)
        with (
            WatchedApp(served) as first,
            WatchedApp(served) as second,
            Nginx(nginx_binary, tmp_path / "nginx", [f"127.0.0.1:{app.port}" for app in (first, second)]) as nginx,
        ):
            apps = {app.url: app for app in (first, second)}
            clients = routed_seat(nginx.url, people)
            _host, players, jurors = cast(clients)
            routed = players + jurors

            async def play() -> dict:
                await asyncio.gather(*(client.open() for client in routed))
                owner_url = next(url for url in apps if people.code in sessions_on(url))
                other_url = next(url for url in apps if url != owner_url)
                # The host's console reaches the other process (straight to it, as through a second nginx).
                auth = {"code": people.code, "role": "host", "host_token": host_api_token()}
                host = Client(other_url, auth, "none", "host")
                before = publishes(redis)
                await host.open()
                await first_question([host, *routed])
                await host.host("close_answering")
                await host.host("reveal")
                await all_see(jurors, lambda c: c.view.data.get("revealed"), "the answers, revealed by the host")
                health = {"owner": sessions_on(owner_url), "other": sessions_on(other_url)}
                published = publishes(redis) - before
                versions = {client.id_prefix: client.view.known for client in [host, *routed]}
                await asyncio.gather(*(client.close() for client in [host, *routed]))
                return {"health": health, "published": published, "versions": versions}

            outcome = asyncio.run(play())
            snapshot = stage_snapshot(nginx.url, people.code, ["websocket"])
    for app in (first, second):
        assert "Traceback" not in app.output, app.output
    health = outcome["health"]
    assert health["owner"][people.code] == {"connections": len(routed), "owner": True}, health
    assert health["other"][people.code] == {"connections": 1, "owner": False}, health
    # The session's broadcasts went through Redis once a client of it was elsewhere, and reached everyone.
    assert outcome["published"] > 0, outcome
    assert len(set(outcome["versions"].values())) == 1, outcome["versions"]
    assert snapshot["status"]["phase"] == "judging" and snapshot["state_version"] == outcome["versions"]["host"]


@pytest.mark.postgres
@pytest.mark.slow
def test_the_owner_killed_mid_round_its_sessions_move_and_their_deadlines_fire_once(
    postgres_url, nginx_binary, tmp_path, monkeypatch
):
    with OwnRedis(tmp_path / "redis") as redis:
        served = cluster_env(postgres_url, redis.url, monkeypatch)
        everyone = sessions(postgres_url, 4)
        with (
            WatchedApp(served) as first,
            WatchedApp(served) as second,
            Nginx(nginx_binary, tmp_path / "nginx", [f"127.0.0.1:{app.port}" for app in (first, second)]) as nginx,
        ):
            apps = {app.url: app for app in (first, second)}
            seated = {people.code: routed_seat(nginx.url, people) for people in everyone}

            async def play() -> dict:
                await asyncio.gather(*(client.open() for clients in seated.values() for client in clients))
                owned = {url: set(sessions_on(url)) for url in apps}
                # The process to kill: the one owning more sessions (each owns at least one, or none is moved).
                victim = max(apps, key=lambda url: len(owned[url]))
                survivor = next(url for url in apps if url != victim)
                await asyncio.gather(*(first_question(clients, ANSWER_SECONDS) for clients in seated.values()))
                acked_before = {key for clients in seated.values() for client in clients for key in client.acked}
                apps[victim].kill()
                killed = time.monotonic()
                # The victim's clients reconnect through nginx, which sends them (by session) to the survivor.
                for clients in seated.values():
                    _host, _players, jurors = cast(clients)
                    await all_see(
                        clients, lambda c: c.view.phase == "answers_closed", "the deadline", ANSWER_SECONDS + 15
                    )
                moved_in = time.monotonic() - killed
                for clients in seated.values():
                    host, _players, jurors = cast(clients)
                    await host.host("reveal")
                    await all_see(jurors, lambda c: c.view.data.get("revealed"), "the answers after the kill")
                    for juror in jurors:
                        await juror.act("sheet", sheet_lines(juror, "after the kill"))
                await asyncio.sleep(1)  # the survivor's ticker has ticked several times past every deadline
                versions = {code: {client.view.known for client in clients} for code, clients in seated.items()}
                health = sessions_on(survivor)
                await asyncio.gather(*(client.close() for clients in seated.values() for client in clients))
                return {
                    "owned": owned,
                    "victim": victim,
                    "acked_before": acked_before,
                    "versions": versions,
                    "health": health,
                    "moved_in": moved_in,
                }

            outcome = asyncio.run(play())
    survivor = next(app for url, app in apps.items() if url != outcome["victim"])
    assert "Traceback" not in survivor.output, survivor.output
    assert outcome["owned"][outcome["victim"]], outcome  # the killed process owned sessions
    print(f"every session moved and its deadline fired {outcome['moved_in']:.1f} s after the kill")
    per_session = len(everyone[0].players) + len(everyone[0].jurors) + 1
    for people in everyone:
        code = people.code
        # Every session now lives on the survivor, all of its clients with it ...
        assert outcome["health"][code] == {"connections": per_session, "owner": True}, outcome["health"]
        # ... its deadline closed answering once, whichever process held the session when it fell due ...
        assert deadline_events(postgres_url, code) == [{"phase": "answering"}], code
        # ... nothing acknowledged was lost, and every client converged on one version.
        recorded = recorded_keys(postgres_url, code)
        mine = {key for client in seated[code] for key in client.acked}
        assert mine <= recorded and {key for key in outcome["acked_before"] if key in mine} <= recorded
        assert len(outcome["versions"][code]) == 1, outcome["versions"]
