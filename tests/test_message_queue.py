"""REDIS_URL lets several server processes share Socket.IO broadcasts (Redis required when CI=true)."""

from __future__ import annotations

import threading
import time

import socketio as socketio_client
from flask_socketio import SocketIO

from tests.support.live import make_session
from tests.support.served import ServedApp


def test_a_broadcast_from_another_process_reaches_a_websocket_client(database_url, db_factory, redis_url):
    people = make_session(db_factory, rounds=1, per_round=1)
    with ServedApp({"DATABASE_URL": database_url, "REDIS_URL": redis_url}) as served:
        client = socketio_client.Client(reconnection=False)
        heard = threading.Event()
        client.on("hello", lambda data: heard.set() if data == {"from": "worker 2"} else None)
        client.connect(served.url, auth=people.stage_auth, transports=["websocket"], wait_timeout=10)
        try:
            other_process = SocketIO(message_queue=redis_url)
            deadline = time.monotonic() + 10
            while not heard.is_set() and time.monotonic() < deadline:
                other_process.emit("hello", {"from": "worker 2"})
                heard.wait(0.3)
        finally:
            client.disconnect()
    assert heard.is_set(), served.output


def test_a_message_for_one_local_connection_skips_the_queue(database_url, db_factory, redis_url):
    """The snapshot at connect goes straight to the socket: only room messages are published to Redis."""
    import redis

    people = make_session(db_factory, rounds=1, per_round=1)
    queue = redis.Redis.from_url(redis_url)
    published = []
    with ServedApp({"DATABASE_URL": database_url, "REDIS_URL": redis_url}) as served:
        listener = queue.pubsub()
        listener.subscribe("flask-socketio")  # python-socketio's channel: every message a process publishes
        listener.get_message(timeout=1)  # the subscription's confirmation
        client = socketio_client.Client(reconnection=False)
        snapshots = []
        client.on("snapshot", snapshots.append)
        client.connect(served.url, auth=people.stage_auth, transports=["websocket"])
        try:
            deadline = time.monotonic() + 3  # long enough for the host's presence message (a room: published)
            while time.monotonic() < deadline:
                message = listener.get_message(timeout=0.2)
                if message and message["type"] == "message":
                    published.append(message["data"])
        finally:
            client.disconnect()
            listener.close()
    assert len(snapshots) == 1 and snapshots[0]["role"] == "stage"
    assert not any(b'"snapshot"' in data for data in published), published
    assert any(b'"presence"' in data for data in published), published  # a room message does go through Redis
