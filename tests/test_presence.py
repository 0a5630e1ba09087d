"""Presence is the whole session's: with REDIS_URL every process's connections count (PostgreSQL and Redis
required when CI=true)."""

from __future__ import annotations

import threading

import pytest
import socketio as socketio_client

from tests.support.apps import host_api_token, threaded_app
from tests.support.live import make_session
from tests.support.served import ServedApp
from tests.support.waiting import wait_until
from vtt.db import make_db_factory, make_engine, make_reader_engine, upgrade
from vtt.extensions import socketio
from vtt.realtime.hub import Hub
from vtt.realtime.identify import Identity
from vtt.realtime.presence import PRESENCE_EXPIRY_SECONDS, PRESENCE_REFRESH_SECONDS


@pytest.fixture
def session_on_postgres(postgres_url):
    upgrade(postgres_url)
    engine = make_engine(postgres_url)
    yield make_session(make_db_factory(engine), rounds=1, per_round=1, jurors=4)
    engine.dispose()


def juror(people, label: str) -> Identity:
    return Identity("juror", people.session_id, int(label[1:]), label)


@pytest.mark.postgres
def test_two_hubs_count_each_other_s_connections_until_one_stops(postgres_url, redis_url, session_on_postgres):
    people = session_on_postgres
    app = threaded_app(postgres_url)
    # Hubs with Redis, on an app whose Socket.IO has no queue: Flask-SocketIO would keep a queue for every later
    # app of this test process, and the test client refuses to run with one.
    app.config["REDIS_URL"] = redis_url
    first, second = (Hub(app, socketio, make_db_factory(make_reader_engine(postgres_url))) for _ in range(2))
    try:
        first.connections["host-sid"] = Identity("host", people.session_id, None, "host")
        first.connections["j1-sid"] = juror(people, "J1")
        second.connections.update({"j2-sid": juror(people, "J2"), "j3-sid": juror(people, "J3")})
        second.connections["stage-sid"] = Identity("stage", people.session_id, None, "stage")
        second.connections["j1-other-tab"] = juror(people, "J1")  # one juror on both processes counts once
        for hub in (first, second):
            hub.presence_changed(people.session_id)
        whole = {"players": [], "jurors": 3, "juror_labels": ["J1", "J2", "J3"], "stage": 1, "hosts": 1}
        wait_until(lambda: first.presence(people.session_id) == whole, timeout=5, message="both hubs' connections")
        assert second.presence(people.session_id) == whole

        second.stop()  # a clean stop takes its entries out at once
        assert first.presence(people.session_id) == {
            "players": [],
            "jurors": 1,
            "juror_labels": ["J1"],
            "stage": 0,
            "hosts": 1,
        }
    finally:
        for hub in (first, second, app.extensions["vtt.hub"]):
            hub.stop()


@pytest.mark.postgres
def test_the_host_sees_jurors_on_every_process_and_forgets_a_process_that_died(
    postgres_url, redis_url, session_on_postgres
):
    people = session_on_postgres
    env = {"DATABASE_URL": postgres_url, "REDIS_URL": redis_url}
    clients: list[socketio_client.Client] = []

    def connect(served: ServedApp, auth: dict) -> socketio_client.Client:
        client = socketio_client.Client(reconnection=False)
        clients.append(client)
        client.connect(served.url, auth=auth, transports=["websocket"], wait_timeout=10)
        return client

    with ServedApp(env) as first, ServedApp(env) as second:
        try:
            seen: list[dict] = []
            lock = threading.Lock()
            host = socketio_client.Client(reconnection=False)
            host.on("presence", lambda message: (lock.acquire(), seen.append(message), lock.release()))
            clients.append(host)
            host.connect(
                first.url,
                auth={"code": people.code, "role": "host", "host_token": host_api_token()},
                transports=["websocket"],
                wait_timeout=10,
            )
            for label, served in (("J1", first), ("J2", first), ("J3", second), ("J4", second)):
                connect(served, {"token": people.jurors[label]})
            connect(second, people.stage_auth)

            def latest() -> dict | None:
                with lock:
                    return seen[-1] if seen else None

            everyone = {"players": [], "jurors": 4, "juror_labels": ["J1", "J2", "J3", "J4"], "stage": 1, "hosts": 1}
            wait_until(lambda: latest() == everyone, timeout=10, message="the host to count both processes")

            second.process.kill()  # dies without a word: its entries in Redis expire
            only_first = {"players": [], "jurors": 2, "juror_labels": ["J1", "J2"], "stage": 0, "hosts": 1}
            wait_until(
                lambda: latest() == only_first,
                timeout=PRESENCE_EXPIRY_SECONDS + 2 * PRESENCE_REFRESH_SECONDS + 5,
                message="the dead process's jurors to leave the host's presence",
            )
        finally:
            for client in clients:
                if client.connected:
                    client.disconnect()
    assert "Traceback" not in first.output, first.output
