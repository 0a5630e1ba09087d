"""The live side of one app: its writer, and the parts each connection goes through.

A connection is identified (``vtt.realtime.identify``), counted (``vtt.realtime.connections``), its session's
ownership settled (``vtt.realtime.ownership``), sent its snapshot (``vtt.realtime.snapshots``), and its session's
host told who is connected (``vtt.realtime.presence``).  The hub holds one of each, starts and stops them with the
writer, and lets each part's per-session tables go when a session's last connection leaves and at the housekeeping.

Three things are called "session" here and are named apart: a VTT session (``vtt_session``,
``session_id``), a database session (``db``), and a Socket.IO connection (``sid``).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from flask import Flask, current_app
from flask_socketio import SocketIO
from sqlalchemy import make_url
from sqlalchemy.orm import Session, sessionmaker

from ..db import KeptDb, make_writer_engine
from ..engine.actions import Action, Actor, Refusal, read_args
from ..protocol.messages import Auth
from .claims import Claims
from .connections import Connections
from .identify import Identity, identify
from .loopwatch import LoopWatch, QuietCollector
from .outbox import Outbox, person_room, sessions_of_rooms
from .ownership import Channel, Ownership
from .presence import HostPresence, SharedPresence
from .snapshots import Pacing, Snapshots, TokenBucket
from .writer import Writer

log = logging.getLogger(__name__)

# How often a serving process lets go of what it keeps of the sessions it no longer serves (Hub.housekeep).
HOUSEKEEP_SECONDS = 5.0


class Hub:
    def __init__(self, app: Flask, socketio: SocketIO, reader: sessionmaker[Session]):
        self.socketio = socketio
        self.reader = reader
        self.database_url = app.config["DATABASE_URL"]
        self.secret_key = app.config["SECRET_KEY"]  # door codes and stage keys (vtt.access.admission)
        # Every per-session table of the live side belongs to one part, which lets a session go by the rule beside it
        # (docs/design.md, "Memory over months"): at the session's last connection here (:meth:`depart`) and at the
        # housekeeping (:meth:`housekeep`); :meth:`held_sessions` lists them all.
        self.registry = Connections()
        # Every process's connections, with REDIS_URL (vtt.realtime.presence); refreshed from the first connection.
        redis_url = app.config.get("REDIS_URL")
        database = make_url(self.database_url).database or ""
        self.shared_presence = SharedPresence(redis_url, database) if redis_url else None
        claims = Claims(self.database_url)
        self.ownership = Ownership(
            claims,
            self.shared_presence,
            Channel.from_url(redis_url, database) if redis_url and claims.shared else None,
            serving=self.registry.count,
            announce=lambda session_id: self.host_presence.announce(session_id),
            spawn=socketio.start_background_task,
            make_event=lambda: socketio.server.eio.create_event(),
        )
        self.outbox = Outbox(socketio, app.config.get("AUDIT_LOG"), local=self.ownership.local)
        self.host_presence = HostPresence(
            self.registry,
            self.shared_presence,
            send=lambda session_id, message: self.outbox.to_audience(session_id, "host", "presence", message),
            spawn=socketio.start_background_task,
            sleep=socketio.sleep,
            refreshed=self.ownership.housekeep,
        )
        self.snapshots = Snapshots(reader, self.secret_key, self.host_presence.message, self.registry.serves)
        self.pacing = Pacing(socketio.start_background_task, socketio.sleep)
        self._housekeeping = False
        self._writer: Writer | None = None
        self._lock = threading.Lock()
        self.loop_watch = LoopWatch(socketio)  # both started by the server (vtt serve), not in tests' apps
        self.collector = QuietCollector(socketio, lambda: self._writer.batches if self._writer else 0)

    @property
    def connections(self) -> dict[str, Identity]:
        """Who each connection of this process is, by ``sid``."""
        return self.registry.identities

    @property
    def displaced_arrivals(self) -> TokenBucket:
        """The pace of displaced jurors' snapshots (vtt.realtime.snapshots.Pacing)."""
        return self.pacing.arrivals

    # --- the writer ---------------------------------------------------------------------------

    @property
    def writer(self) -> Writer:
        started = self._writer
        if started is not None:  # every action asks: no lock once the writer runs
            return started
        return self._start_writer()

    def _start_writer(self) -> Writer:
        with self._lock:
            if self._writer is None:
                database = KeptDb(make_writer_engine(self.database_url))
                self._writer = Writer(self.socketio, database, self.reader, self.outbox, self.ownership)
                self._writer.start()
            return self._writer

    @property
    def holds_timers(self) -> bool:
        """Whether this process runs the session timers (vtt.realtime.claims); no writer yet: it does not."""
        started = self._writer
        return started is not None and started.holds_timers

    def start(self) -> None:
        """Serving (``vtt serve``): the loop's watch, the quiet collector and the writer start now; the writer's
        ticker competes for the session timers from the start, not from this process's first action."""
        self.loop_watch.start()
        self.collector.start()
        self.ownership.start()
        self._start_writer()
        if not self._housekeeping:
            self._housekeeping = True
            self.socketio.start_background_task(self._housekeep_while_serving)

    def stop(self) -> None:
        self.loop_watch.running = self.collector.running = False
        self._housekeeping = False
        self.host_presence.stop()
        self.ownership.stop()
        with self._lock:
            if self._writer is not None:
                self._writer.stop()
                self._writer.database.engine.dispose()
                self._writer = None
        self.reader.kw["bind"].dispose()

    def submit(self, who: Identity, name: str, fields: dict[str, Any], client_key: str | None) -> dict[str, Any]:
        """A connection's action (the Socket.IO handlers), its fields read by its message's schema already."""
        return self.act(who.session_id, who.actor, name, fields, client_key, read=True)

    def act(
        self,
        session_id: int,
        actor: Actor,
        name: str,
        args: dict[str, Any],
        client_key: str | None = None,
        *,
        read: bool = False,
    ) -> dict[str, Any]:
        """``actor``'s action on a VTT session through this process's writer; its reply once committed.  For the
        sockets as for the HTTP views and the paper and import paths: every change goes through the engine, its
        fields read once by the schema of the client message that carries it (``read``: by the socket already;
        else here, ``read_args``)."""
        if not read:
            try:
                args = read_args(name, args, client_key)
            except Refusal as refusal:
                return refusal.reply()
        reply = self.writer.submit(session_id, Action(actor, name, args, client_key))
        person = reply.pop("disconnect", None) if reply.get("ok") else None
        if person is not None:  # removed, or given a new link: the old link's pages are closed
            self.disconnect_person(session_id, person["role"], person["id"], name)
        return reply

    def disconnect_person(self, session_id: int, role: str, person_id: int, why: str) -> None:
        """Tell a person's open pages why, then close their connections on this process (a page elsewhere is
        refused at its next connect, and a removed juror's next action is refused by the rules)."""
        target = person_room(session_id, role, person_id)
        self.outbox.to_person(session_id, role, person_id, "link_revoked", {"reason": why})
        server = self.socketio.server
        for sid, _eio_sid in list(server.manager.get_participants("/", target)):
            server.disconnect(sid)

    # --- connections ----------------------------------------------------------------------------

    def authenticate(self, auth: Auth, is_host: bool, address: str) -> Identity:
        """The identity a connection's ``auth`` proves (vtt.realtime.identify); an open join goes through the
        writer."""
        return identify(
            self.reader.kw["bind"].connect,
            self.secret_key,
            auth,
            is_host,
            address,
            join=lambda session_id, args: self.act(session_id, Actor("guest"), "join", args),
        )

    def arrive(self, sid: str, who: Identity) -> None:
        """A connection authenticated: counted, and the session's ownership settled (vtt.realtime.ownership: the
        first connection of a session owned by another process waits for the owner's answer) before its snapshot
        is read."""
        self.registry.arrive(sid, who)
        self.ownership.arrived(who.session_id)

    def depart(self, sid: str) -> Identity | None:
        """A connection closed: who it was (None: it never authenticated).  With the session's last connection
        here, every part lets the session go (the writer's state stays while a deadline is ahead: :meth:`housekeep`)."""
        who, last = self.registry.depart(sid)
        if last:
            self.snapshots.let_go(who.session_id)
            self.host_presence.let_go(who.session_id)
            self.ownership.left(who.session_id)
        return who

    def served(self) -> dict[int, int]:
        """This process's connections per session (``/healthz``)."""
        return self.registry.served()

    def snapshot(self, who: Identity) -> dict[str, Any]:
        """All the connection's role may see now, with the state_version it is valid for."""
        return self.snapshots.snapshot(who)

    def send_snapshot(self, sid: str, who: Identity) -> None:
        """The snapshot a connection gets when it connects: at once, or for a displaced juror beyond the burst,
        when their turn comes (vtt.realtime.snapshots.Pacing)."""
        self.pacing.send(
            who,
            lambda: self.outbox.to_connection(sid, who.role, "snapshot", self.snapshots.snapshot(who)),
            still_there=lambda: sid in self.registry.identities,
        )

    def presence(self, session_id: int) -> dict[str, Any]:
        """Who is connected to a session (vtt.realtime.presence.HostPresence.message)."""
        return self.host_presence.message(session_id)

    def presence_changed(self, session_id: int) -> None:
        """Tell the session's host who is connected, at most once a second."""
        self.host_presence.changed(session_id)

    # --- memory ------------------------------------------------------------------------------------

    def held_sessions(self) -> dict[str, set[int]]:
        """Which sessions each per-session cache of this process holds, by the cache's name (docs/design.md,
        "Memory over months": each one's owner and when it lets a session go)."""
        held = {
            **self.registry.held_sessions(),
            **self.snapshots.held_sessions(),
            **self.host_presence.held_sessions(),
            "socketio.rooms": sessions_of_rooms(self.socketio.server.manager.rooms.get("/", {})),
            **self.ownership.held_sessions(),
        }
        if self._writer is not None:
            held.update(self._writer.held_sessions())
        return held

    def housekeep(self) -> None:
        """Every ``HOUSEKEEP_SECONDS`` while serving (:meth:`start`): the ownership's housekeeping where the shared
        presence's refresh does not run it (no Redis, or no connection yet: a session the timers' holder adopted for
        its deadline is given up too), and every per-session cache let go of the
        sessions this process no longer serves: what a snapshot read while the last connection left put back, and
        the writer's states of sessions with no connection here and no deadline ahead (docs/design.md, "Memory over
        months")."""
        if not self.host_presence.refreshing:
            self.ownership.housekeep()
        self.snapshots.sweep()
        self.host_presence.sweep()
        started = self._writer
        if started is not None:
            started.let_go(serving=self.registry.serves)

    def _housekeep_while_serving(self) -> None:
        while self._housekeeping:
            self.socketio.sleep(HOUSEKEEP_SECONDS)
            try:
                self.housekeep()
            except Exception:
                log.exception("housekeeping failed")


def current_hub() -> Hub:
    """The current app's hub: every live action of a session goes through it."""
    return current_app.extensions["vtt.hub"]
