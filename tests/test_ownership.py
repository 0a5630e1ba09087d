"""Session ownership (vtt.realtime.ownership) decided message by message, and what ``/healthz`` tells of it.

The claims and the registry of who serves what are stand-ins here (PostgreSQL's locks and Redis are tried in
tests/test_claims.py and tests/test_cluster_sessions.py); the channel's messages are handed to ``heard`` as the
listener would, and what the process publishes is kept."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from tests.support.apps import host_api_token
from tests.support.live import Role, make_session
from vtt.extensions import socketio
from vtt.realtime import ownership as ownership_module
from vtt.realtime.ownership import Channel, Ownership


class FakeClaims:
    """PostgreSQL's advisory locks as one table shared by every process of a test."""

    shared = True

    def __init__(self, table: dict[int, str], me: str):
        self.table, self.me, self.sessions = table, me, set()

    def owns(self, session_id: int) -> bool:
        return session_id in self.sessions

    def claim(self, session_id: int) -> bool:
        if self.table.setdefault(session_id, self.me) != self.me:
            return False
        self.sessions.add(session_id)
        return True

    def give_up(self, session_id: int) -> None:
        if self.table.get(session_id) == self.me:
            del self.table[session_id]
        self.sessions.discard(session_id)


class FakeRegistry:
    """The shared presence: which processes have an entry for each session."""

    def __init__(self, entries: dict[int, set[str]], me: str):
        self.entries, self.process, self.database = entries, me, "test"

    def serving(self, session_id: int) -> set[str]:
        return set(self.entries.get(session_id, set()))


class FakeChannel:
    """The owners' channel: what a process published, kept until a test relays it (``published``) and for good
    (``sent``)."""

    def __init__(self, published: list[dict[str, Any]]):
        self.published, self.sent = published, []

    def publish(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        self.published.append(message)

    def close(self) -> None:
        pass


class Process:
    """One process's ownership with its connections counted, and what it published."""

    def __init__(self, name: str, locks: dict[int, str], entries: dict[int, set[str]]):
        self.name, self.entries = name, entries
        self.connections: dict[int, int] = {}
        self.published: list[dict[str, Any]] = []
        self.channel = FakeChannel(self.published)
        self.ownership = Ownership(
            FakeClaims(locks, name),
            FakeRegistry(entries, name),
            self.channel,
            serving=lambda session_id: self.connections.get(session_id, 0),
            announce=lambda session_id: entries.setdefault(session_id, set()).add(name),
            spawn=lambda *_args: None,
            make_event=threading.Event,
        )

    def connect(self, session_id: int) -> None:
        self.connections[session_id] = self.connections.get(session_id, 0) + 1
        self.ownership.arrived(session_id)

    def disconnect(self, session_id: int) -> None:
        self.connections[session_id] -= 1
        if not self.connections[session_id]:
            del self.connections[session_id]
            self.entries.get(session_id, set()).discard(self.name)
            self.ownership.left(session_id)


@pytest.fixture
def two():
    locks: dict[int, str] = {}
    entries: dict[int, set[str]] = {}
    return Process("a", locks, entries), Process("b", locks, entries)


def relay(sender: Process, receiver: Process) -> None:
    """Hand what ``sender`` published so far to ``receiver``'s listener."""
    for message in sender.published:
        receiver.ownership.heard(message)
    sender.published.clear()


def test_the_first_process_a_session_reaches_owns_it_and_keeps_its_broadcasts(two):
    a, _b = two
    a.connect(7)
    a.connect(7)
    assert a.ownership.claims.owns(7) and a.ownership.local(7)
    assert a.published == []  # nothing asked of anyone


def test_a_guest_asks_the_owner_who_publishes_from_then_on_until_the_guest_leaves(two, monkeypatch):
    a, b = two
    monkeypatch.setattr(ownership_module, "SPLIT_WAIT_SECONDS", 0.05)
    a.connect(7)
    b.connect(7)  # no answer arrives in this test's time: served as a guest all the same
    assert not b.ownership.claims.owns(7) and 7 in b.ownership.guest_of
    assert b.published == [{"kind": "split", "session": 7, "from": "b"}]
    relay(b, a)
    assert not a.ownership.local(7)  # published from now on
    assert a.published == [{"kind": "joined", "session": 7, "to": "b", "from": "a"}]
    b.disconnect(7)
    assert b.published == [{"kind": "left", "session": 7, "from": "b"}]
    relay(b, a)
    assert a.ownership.local(7)


def test_an_owner_with_nobody_left_hands_the_session_to_the_guest_that_asks(two, monkeypatch):
    a, b = two
    monkeypatch.setattr(ownership_module, "SPLIT_WAIT_SECONDS", 0.05)
    a.connect(7)
    a.disconnect(7)
    assert a.ownership.claims.owns(7)  # kept a while: a page reloading comes back to it
    b.published.append({"kind": "split", "session": 7, "from": "b"})
    relay(b, a)
    assert not a.ownership.claims.owns(7)
    assert a.published == [{"kind": "released", "session": 7, "to": "b", "from": "a"}]
    b.connect(7)  # its claim succeeds now
    assert b.ownership.claims.owns(7) and b.ownership.local(7)


def test_a_new_owner_counts_the_processes_already_serving_the_session_as_its_guests(two):
    a, b = two
    b.entries[7] = {"b"}  # b serves session 7 (its owner died)
    b.ownership.guest_of.add(7)
    a.connect(7)  # claims it: b is its guest from the start
    assert a.ownership.claims.owns(7) and not a.ownership.local(7)
    assert a.ownership.guests[7] == {"b"}


def test_housekeeping_forgets_gone_guests_gives_up_quiet_sessions_and_takes_over_orphans(two, monkeypatch):
    a, b = two
    monkeypatch.setattr(ownership_module, "SPLIT_WAIT_SECONDS", 0.05)
    a.connect(7)
    b.connect(7)
    relay(b, a)
    b.entries[7].discard("b")  # b's entry expired: b died without saying ``left``
    a.ownership.housekeep()
    assert a.ownership.local(7)
    b.entries[7].add("b")  # b serves 7 again, but its ``split`` was lost (Redis away): the registry tells
    a.ownership.housekeep()
    assert a.ownership.guests[7] == {"b"} and not a.ownership.local(7)
    b.entries[7].discard("b")
    a.ownership.housekeep()
    a.connect(8)
    a.disconnect(8)
    monkeypatch.setattr(ownership_module, "GIVE_UP_AFTER_SECONDS", 0.0)
    a.ownership.housekeep()
    assert not a.ownership.claims.owns(8) and a.ownership.claims.owns(7)
    # b serves 7 as a guest; a gives 7 up: b takes it at its next housekeeping
    b.entries[7].add("b")
    a.ownership.give_up(7)
    b.ownership.housekeep()
    assert b.ownership.claims.owns(7) and b.ownership.guests[7] == {"a"}  # a's entry is still there


def test_only_the_owner_or_for_an_orphan_the_timers_holder_runs_a_deadline(two):
    a, b = two
    a.connect(7)
    assert a.ownership.runs_deadlines(7, holds_timers=False)
    assert not b.ownership.runs_deadlines(7, holds_timers=True)  # a owns it
    assert b.ownership.runs_deadlines(9, holds_timers=True)  # nobody owned 9: b claims it for its deadline
    assert b.ownership.claims.owns(9) and not a.ownership.runs_deadlines(9, holds_timers=True)


def test_healthz_lists_the_sessions_served_by_join_code_to_the_host_only(app, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=2)
    juror = Role(socketio, app, {"token": people.jurors["J1"]})
    stage = Role(socketio, app, people.stage_auth)
    assert juror.connected and stage.connected
    client = app.test_client()
    anonymous = client.get("/healthz").get_json()["sessions"]
    assert anonymous == {str(people.session_id): {"connections": 2, "owner": True}}
    as_host = client.get("/healthz", headers={"Authorization": f"Bearer {host_api_token()}"}).get_json()["sessions"]
    assert as_host == {people.code: {"connections": 2, "owner": True}}
    wrong = client.get("/healthz", headers={"Authorization": "Bearer not-the-token"}).get_json()["sessions"]
    assert wrong == anonymous
    juror.client.disconnect()
    stage.client.disconnect()
    assert client.get("/healthz").get_json()["sessions"] == {}


def test_ten_connections_arriving_at_once_at_a_guest_ask_the_owner_once_and_all_wait_for_its_answer(two, monkeypatch):
    a, b = two
    monkeypatch.setattr(ownership_module, "SPLIT_WAIT_SECONDS", 0.5)
    a.connect(7)
    sent = b.channel.sent  # everything b published, kept past the relays
    start = threading.Barrier(10)
    settled: list[bool] = []

    def arrive() -> None:
        start.wait()
        b.connect(7)
        settled.append(7 in b.ownership.guest_of)  # none reads its snapshot before the arrival is settled

    threads = [threading.Thread(target=arrive) for _ in range(10)]
    for thread in threads:
        thread.start()
    for _ in range(100):  # the owner answers the one split it was sent, as its listener would
        if b.published:
            relay(b, a)
            relay(a, b)
            break
        threading.Event().wait(0.01)
    for thread in threads:
        thread.join(timeout=10)
    assert settled == [True] * 10
    assert sent == [{"kind": "split", "session": 7, "from": "b"}]  # asked once, for all ten
    assert a.ownership.guests[7] == {"b"} and not a.ownership.local(7)
    assert b.connections[7] == 10


class ListenedRedis:
    """Redis as the channel's listener meets it: each pub/sub connection delivers a message ``heard`` cannot
    handle; ``stop`` is called once ``connections`` of them have been opened."""

    def __init__(self, connections: int, stop):
        self.opened: list[ListenedRedis.PubSub] = []
        self.connections, self.stop = connections, stop

    class PubSub:
        def __init__(self, redis: ListenedRedis):
            self.redis, self.closed, self.delivered = redis, False, False

        def subscribe(self, _channel: str) -> None:
            pass

        def get_message(self, timeout: float) -> dict[str, Any] | None:
            if self.delivered:
                return None
            self.delivered = True
            if len(self.redis.opened) >= self.redis.connections:
                self.redis.stop()
            return {"data": b"[]"}  # JSON, but no message: handling it raises

        def close(self) -> None:
            self.closed = True

    def pubsub(self, **_options: Any) -> ListenedRedis.PubSub:
        self.opened.append(ListenedRedis.PubSub(self))
        return self.opened[-1]

    def close(self) -> None:
        pass


def test_a_message_that_cannot_be_handled_closes_the_channel_s_connection_before_listening_again():
    """The listener opens a new pub/sub connection after a message it could not handle: the old one was left open
    (one more Redis connection per such message, for the life of the process)."""
    import redis

    holder: list[Ownership] = []
    listened = ListenedRedis(3, stop=lambda: holder[0].stop())
    ownership = Ownership(
        FakeClaims({}, "a"),
        FakeRegistry({}, "a"),
        Channel(listened, "vtt:owners:test", redis.RedisError),
        serving=lambda _session_id: 0,
        announce=lambda _session_id: None,
        spawn=lambda task, *args: task(*args),  # the listener runs here, until the third connection stops it
        make_event=threading.Event,
    )
    holder.append(ownership)
    ownership.start()
    assert len(listened.opened) == 3
    assert [pubsub.closed for pubsub in listened.opened] == [True, True, True]
