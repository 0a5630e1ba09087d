"""Who is connected to a session, over every process that serves it, and the host's ``presence`` message of it.

Each process knows its own connections (``vtt.realtime.connections``).  With ``REDIS_URL`` every process also keeps its
summary of each session in Redis, one key per session and process (``vtt:presence:<database>:<session>:<process>``)
with an expiry, rewritten every ``PRESENCE_REFRESH_SECONDS``; a set per session (``vtt:presence:<database>:<session>``)
names the processes that wrote one.  (The database's name is in the keys: session ids are a database's, and two
databases' servers may share one Redis.)  A process that dies stops rewriting, and Redis drops its entry within
``PRESENCE_EXPIRY_SECONDS``.  The presence message merges this process's connections with every other live
process's entry: two tabs of one juror on two processes count once.  Without ``REDIS_URL``, presence is this
process's connections alone.  The host hears of a change at most once per ``PRESENCE_SECONDS`` (:class:`HostPresence`).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import uuid
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .connections import Connections

log = logging.getLogger(__name__)

PRESENCE_SECONDS = 1.0  # at most one presence message a second per session
PRESENCE_LABELS = 500  # juror labels listed to the host; beyond that, the count
PRESENCE_REFRESH_SECONDS = 2.0
PRESENCE_EXPIRY_SECONDS = 6.0  # three refreshes: one late refresh does not make a live process vanish
REDIS_TIMEOUT_SECONDS = 2.0


def summary(identities: Iterable[Any]) -> dict[str, Any]:
    """One process's connections to one session (``Identity`` objects), as kept in Redis."""
    identities = list(identities)
    return {
        "players": sorted({who.actor_id for who in identities if who.role == "player"}),
        "jurors": sorted({who.label for who in identities if who.role == "juror"}),
        "stage": sum(who.role == "stage" for who in identities),
        "hosts": sum(who.role == "host" for who in identities),
    }


def merged(summaries: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The presence message (docs/protocol.md ``presence``) of several processes' summaries."""
    summaries = list(summaries)
    jurors = sorted({label for part in summaries for label in part["jurors"]})
    return {
        "players": sorted({player for part in summaries for player in part["players"]}),
        "jurors": len(jurors),
        "juror_labels": jurors[:PRESENCE_LABELS],
        "stage": sum(part["stage"] for part in summaries),
        "hosts": sum(part["hosts"] for part in summaries),
    }


class SharedPresence:
    """This process's entries in Redis and the other processes' entries read back.

    Every call is one or two round trips (a pipeline), made at most once per presence message or refresh, never
    per connection.  Redis away: this process counts only its own connections until Redis is back.
    """

    def __init__(self, redis_url: str, database: str):
        import redis  # only with REDIS_URL (imported after gevent's patch, as the server does)

        self._redis = redis.Redis.from_url(
            redis_url, socket_timeout=REDIS_TIMEOUT_SECONDS, socket_connect_timeout=REDIS_TIMEOUT_SECONDS
        )
        self._errors = redis.RedisError
        self.process = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.database = database
        self._prefix = f"vtt:presence:{database}"
        self.written: set[int] = set()  # sessions this process has an entry for
        self._failing = False

    def write(self, summaries: dict[int, dict[str, Any]], *, every_session: bool = False) -> None:
        """Write this process's summary of each session given (and renew its expiry); with ``every_session``,
        ``summaries`` is all this process has, and the entries of the sessions it no longer serves are dropped."""
        gone = self.written - summaries.keys() if every_session else set()
        pipe = self._redis.pipeline(transaction=False)
        expiry_ms = int(PRESENCE_EXPIRY_SECONDS * 1000)
        for session_id, part in summaries.items():
            pipe.set(self._entry(session_id, self.process), json.dumps(part), px=expiry_ms)
            pipe.sadd(self._index(session_id), self.process)
            pipe.pexpire(self._index(session_id), expiry_ms)
        for session_id in gone:
            pipe.delete(self._entry(session_id, self.process))
            pipe.srem(self._index(session_id), self.process)
        if self._call(pipe.execute) is not None:
            self.written = (self.written - gone) | summaries.keys()

    def others(self, session_id: int) -> list[dict[str, Any]]:
        """The other live processes' summaries of a session (an expired entry's name is taken out of the set)."""
        members = self._call(self._redis.smembers, self._index(session_id)) or set()
        processes = [name for name in (member.decode() for member in members) if name != self.process]
        if not processes:
            return []
        values = self._call(self._redis.mget, [self._entry(session_id, name) for name in processes])
        if values is None:
            return []
        expired = [name for name, value in zip(processes, values, strict=True) if value is None]
        if expired:
            self._call(self._redis.srem, self._index(session_id), *expired)
        return [json.loads(value) for value in values if value is not None]

    def serving(self, session_id: int) -> set[str] | None:
        """The processes (this one too) with a live entry for a session; None when Redis could not say."""
        members = self._call(self._redis.smembers, self._index(session_id))
        if members is None:
            return None
        processes = sorted(member.decode() for member in members)
        if not processes:
            return set()
        values = self._call(self._redis.mget, [self._entry(session_id, name) for name in processes])
        if values is None:
            return None
        return {name for name, value in zip(processes, values, strict=True) if value is not None}

    def withdraw(self) -> None:
        """Drop this process's entries at once (a process stopping cleanly)."""
        self.write({}, every_session=True)
        self._redis.close()

    def _index(self, session_id: int) -> str:
        return f"{self._prefix}:{session_id}"

    def _entry(self, session_id: int, process: str) -> str:
        return f"{self._prefix}:{session_id}:{process}"

    def _call(self, command: Callable[..., Any], *args: Any) -> Any:
        """A Redis command's result, or None when Redis failed (logged once per outage)."""
        try:
            result = command(*args)
        except self._errors as error:
            if not self._failing:
                log.warning("presence: Redis failed (%s); counting this process's connections only", error)
            self._failing = True
            return None
        if self._failing:
            log.warning("presence: Redis is back")
            self._failing = False
        return result


class HostPresence:
    """The host's ``presence`` message of a session: this process's connections (``connections``) merged with the
    other processes' entries in Redis (``shared``, None without Redis).

    ``send(session_id, message)`` sends it to the session's hosts; ``spawn`` starts a background task and ``sleep``
    waits (the server's async mode); ``refreshed()`` runs after each refresh of the shared presence (the ownership's
    housekeeping).  Its per-session tables let a session go by the rule beside them (docs/design.md, "Memory over
    months")."""

    def __init__(
        self,
        connections: Connections,
        shared: SharedPresence | None,
        send: Callable[[int, dict[str, Any]], None],
        spawn: Callable[..., Any],
        sleep: Callable[[float], Any],
        refreshed: Callable[[], None],
    ):
        self.connections, self.shared = connections, shared
        self._send, self._spawn, self._sleep, self._refreshed = send, spawn, sleep, refreshed
        self._due: set[int] = set()  # sessions whose host gets a presence message shortly: gone once sent
        # the last presence message this process sent (for the refresh's comparison): gone with the last connection
        self._sent: dict[int, dict[str, Any]] = {}
        self.refreshing = False  # the shared presence's refresh runs (with Redis, from the first connection)

    def here(self, session_id: int) -> dict[str, Any]:
        """This process's connections to a session (:func:`summary`)."""
        return summary(self.connections.of_session(session_id))

    def announce(self, session_id: int) -> None:
        """Write this process's entry of a session in Redis now (a guest's, before it asks the owner)."""
        self.shared.write({session_id: self.here(session_id)})

    def message(self, session_id: int) -> dict[str, Any]:
        """Who is connected to a session: player ids, juror labels (the first few hundred), stage screens, hosts."""
        here = self.here(session_id)
        if self.shared is None:
            return merged([here])
        return merged([here, *self.shared.others(session_id)])

    def changed(self, session_id: int) -> None:
        """Tell the session's host who is connected, at most once per PRESENCE_SECONDS (thousands of jurors
        connect within seconds: one message per connection would cost the host's page more than it tells)."""
        if self.shared is not None and not self.refreshing:
            self.refreshing = True
            self._spawn(self._refresh)
        if session_id in self._due:
            return
        self._due.add(session_id)

        def send() -> None:
            self._sleep(PRESENCE_SECONDS)
            self._due.discard(session_id)
            if self.shared is not None:  # the other processes count this change from now on
                self.shared.write({session_id: self.here(session_id)})
            message = self.message(session_id)
            if self.connections.serves(session_id):  # kept for the refresh's comparison while a connection is here
                self._sent[session_id] = message
            self._send(session_id, message)

        self._spawn(send)

    def _refresh(self) -> None:
        """With Redis: renew this process's entries, and tell the hosts connected here when the session's
        presence changed elsewhere (a process that died is gone from it once its entries expired)."""
        while self.refreshing:
            try:
                self._refresh_once()
                self._refreshed()
            except Exception:
                log.exception("refreshing the shared presence failed")
            self._sleep(PRESENCE_REFRESH_SECONDS)

    def _refresh_once(self) -> None:
        connected = self.connections.by_session()
        self.shared.write({session_id: summary(here) for session_id, here in connected.items()}, every_session=True)
        for session_id, here in connected.items():
            hosted_here = any(who.role == "host" for who in here)
            if hosted_here and self.message(session_id) != self._sent.get(session_id):
                self.changed(session_id)

    def let_go(self, session_id: int) -> None:
        """The session's last connection here left."""
        self._sent.pop(session_id, None)

    def sweep(self) -> None:
        """The housekeeping: what a message sent while the last connection left put back."""
        for session_id in [session_id for session_id in list(self._sent) if not self.connections.serves(session_id)]:
            self._sent.pop(session_id, None)

    def held_sessions(self) -> dict[str, set[int]]:
        held = {"presence.due": set(self._due), "presence.sent": set(self._sent)}
        if self.shared is not None:
            held["presence.written"] = set(self.shared.written)
        return held

    def stop(self) -> None:
        """A process stopping: the refresh ends and this process's entries leave Redis at once."""
        self.refreshing = False
        if self.shared is not None:
            self.shared.withdraw()
