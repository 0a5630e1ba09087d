"""REDIS_URL lets several server processes share Socket.IO broadcasts (Redis required when CI=true)."""

from __future__ import annotations

import threading
import time

import socketio as socketio_client
from flask_socketio import SocketIO

from tests.conftest import ServedApp
from tests.live_helpers import make_session


def test_a_broadcast_from_another_process_reaches_a_websocket_client(database_url, db_factory, redis_url):
    people = make_session(db_factory, rounds=1, per_round=1)
    with ServedApp({"DATABASE_URL": database_url, "REDIS_URL": redis_url}) as served:
        client = socketio_client.Client(reconnection=False)
        heard = threading.Event()
        client.on("hello", lambda data: heard.set() if data == {"from": "worker 2"} else None)
        client.connect(
            served.url, auth={"code": people.code, "role": "stage"}, transports=["websocket"], wait_timeout=10
        )
        try:
            other_process = SocketIO(message_queue=redis_url)
            deadline = time.monotonic() + 10
            while not heard.is_set() and time.monotonic() < deadline:
                other_process.emit("hello", {"from": "worker 2"})
                heard.wait(0.3)
        finally:
            client.disconnect()
    assert heard.is_set(), served.output
