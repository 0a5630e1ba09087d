"""Each VTT session is owned by one process at a time, so that N processes do N times the work.

With several processes (PostgreSQL and ``REDIS_URL``), every broadcast used to go through the Redis queue and every
process received and re-emitted every other process's broadcasts, whoever its clients were: a fixed cost per process
that capped what more processes could do.  nginx now routes every connection of a session to one process (it hashes
the ``session`` query parameter the pages and bots send), and that process owns the session:

- **The claim** is a lock in PostgreSQL (``vtt.realtime.claims``), taken by the first process a connection of the
  session reaches.  The owner runs the session's deadlines.
- **Broadcasts stay on the owner** (``local``: emitted to its own connections, never published) while all of the
  session's connections are on it.
- **A connection that reaches another process still works**, through the queue: before its snapshot is read, that
  process (a *guest* of the session) writes its entry in the shared registry of who serves what
  (``vtt.realtime.presence``), then asks the owner on the Redis channel ``vtt:owners:<database>`` to publish the
  session's broadcasts (``split``); the owner answers ``joined`` once it does, and the guest reads the snapshot only
  then.  So every broadcast is either older than the snapshot (committed before it was read) or reaches the guest
  through the queue.  A guest whose last connection of the session leaves says ``left``.
- **Ownership follows the connections.**  An owner with no connection of a session gives it up after
  ``GIVE_UP_AFTER_SECONDS``, or at once when a guest asks (``released``: the guest claims it).  A guest whose owner
  died claims the session at its next housekeeping.  A new owner reads the registry first: the processes already
  serving some of the session's connections are its guests from the start.
- **Deadlines fire once**: a session's owner ticks it; a due session nobody owns is claimed by the process holding
  the timers (``vtt.realtime.claims``), which ticks it and gives it up once it has been quiet.

Without Redis (one process) or on SQLite nothing here applies: every broadcast is emitted as before.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any

from .claims import Claims

log = logging.getLogger(__name__)

SPLIT_WAIT_SECONDS = 1.0  # how long a guest waits for the owner's answer before serving its connection anyway
GIVE_UP_AFTER_SECONDS = 10.0  # an owner with no connection of a session keeps it this long (a page reloading)
RETRY_SECONDS = 1.0  # the channel's listener, after Redis went away
UNKNOWN_GUEST = "?"  # a guest of a session when Redis could not say who serves it


class Channel:
    """The owners' Redis channel ``vtt:owners:<database>``: what this process publishes on it, and the listener
    that hands every message heard to a handler."""

    def __init__(self, client: Any, name: str, errors: type[Exception] | tuple[type[Exception], ...]):
        self.client, self.name, self.errors = client, name, errors

    @classmethod
    def from_url(cls, redis_url: str, database: str) -> Channel:
        import redis  # only with REDIS_URL (imported after gevent's patch, as the server does)

        client = redis.Redis.from_url(redis_url, socket_connect_timeout=2, socket_timeout=2)
        return cls(client, f"vtt:owners:{database}", redis.RedisError)

    def publish(self, message: dict[str, Any]) -> None:
        try:
            self.client.publish(self.name, json.dumps(message))
        except self.errors as error:
            log.warning("ownership: could not publish %s (%s)", message.get("kind"), error)

    def listen(self, heard: Callable[[dict[str, Any]], None], listening: Callable[[], bool]) -> None:
        """Hand each message to ``heard`` while ``listening()``; a new pub/sub connection after a failure (the old
        one closed first)."""
        while listening():
            pubsub = self.client.pubsub(ignore_subscribe_messages=True)
            try:
                pubsub.subscribe(self.name)
                while listening():
                    message = pubsub.get_message(timeout=1.0)
                    if message is not None:
                        heard(json.loads(message["data"]))
            except self.errors as error:
                log.warning("ownership: the channel failed (%s); listening again in %s s", error, RETRY_SECONDS)
                time.sleep(RETRY_SECONDS)
            except Exception:
                log.exception("ownership: a message could not be handled")
            finally:  # the next turn opens a new one: this one's connection goes back now
                pubsub.close()

    def close(self) -> None:
        self.client.close()


class Ownership:
    """This process's side of session ownership (the module's docstring).

    ``registry`` is the shared presence (``vtt.realtime.presence.SharedPresence``), None without Redis;
    ``channel`` the owners' channel (:class:`Channel`), None without Redis or on SQLite; ``serving(session_id)``
    counts this process's connections of a session; ``announce(session_id)`` writes this process's registry entry of
    a session now; ``spawn`` starts a background task and ``make_event`` makes an event of the server's async mode
    (gevent's under ``vtt serve``).  Whether a session is this process's is asked of the claims alone
    (``claims.owns``)."""

    def __init__(
        self,
        claims: Claims,
        registry: Any,
        channel: Channel | None,
        serving: Callable[[int], int],
        announce: Callable[[int], None],
        spawn: Callable[..., Any],
        make_event: Callable[[], Any],
    ):
        self.claims = claims
        self.registry = registry
        self.channel = channel
        self.enabled = claims.shared and registry is not None and channel is not None
        self._serving, self._announce, self._spawn, self._make_event = serving, announce, spawn, make_event
        # Per session, each let go by the rule beside it (docs/design.md, "Memory over months"); ``housekeep`` must
        # run every few seconds (the hub's housekeeping, or the shared presence's refresh with Redis).
        # per owned session: the other processes serving some of it; gone with the claim (give_up)
        self.guests: dict[int, set[str]] = {}
        # sessions this process serves as a guest (announced to the owner): gone at its last connection (left)
        self.guest_of: set[int] = set()
        self._settling: dict[int, Any] = {}  # session -> event set once this process's arrival is settled: gone then
        self._asking: dict[int, Any] = {}  # session -> event set when the owner answers a split: gone after the wait
        self._answers: dict[int, str] = {}  # session -> that answer: kept only while asking, taken by the asker
        # owned sessions with no connection here, since when: gone at a connection's arrival or with the claim
        self._empty_since: dict[int, float] = {}
        self._running = False

    @property
    def me(self) -> str:
        """This process's name in the registry and on the channel."""
        return self.registry.process if self.registry is not None else ""

    # --- what the rest of the server asks ----------------------------------------------------------------------

    def local(self, session_id: int) -> bool:
        """Whether a broadcast of ``session_id`` may stay on this process: it owns the session and no other process
        serves any of its connections."""
        return self.enabled and self.claims.owns(session_id) and not self.guests.get(session_id)

    def runs_deadlines(self, session_id: int, holds_timers: bool) -> bool:
        """Whether this process ticks ``session_id``'s due deadline: its owner does; a session nobody owns is
        claimed by the process holding the timers (and given up once quiet)."""
        if self.claims.owns(session_id):
            return True
        if not holds_timers or session_id in self.guest_of:
            return False
        return self._adopt(session_id)

    def held_sessions(self) -> dict[str, set[int]]:
        """Which sessions each of this process's ownership tables holds (``Hub.held_sessions``)."""
        return {
            "claims.sessions": set(self.claims.sessions),
            "ownership.guests": set(self.guests),
            "ownership.guest_of": set(self.guest_of),
            "ownership.settling": set(self._settling),
            "ownership.asking": set(self._asking),
            "ownership.answers": set(self._answers),
            "ownership.empty_since": set(self._empty_since),
        }

    # --- connections ---------------------------------------------------------------------------------------------

    def arrived(self, session_id: int) -> None:
        """A connection of ``session_id`` reached this process: settle who owns the session before the connection's
        snapshot is read (waits for the owner's answer the first time, at most ``SPLIT_WAIT_SECONDS``)."""
        self._empty_since.pop(session_id, None)
        if not self.claims.shared:  # SQLite: the one process owns every session it serves
            self.claims.claim(session_id)
            return
        if self.claims.owns(session_id) or session_id in self.guest_of:
            return
        settling = self._settling.get(session_id)
        if settling is not None:  # another connection of the session is settling it: its answer is this one's
            settling.wait(SPLIT_WAIT_SECONDS + 1)
            return
        settled = self._settling[session_id] = self._make_event()
        try:
            if self.registry is not None:
                self._announce(session_id)  # before the claim: a new owner reads it (module docstring)
            if self._adopt(session_id):
                return
            if not self.enabled:
                return
            if self._ask_owner(session_id) == "released" and self._adopt(session_id):
                return
            self.guest_of.add(session_id)
        finally:
            self._settling.pop(session_id, None)
            settled.set()

    def left(self, session_id: int) -> None:
        """This process's last connection of ``session_id`` closed."""
        if session_id in self.guest_of:
            self.guest_of.discard(session_id)
            self._publish({"kind": "left", "session": session_id, "from": self.me})
        elif not self.claims.shared:  # SQLite: nobody else could serve it; a deadline due later adopts it again
            self.give_up(session_id)
        elif self.claims.owns(session_id):
            self._empty_since.setdefault(session_id, time.monotonic())

    def housekeep(self) -> None:
        """Every few seconds (with the presence refresh): give up the sessions quiet here, take over the sessions
        served here as a guest whose owner is gone, and take each owned session's guests from the registry."""
        now = time.monotonic()
        for session_id in list(self.claims.sessions):
            if self._serving(session_id):
                self._empty_since.pop(session_id, None)
                # The registry is the truth: a guest whose entry expired is gone, and a guest whose ``split``
                # was lost (Redis away just then) is found (None: Redis could not say; nothing changes).
                serving = self.registry.serving(session_id) if self.registry is not None else None
                if serving is not None:
                    self.guests[session_id] = serving - {self.me}
            elif now - self._empty_since.setdefault(session_id, now) >= GIVE_UP_AFTER_SECONDS:
                self.give_up(session_id)
        for session_id in list(self.guest_of):
            if self._adopt(session_id):
                log.warning("this process owns session %s now (its owner is gone)", session_id)

    # --- the channel -----------------------------------------------------------------------------------------------

    def start(self) -> None:
        if self.enabled and not self._running:
            self._running = True
            self._spawn(self.channel.listen, self.heard, lambda: self._running)

    def stop(self) -> None:
        self._running = False
        if self.channel is not None:
            self.channel.close()

    def heard(self, message: dict[str, Any]) -> None:
        """A message of the channel (:meth:`Channel.listen`), this process's own included (ignored)."""
        kind, session_id = message.get("kind"), message.get("session")
        if message.get("from") == self.me:
            return
        if kind == "split" and self.claims.owns(session_id):
            asker = message["from"]
            if self._serving(session_id):
                self.guests.setdefault(session_id, set()).add(asker)  # from now on its broadcasts are published
                self._publish({"kind": "joined", "session": session_id, "to": asker, "from": self.me})
            else:  # nobody here: the asker may have it
                self.give_up(session_id)
                self._publish({"kind": "released", "session": session_id, "to": asker, "from": self.me})
        elif kind in ("joined", "released") and message.get("to") == self.me:
            asking = self._asking.get(session_id)
            if asking is not None:  # an answer after the asker stopped waiting is not kept
                self._answers[session_id] = kind
                asking.set()
        elif kind == "left" and session_id in self.guests:
            self.guests[session_id].discard(message["from"])

    def _ask_owner(self, session_id: int) -> str | None:
        """Ask the session's owner to publish its broadcasts; its answer (``joined`` or ``released``), or None when
        none came in time (an owner that died meanwhile: its connections' processes claim the session later)."""
        self._answers.pop(session_id, None)
        asking = self._asking[session_id] = self._make_event()
        try:
            self._publish({"kind": "split", "session": session_id, "from": self.me})
            asking.wait(SPLIT_WAIT_SECONDS)
        finally:
            self._asking.pop(session_id, None)
        answer = self._answers.pop(session_id, None)
        if answer is None:
            log.warning("no owner of session %s answered: serving it as a guest", session_id)
        return answer

    def _publish(self, message: dict[str, Any]) -> None:
        if self.channel is not None:
            self.channel.publish(message)

    # --- claims ------------------------------------------------------------------------------------------------------

    def _adopt(self, session_id: int) -> bool:
        """Claim ``session_id``; once owned, the processes already serving some of it are its guests."""
        if not self.claims.claim(session_id):
            return False
        self.guest_of.discard(session_id)
        serving = self.registry.serving(session_id) if self.registry is not None else set()
        # Redis could not say who else serves it: published, as if some process did, until the next housekeeping
        self.guests[session_id] = {UNKNOWN_GUEST} if serving is None else serving - {self.me}
        if not self._serving(session_id):
            self._empty_since.setdefault(session_id, time.monotonic())
        return True

    def give_up(self, session_id: int) -> None:
        """No longer own ``session_id`` (its claim and the owner's tables of it let go)."""
        self.claims.give_up(session_id)
        self.guests.pop(session_id, None)
        self._empty_since.pop(session_id, None)
