"""The client manager's index of each connection's rooms (vtt.realtime.rooms) against python-socketio's own: the
same rooms after any mix of joins, leaves and disconnects."""

from __future__ import annotations

import random

import socketio

from vtt.realtime.rooms import IndexedManager, IndexedRedisManager, client_manager


def table(manager) -> dict:
    return {ns: {room: dict(members) for room, members in rooms.items()} for ns, rooms in manager.rooms.items()}


def test_connections_leave_the_same_rooms_as_python_socketio_makes_them_leave():
    rng = random.Random(5)
    ours, theirs = IndexedManager(), socketio.Manager()
    connected: list[str] = []
    for step in range(3000):
        move = rng.random()
        if move < 0.3 or not connected:
            sid = f"s{step}"
            for manager in (ours, theirs):
                manager.basic_enter_room(sid, "/", None, eio_sid=f"e{step}")
                manager.basic_enter_room(sid, "/", sid)
            connected.append(sid)
        elif move < 0.7:
            sid, room = rng.choice(connected), f"vtt:{rng.randint(1, 3)}:{rng.choice(['juror', 'host', 'stage'])}"
            for manager in (ours, theirs):
                manager.basic_enter_room(sid, "/", room)
        elif move < 0.8:
            sid, room = rng.choice(connected), f"vtt:{rng.randint(1, 3)}:juror"
            for manager in (ours, theirs):
                manager.basic_leave_room(sid, "/", room)
        else:
            sid = connected.pop(rng.randrange(len(connected)))
            for manager in (ours, theirs):
                manager.basic_disconnect(sid, "/")
        if step % 100 == 0:
            assert table(ours) == table(theirs)
            for sid in connected:
                assert sorted(ours.get_rooms(sid, "/")) == sorted(theirs.get_rooms(sid, "/"))
    for sid in connected:
        for manager in (ours, theirs):
            manager.basic_disconnect(sid, "/")
    assert table(ours) == table(theirs) == {}
    assert ours.rooms_of == {}


def test_the_app_gets_the_indexed_manager_with_or_without_a_message_queue():
    assert isinstance(client_manager(None), IndexedManager)
    queued = client_manager("redis://127.0.0.1:6379/0")
    assert isinstance(queued, IndexedRedisManager) and isinstance(queued, socketio.PubSubManager)
    assert queued.name == "redis" and queued.channel == "flask-socketio"
