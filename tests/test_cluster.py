"""Two ``vtt serve`` processes on one PostgreSQL database and Redis, behind nginx with deploy/nginx.conf (the file
docs/deploy.md shows): a whole session played through nginx, then the same state on every process.

Required when CI=true (PostgreSQL, Redis and Debian's nginx: scripts/system-deps.sh installs it)."""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import subprocess
import time
import urllib.error
import urllib.request

import pytest
from sqlalchemy import func, select

from tests.support.apps import HOST_PASSWORD
from tests.support.cluster import (
    Client,
    OwnRedis,
    WatchedApp,
    all_see,
    answer_to,
    cluster_env,
    deadline_events,
    recorded_keys,
    routes_to,
    seat,
    session_upstreams,
    sheet_lines,
    stage_snapshot,
)
from tests.support.live import make_session
from tests.support.nginx import DEPLOY_CONFIG, Nginx
from tests.support.paths import ROOT
from tests.support.served import ServedApp
from tests.support.waiting import wait_until, wait_until_async
from vtt.db import make_db_factory, make_engine, upgrade
from vtt.models import Vote, VttSession

DEPLOY_DOC = ROOT / "docs" / "deploy.md"
JURORS = 20


def simulate_through(url: str, timeout: int) -> dict:
    """``vtt simulate --new --drive --json`` as a command, against ``url``; its one JSON object."""
    result = subprocess.run(
        [
            str(ROOT / ".venv" / "bin" / "vtt"),
            "simulate",
            "--url",
            url,
            "--new",
            "--jurors",
            str(JURORS),
            "--players",
            "2",
            "--rounds",
            "2",
            "--questions",
            "2",
            "--pace",
            "0.1",
            "--seed",
            "4",
            "--timeout",
            str(timeout),
            "--drive",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=timeout + 30,
    )
    assert result.returncode == 0, (result.stdout, result.stderr[-4000:])
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_docs_show_the_nginx_config_the_test_runs():
    assert f"```nginx\n{DEPLOY_CONFIG.read_text()}```" in DEPLOY_DOC.read_text()


@pytest.mark.postgres
@pytest.mark.slow
def test_a_session_played_through_nginx_on_two_processes_agrees_everywhere(
    postgres_url, redis_url, nginx_binary, tmp_path, monkeypatch
):
    upgrade(postgres_url)
    # What every process and `vtt simulate` (the host bot's API token) must share; docs/deploy.md's vtt.env.
    shared = {
        "DATABASE_URL": postgres_url,
        "SECRET_KEY": secrets.token_hex(32),
        "VTT_HOST_PASSWORD": HOST_PASSWORD,
    }
    for name, value in shared.items():
        monkeypatch.setenv(name, value)
    served = {"REDIS_URL": redis_url, "VTT_TRUSTED_PROXIES": "1"}
    with ServedApp(served) as first, ServedApp(served) as second:
        backends = [f"127.0.0.1:{first.port}", f"127.0.0.1:{second.port}"]
        with Nginx(nginx_binary, tmp_path / "nginx", backends) as nginx:
            figures = simulate_through(nginx.url, timeout=120)
            # The bots name their session on the URL: nginx sent every one of its connections to one process.
            assert session_upstreams(nginx, figures["session"]) in ({backend} for backend in backends), (
                nginx.access_log.read_text()[-2000:]
            )
            # A page falling back to long-polling: many requests for one Socket.IO session, each routed by the
            # vtt_route cookie nginx set on the first (requests keeps it) to the process holding that session;
            # the Origin a browser sends matches the host nginx passes on.
            polled = stage_snapshot(nginx.url, figures["session"], ["polling"], headers={"Origin": nginx.url})
            snapshots = [stage_snapshot(process.url, figures["session"], ["websocket"]) for process in (first, second)]
        assert "emerg" not in nginx.output and "[alert]" not in nginx.output, nginx.output

    for process in (first, second):
        assert "Traceback" not in process.output, process.output
    assert (figures["phase"], figures["errors"], figures["jurors"], figures["rounds"]) == ("finished", 0, JURORS, 2)
    for kind in ("votes", "sheets", "answers"):
        assert figures[f"{kind}_acked"] == figures[f"{kind}_recorded"] > 0, (kind, figures)

    on_first, on_second = snapshots
    for snapshot in (on_first, on_second, polled):
        assert snapshot["status"]["phase"] == "finished"
        assert [tally["round"] for tally in snapshot["tallies"]] == [1, 2]
        for tally in snapshot["tallies"]:
            assert sum(row["votes"] for row in tally["votes"]) == tally["cast"] > 0
            assert tally["cast"] + tally["abstentions"] == JURORS
    # The same version, tallies and reveals from each process, and through nginx.
    for key in ("state_version", "status", "tallies", "identities"):
        assert on_first[key] == on_second[key] == polled[key], key
    # ... and the same as the votes in the database, alias by alias.
    assert [
        {row["alias"]: row["votes"] for row in tally["votes"] if row["votes"]} for tally in on_first["tallies"]
    ] == (recorded_votes(postgres_url, figures["session"]))
    # Every player answered every question it played before answering closed: the host bot closed it, no deadline
    # did (a player whose snapshot came back older than events it had applied once sat out a question to its end).
    assert deadline_events(postgres_url, figures["session"]) == []


def recorded_votes(url: str, code: str) -> list[dict[str, int]]:
    """Per round, the votes for each alias in the database (abstentions left out)."""
    engine = make_engine(url)
    try:
        with make_db_factory(engine)() as db:
            rows = db.execute(
                select(Vote.round, Vote.alias, func.count())
                .join(VttSession, VttSession.id == Vote.session_id)
                .where(VttSession.join_code == code, Vote.player_id.is_not(None))
                .group_by(Vote.round, Vote.alias)
                .order_by(Vote.round, Vote.alias)
            ).all()
    finally:
        engine.dispose()
    rounds: dict[int, dict[str, int]] = {}
    for round_number, alias, votes in rows:
        rounds.setdefault(round_number, {})[alias] = votes
    return [rounds[number] for number in sorted(rounds)]


# --- failures: a process killed mid-round, Redis restarted mid-round --------------------------------------------

TIMERS_TAKEN = "this process runs the session timers now"  # vtt.realtime.claims logs it when a process takes them


async def question_one_answered_and_judged(host: Client, players: dict, jurors: dict, seconds: int, note: str) -> None:
    """Before the failure: question 1 opened (answering for ``seconds``), answered by every player, closed, revealed
    and judged on every sheet with ``note``."""
    for move in ("open_lobby", "start_round", "show_question"):
        await host.host(move)
    await host.host("open_answering", seconds=seconds)
    await all_see(players.values(), lambda c: c.view.phase == "answering", "question 1's answering")
    for player in players.values():
        await player.act("answer", answer_to(player.view.data["question"]))
    await host.host("close_answering")
    await host.host("reveal")
    await all_see(jurors.values(), lambda c: c.view.data.get("revealed"), "question 1's answers")
    for juror in jurors.values():
        await juror.act("sheet", sheet_lines(juror, note))


ANSWER_SECONDS = 10  # the deadline of the question during which the timers' process dies


@pytest.mark.postgres
@pytest.mark.slow
def test_a_process_killed_mid_round_loses_nothing_and_its_deadline_fires_once_elsewhere(
    postgres_url, redis_url, nginx_binary, tmp_path, monkeypatch
):
    served = cluster_env(postgres_url, redis_url, monkeypatch)
    engine = make_engine(postgres_url)
    people = make_session(make_db_factory(engine), rounds=1, per_round=2, jurors=3)
    engine.dispose()
    with (
        WatchedApp(served) as first,
        WatchedApp(served) as second,
        WatchedApp(served) as third,
        Nginx(nginx_binary, tmp_path / "nginx", [f"127.0.0.1:{app.port}" for app in (first, second, third)]) as nginx,
    ):
        apps = {f"127.0.0.1:{app.port}": app for app in (first, second, third)}
        holders = wait_until(
            lambda: [address for address, app in apps.items() if TIMERS_TAKEN in app.log()],
            timeout=10,
            message="a process to take the timers",
        )
        assert len(holders) == 1, holders
        holder = holders[0]
        others = [address for address in apps if address != holder]
        routes = routes_to(nginx, list(apps))
        # The host, a player and a juror on the process holding the timers; the others spread over the other two.
        placed = {"host": holder, "Mina": holder, "J1": holder, "Grace": others[0], "J2": others[0]}
        placed |= {"Agent": others[1], "J3": others[1]}
        host, players, jurors = seat(nginx.url, people, {who: routes[address] for who, address in placed.items()})
        everyone = [host, *players.values(), *jurors.values()]

        async def play() -> dict:
            await asyncio.gather(*(client.open() for client in everyone))
            await question_one_answered_and_judged(host, players, jurors, 60, "before the kill")
            await host.host("show_question")
            await host.host("open_answering", seconds=ANSWER_SECONDS)
            await all_see(players.values(), lambda c: c.view.phase == "answering", "question 2's answering")
            await players["Mina"].act("answer", answer_to(players["Mina"].view.data["question"]))

            acked_before = {key for client in everyone for key in client.acked}
            sids = {client.id_prefix: client.sid for client in everyone}
            apps[holder].kill()
            killed = time.monotonic()
            taken = await wait_until_async(
                lambda: [address for address in others if TIMERS_TAKEN in apps[address].log()],
                timeout=5,
                message="another process to take the timers",
            )
            takeover = time.monotonic() - killed
            # Answering goes on through the other processes, for the dead process's clients too.
            for player in players.values():
                await player.act("answer", answer_to(player.view.data["question"]))
            for juror in jurors.values():
                await juror.act("sheet", sheet_lines(juror, "after the kill"))
            await all_see(everyone, lambda c: c.view.phase == "answers_closed", "the deadline", ANSWER_SECONDS + 10)
            await host.host("reveal")
            await all_see(everyone, lambda c: c.view.phase == "judging", "the reveal after the deadline")
            await asyncio.sleep(1)  # every surviving ticker has ticked several times past the deadline
            moved = {client.id_prefix for client in everyone if client.sid != sids[client.id_prefix]}
            versions = {client.id_prefix: client.view.known for client in everyone}
            await asyncio.gather(*(client.close() for client in everyone))
            return {
                "acked_before": acked_before,
                "taken": taken,
                "takeover": takeover,
                "moved": moved,
                "versions": versions,
            }

        outcome = asyncio.run(play())
        snapshots = [stage_snapshot(apps[address].url, people.code, ["websocket"]) for address in others]

    for address in others:
        assert "Traceback" not in apps[address].output, apps[address].output
    # One of the others took the timers within a few seconds (the tick after PostgreSQL freed the lock).
    print(f"timers taken over {outcome['takeover']:.2f} s after the kill")  # shown with pytest -s
    assert len(outcome["taken"]) == 1 and outcome["takeover"] < 5, outcome
    # The dead process's clients, and only they, got a new connection (through nginx, to another process) ...
    assert outcome["moved"] == {name for name, address in placed.items() if address == holder}, outcome
    # ... and nginx answered no request with an error of its own: one sent to the dead process went on to another.
    assert not re.findall(r'" 5\d\d ', nginx.access_log.read_text()), nginx.access_log.read_text()
    # Every action acknowledged before the kill, and after it, is in the database.
    recorded = recorded_keys(postgres_url, people.code)
    assert outcome["acked_before"] <= recorded, outcome["acked_before"] - recorded
    assert {key for client in everyone for key in client.acked} <= recorded
    # The deadline closed question 2's answering once; question 1's the host closed.
    assert deadline_events(postgres_url, people.code) == [{"phase": "answering"}]
    # Every client and both surviving processes agree.
    assert len(set(outcome["versions"].values())) == 1, outcome["versions"]
    assert snapshots[0]["state_version"] == snapshots[1]["state_version"] == host.view.known
    assert snapshots[0]["status"] == snapshots[1]["status"] and snapshots[0]["status"]["phase"] == "judging"


def queue_health(url: str) -> dict:
    """``/healthz``'s ``queue`` of one process (whatever its status code)."""
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=5) as response:
            return json.loads(response.read())["queue"]
    except urllib.error.HTTPError as error:  # 503: the listener is dead
        return json.loads(error.read())["queue"]


@pytest.mark.postgres
@pytest.mark.slow
def test_redis_restarted_mid_round_the_session_goes_on_and_every_client_converges(
    postgres_url, nginx_binary, tmp_path, monkeypatch
):
    redis = OwnRedis(tmp_path / "redis")
    redis.start()
    served = cluster_env(postgres_url, redis.url, monkeypatch)
    engine = make_engine(postgres_url)
    people = make_session(make_db_factory(engine), rounds=1, per_round=2, jurors=3)
    engine.dispose()
    with (
        redis,
        WatchedApp(served) as first,
        WatchedApp(served) as second,
        Nginx(nginx_binary, tmp_path / "nginx", [f"127.0.0.1:{app.port}" for app in (first, second)]) as nginx,
    ):
        acting, other = f"127.0.0.1:{first.port}", f"127.0.0.1:{second.port}"
        routes = routes_to(nginx, [acting, other])
        # The host on one process; a player and a juror with it, the others and the stage on the other process.
        placed = {"host": acting, "Mina": acting, "J1": acting, "Grace": other, "Agent": other, "J2": other}
        placed |= {"J3": other, "stage": other}
        host, players, jurors = seat(nginx.url, people, {who: routes[address] for who, address in placed.items()})
        stage = Client(nginx.url, people.stage_auth, routes[other], "stage")
        everyone = [host, stage, *players.values(), *jurors.values()]
        elsewhere = [client for client in everyone if placed[client.id_prefix] == other]

        async def play() -> dict:
            await asyncio.gather(*(client.open() for client in everyone))
            await question_one_answered_and_judged(host, players, jurors, 300, "before Redis went away")
            before = {client.id_prefix: client.view.known for client in everyone}
            resyncs_before = {client.id_prefix: client.resyncs for client in everyone}
            missed = await question_two_heard_only_by_the_acting_process_while_redis_is_away(
                redis, host, players, jurors, elsewhere
            )
            relistened = await every_process_listening_again_after_the_restart(host, elsewhere, urls.values())
            await the_session_goes_on_to_the_tally(host, stage, players, jurors, everyone)
            resyncs = {client.id_prefix: client.resyncs - resyncs_before[client.id_prefix] for client in everyone}
            views = {client.id_prefix: (client.view.known, client.view.phase) for client in everyone}
            tallies = {client.id_prefix: client.view.data.get("tallies") for client in [stage, *jurors.values()]}
            await asyncio.gather(*(client.close() for client in everyone))
            return {
                "before": before,
                "missed": missed,
                "relistened": relistened,
                "resyncs": resyncs,
                "views": views,
                "tallies": tallies,
                "heard": {client.id_prefix: client.heard for client in elsewhere},
            }

        urls = {acting: first.url, other: second.url}
        outcome = asyncio.run(play())
        snapshots = [stage_snapshot(url, people.code, ["websocket"]) for url in urls.values()]

    for app in (first, second):
        assert "Traceback" not in app.output, app.output
    every_client_converged(outcome, snapshots, everyone, elsewhere, postgres_url, people.code)


async def question_two_heard_only_by_the_acting_process_while_redis_is_away(
    redis: OwnRedis, host: Client, players: dict, jurors: dict, elsewhere: list[Client]
) -> dict[str, int]:
    """Redis stopped while question 2 opens and is answered on the acting process, then started again; the version
    each client on the other process knew meanwhile."""
    redis.stop()
    try:
        # Redis away: the acting process's own clients still hear it (it emits to them itself); the
        # broadcasts it publishes for the other process are lost.
        await host.host("show_question")
        await host.host("open_answering", seconds=300)
        await players["Mina"].act("answer", answer_to(players["Mina"].view.data["question"]))
        await jurors["J1"].act("sheet", sheet_lines(jurors["J1"], "while Redis was away"))
        missed = {client.id_prefix: client.view.known for client in elsewhere}
    finally:
        redis.start()
    return missed


async def every_process_listening_again_after_the_restart(host: Client, elsewhere: list[Client], urls) -> float:
    """Every process's queue listener back on Redis and a broadcast heard on the other process; how long it took."""
    restarted = time.monotonic()
    await wait_until_async(
        lambda: all(queue_health(url) == {"kind": "redis", "listening": True} for url in urls),
        timeout=15,
        message="every process's queue listener",
    )
    # The other process hears the acting one again once its listener has subscribed again (python-socketio
    # retries after 1, 2, 4 ... s): until then a broadcast is lost too, so the host moves the deadline a
    # little until a broadcast reaches every client there.
    while not all(client.view.known >= host.view.known for client in elsewhere):
        assert time.monotonic() - restarted < 20, "no broadcast reached the other process after the restart"
        await host.host("extend", seconds=1)
        await asyncio.sleep(0.5)
    return time.monotonic() - restarted


async def the_session_goes_on_to_the_tally(
    host: Client, stage: Client, players: dict, jurors: dict, everyone: list[Client]
) -> None:
    """The other process's clients catch up through their version gaps; question 2 answered and judged, the vote
    cast and closed, the tally shown and seen by every client."""
    await all_see(players.values(), lambda c: c.view.data["question"]["position"] == 2, "question 2")
    for name in ("Grace", "Agent"):
        await players[name].act("answer", answer_to(players[name].view.data["question"]))
    await host.host("close_answering")
    await host.host("reveal")
    await all_see(jurors.values(), lambda c: len(c.view.data.get("revealed", [])) == 2, "question 2's answers")
    for juror in jurors.values():
        await juror.act("sheet", sheet_lines(juror, "after Redis came back"))
    await host.host("open_vote", seconds=300)
    await all_see(jurors.values(), lambda c: c.view.phase == "voting", "the vote")
    for juror in jurors.values():
        aliases = juror.view.data["round"]["aliases"]
        await juror.act("vote", {"round": 1, "slot": 1, "alias": aliases[0], "confidence": 3})
    await host.host("close_vote")
    await host.host("show_tally")
    await all_see(everyone, lambda c: c.view.known == host.view.known, "every client at the host's version")
    # The tally is its own event after the status of the same version: seen once it has come too.
    await all_see([stage, *jurors.values()], lambda c: c.view.data.get("tallies"), "the tally")


def every_client_converged(
    outcome: dict, snapshots: list[dict], everyone: list[Client], elsewhere: list[Client], url: str, code: str
) -> None:
    """The other process's clients missed question 2 while Redis was away, asked for a snapshot after the gap, and
    every client, both processes and the database agree in the end."""
    # While Redis was away the other process's clients heard nothing of question 2 ...
    assert outcome["missed"] == {name: outcome["before"][name] for name in outcome["missed"]}, outcome
    # ... and each of them, hearing the next event after a gap, asked for a snapshot.
    assert all(outcome["resyncs"][client.id_prefix] >= 1 for client in elsewhere), outcome["resyncs"]
    assert outcome["relistened"] < 15, outcome
    # Every client converged on one version and phase; the tally is the same everywhere, and the votes'.
    assert set(outcome["views"].values()) == {(snapshots[0]["state_version"], "tally")}, outcome
    assert snapshots[0]["state_version"] == snapshots[1]["state_version"]
    assert snapshots[0]["tallies"] == snapshots[1]["tallies"]
    assert all(tallies == snapshots[0]["tallies"] for tallies in outcome["tallies"].values()), outcome["tallies"]
    assert [
        {row["alias"]: row["votes"] for row in tally["votes"] if row["votes"]} for tally in snapshots[0]["tallies"]
    ] == recorded_votes(url, code)
    # Nothing acknowledged was lost.
    recorded = recorded_keys(url, code)
    assert {key for client in everyone for key in client.acked} <= recorded
