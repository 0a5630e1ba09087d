"""The live side of one app: who each Socket.IO connection is, snapshots, and the process's writer.

Three things are called "session" here and are named apart: a VTT session (``vtt_session``,
``session_id``), a database session (``db``), and a Socket.IO connection (``sid``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flask import Flask, current_app
from flask_socketio import SocketIO
from sqlalchemy import bindparam, make_url, select
from sqlalchemy.orm import Session, sessionmaker

from ..access.admission import admit, session_route, stage_key, stage_key_valid
from ..db import KeptDb, make_writer_engine
from ..engine import audiences, displaced
from ..engine.actions import Action, Actor, Refusal
from ..engine.rules import host_moves
from ..engine.state import LiveState
from ..models import Juror, Jury, Player, SessionStatus, VttSession
from ..persistence.load import current_version, load_state
from ..persistence.queries import assignments, juror_rows, jury_rows, rows_of_rounds
from ..protocol.messages import Auth
from .claims import Claims
from .loopwatch import LoopWatch, QuietCollector
from .outbox import Outbox, person_room, sessions_of_rooms
from .ownership import Channel, Ownership
from .presence import PRESENCE_REFRESH_SECONDS, SharedPresence, merged, summary
from .writer import Writer

log = logging.getLogger(__name__)

PRESENCE_SECONDS = 1.0
# A displaced juror's snapshot (every round they judge) costs the loop ~10 ms: thousands arriving at once from a crowd
# platform would hold it for seconds.  Beyond a burst, their snapshots are sent at this pace (the connection is
# accepted at once); a live session's pages are never held back.
DISPLACED_SNAPSHOTS_PER_SECOND = 40
DISPLACED_SNAPSHOT_BURST = 40
# How often a serving process lets go of what it keeps of the sessions it no longer serves (Hub.housekeep).
HOUSEKEEP_SECONDS = 5.0


class TokenBucket:
    """``rate`` a second, up to ``burst`` at once: :meth:`wait` says how long the next one waits for its turn."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic):
        self.rate, self.burst, self.clock = rate, burst, clock
        self._tokens, self._at = float(burst), clock()

    def wait(self) -> float:
        now = self.clock()
        self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
        self._at = now
        self._tokens -= 1  # taken now, even if in debt: the debt is the wait
        return 0.0 if self._tokens >= 0 else -self._tokens / self.rate


@dataclass(frozen=True)
class Identity:
    """Who a connection is: role, VTT session, and the player's or juror's id."""

    role: str  # host | player | juror | displaced | stage
    session_id: int
    actor_id: int | None = None
    label: str = ""
    token: str | None = field(default=None, repr=False)  # handed back to an open-join juror (never logged)
    sees_door: bool = False  # the host or the stage: may ask for the door code

    @property
    def actor(self) -> Actor:
        return Actor(self.role, self.actor_id)

    def __str__(self) -> str:  # for the log
        return f"{self.role} {self.label!r} of session {self.session_id}"


def judging_later(status: SessionStatus, removed: bool) -> None:
    """A displaced juror may judge once the session has finished, until the host removes them."""
    if status is not SessionStatus.FINISHED:
        raise Refusal("not_finished", "this session has not finished yet: come back once it has")
    if removed:
        raise Refusal("removed", "this link was withdrawn by the host")


# A connection's token, looked up as plain rows (no ORM objects built): thousands of jurors connecting at once
# spent a quarter of the connect path's time building and dropping a Juror each.
JUROR_BY_TOKEN = (
    select(Juror.id, Juror.session_id, Juror.label, Juror.jury, Juror.removed_at, VttSession.status)
    .join(VttSession, VttSession.id == Juror.session_id)
    .where(Juror.token == bindparam("token"), Juror.jury != Jury.AI)
)
PLAYER_BY_TOKEN = select(Player.id, Player.session_id, Player.name).where(Player.token == bindparam("token"))
SESSION_BY_CODE = select(VttSession.id).where(VttSession.join_code == bindparam("code"))


class Hub:
    def __init__(self, app: Flask, socketio: SocketIO, reader: sessionmaker[Session]):
        self.socketio = socketio
        self.reader = reader
        self.database_url = app.config["DATABASE_URL"]
        self.secret_key = app.config["SECRET_KEY"]  # door codes and stage keys (vtt.access.admission)
        # Every per-session table of the hub is the hub's, and lets a session go by the rule beside it (docs/design.md,
        # "Memory over months"); :meth:`held_sessions` lists them all, and :meth:`housekeep` sweeps what a race left.
        self.connections: dict[str, Identity] = {}  # per connection: gone at its disconnect (depart)
        self._per_session: dict[int, int] = {}  # this process's connections of each session: gone with the last
        self._presence_due: set[int] = set()  # sessions whose host gets a presence message shortly: gone once sent
        # the last presence message this process sent (for the refresh's comparison): gone with the last connection
        self._presence_sent: dict[int, dict[str, Any]] = {}
        # Every process's connections, with REDIS_URL (vtt.realtime.presence); refreshed from the first connection.
        redis_url = app.config.get("REDIS_URL")
        database = make_url(self.database_url).database or ""
        self.shared_presence = SharedPresence(redis_url, database) if redis_url else None
        claims = Claims(self.database_url)
        self.ownership = Ownership(
            claims,
            self.shared_presence,
            Channel.from_url(redis_url, database) if redis_url and claims.shared else None,
            serving=lambda session_id: self._per_session.get(session_id, 0),
            announce=lambda session_id: self.shared_presence.write({session_id: self._here(session_id)}),
            spawn=socketio.start_background_task,
            make_event=lambda: socketio.server.eio.create_event(),
        )
        self.outbox = Outbox(socketio, app.config.get("AUDIT_LOG"), local=self.ownership.local)
        self._refreshing = False
        # per session, for snapshots; never changed once read: gone with the session's last connection here
        self._read_states: dict[int, LiveState] = {}
        # per session: the state read, and its rounds as judged_round gives them to displaced jurors: gone with the
        # session's last connection here
        self._judged_rounds: dict[int, tuple[LiveState, dict[int, dict[str, Any]]]] = {}
        self._housekeeping = False
        self.displaced_arrivals = TokenBucket(DISPLACED_SNAPSHOTS_PER_SECOND, DISPLACED_SNAPSHOT_BURST)
        self._writer: Writer | None = None
        self._lock = threading.Lock()
        self.loop_watch = LoopWatch(socketio)  # both started by the server (vtt serve), not in tests' apps
        self.collector = QuietCollector(socketio, lambda: self._writer.batches if self._writer else 0)

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
        self._refreshing = self._housekeeping = False
        self.ownership.stop()
        if self.shared_presence is not None:
            self.shared_presence.withdraw()
        with self._lock:
            if self._writer is not None:
                self._writer.stop()
                self._writer.database.engine.dispose()
                self._writer = None
        self.reader.kw["bind"].dispose()

    def submit(self, who: Identity, name: str, args: dict[str, Any], client_key: str | None) -> dict[str, Any]:
        """A connection's action (the Socket.IO handlers)."""
        return self.act(who.session_id, who.actor, name, args, client_key)

    def act(
        self, session_id: int, actor: Actor, name: str, args: dict[str, Any], client_key: str | None = None
    ) -> dict[str, Any]:
        """``actor``'s action on a VTT session through this process's writer; its reply once committed.  For the
        HTTP views and the paper and import paths as for the sockets: every change goes through the engine."""
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

    def arrive(self, sid: str, who: Identity) -> None:
        """A connection authenticated: counted, and the session's ownership settled (vtt.realtime.ownership: the
        first connection of a session owned by another process waits for the owner's answer) before its snapshot
        is read."""
        self.connections[sid] = who
        self._per_session[who.session_id] = self._per_session.get(who.session_id, 0) + 1
        self.ownership.arrived(who.session_id)

    def depart(self, sid: str) -> Identity | None:
        """A connection closed: who it was (None: it never authenticated)."""
        who = self.connections.pop(sid, None)
        if who is None:
            return None
        left = self._per_session.get(who.session_id, 1) - 1
        if left > 0:
            self._per_session[who.session_id] = left
        else:
            self._per_session.pop(who.session_id, None)
            self._let_go(who.session_id)
            self.ownership.left(who.session_id)
        return who

    def _let_go(self, session_id: int) -> None:
        """The hub's caches of a session that has no connection here any more (the writer's state stays while a
        deadline is ahead: :meth:`housekeep`)."""
        self._read_states.pop(session_id, None)
        self._judged_rounds.pop(session_id, None)
        self._presence_sent.pop(session_id, None)

    def _serves(self, session_id: int) -> bool:
        return session_id in self._per_session

    def held_sessions(self) -> dict[str, set[int]]:
        """Which sessions each per-session cache of this process holds, by the cache's name (docs/design.md,
        "Memory over months": each one's owner and when it lets a session go)."""
        held = {
            "hub.connections": {who.session_id for who in list(self.connections.values())},
            "hub.per_session": set(self._per_session),
            "hub.presence_due": set(self._presence_due),
            "hub.presence_sent": set(self._presence_sent),
            "hub.read_states": set(self._read_states),
            "hub.judged_rounds": set(self._judged_rounds),
            "socketio.rooms": sessions_of_rooms(self.socketio.server.manager.rooms.get("/", {})),
            **self.ownership.held_sessions(),
        }
        if self.shared_presence is not None:
            held["presence.written"] = set(self.shared_presence.written)
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
        if not self._refreshing:
            self.ownership.housekeep()
        for cache in (self._read_states, self._judged_rounds, self._presence_sent):
            for session_id in [session_id for session_id in list(cache) if not self._serves(session_id)]:
                cache.pop(session_id, None)
        started = self._writer
        if started is not None:
            started.let_go(serving=self._serves)

    def _housekeep_while_serving(self) -> None:
        while self._housekeeping:
            self.socketio.sleep(HOUSEKEEP_SECONDS)
            try:
                self.housekeep()
            except Exception:
                log.exception("housekeeping failed")

    def served(self) -> dict[int, int]:
        """This process's connections per session (``/healthz``)."""
        return dict(self._per_session)

    def authenticate(self, auth: Auth, is_host: bool, address: str) -> Identity:
        """The identity a connection's ``auth`` proves; raises :class:`Refusal` otherwise.  An open join is
        counted against the join rates of ``address`` (vtt.access.admission)."""
        # A connection of the reader's engine, not an ORM session: a token is two plain queries at most, and
        # thousands of jurors connect at once (bench/bench_connect.py).
        with self.reader.kw["bind"].connect() as db:
            if auth.token:  # jurors first: thousands of them to a handful of players
                juror = db.execute(JUROR_BY_TOKEN, {"token": auth.token}).first()
                if juror is not None and juror.jury is Jury.LIVE:
                    return Identity("juror", juror.session_id, juror.id, juror.label)
                if juror is not None:  # a displaced juror judges the finished session, apart from its live rooms
                    judging_later(juror.status, juror.removed_at is not None)
                    return Identity(displaced.ROLE, juror.session_id, juror.id, juror.label)
                player = db.execute(PLAYER_BY_TOKEN, {"token": auth.token}).first()
                if player is not None:
                    return Identity("player", player.session_id, player.id, player.name)
                raise Refusal("bad_token", "this link is not valid (no player or juror has that token)")
            session_id = db.scalar(SESSION_BY_CODE, {"code": auth.code.strip().upper()})
        if session_id is None:
            raise Refusal("bad_code", f"no session has the code {auth.code!r}")
        if auth.role == "host":
            if not is_host:
                raise Refusal("not_host", "sign in as the host first (or give the host's API token: vtt host-token)")
            return Identity("host", session_id, None, "host", sees_door=True)
        if auth.role == "stage":  # the join code is public: the stage's key (or the host's login) opens it
            if not (is_host or stage_key_valid(auth.key, stage_key(self.secret_key, session_id))):
                raise Refusal("stage_key", "the stage screen opens with the stage link from the host's console")
            return Identity("stage", session_id, None, "stage", sees_door=True)
        door_ok = admit(address, session_id, auth.door)
        reply = self.act(session_id, Actor("guest"), "join", {"nickname": auth.nickname, "door_ok": door_ok})
        if not reply.get("ok"):
            raise Refusal(reply["error"]["code"], reply["error"]["message"])
        return Identity("juror", session_id, reply["juror"], reply["label"], reply["token"])

    def presence(self, session_id: int) -> dict[str, Any]:
        """Who is connected to a session: player ids, juror labels (the first few hundred), stage screens, hosts."""
        here = self._here(session_id)
        if self.shared_presence is None:
            return merged([here])
        return merged([here, *self.shared_presence.others(session_id)])

    def _here(self, session_id: int) -> dict[str, Any]:
        """This process's connections to a session (vtt.realtime.presence.summary)."""
        return summary(who for who in list(self.connections.values()) if who.session_id == session_id)

    def presence_changed(self, session_id: int) -> None:
        """Tell the session's host who is connected, at most once per PRESENCE_SECONDS (thousands of jurors
        connect within seconds: one message per connection would cost the host's page more than it tells)."""
        if self.shared_presence is not None and not self._refreshing:
            self._refreshing = True
            self.socketio.start_background_task(self._refresh_shared_presence)
        if session_id in self._presence_due:
            return
        self._presence_due.add(session_id)

        def send() -> None:
            self.socketio.sleep(PRESENCE_SECONDS)
            self._presence_due.discard(session_id)
            if self.shared_presence is not None:  # the other processes count this change from now on
                self.shared_presence.write({session_id: self._here(session_id)})
            message = self.presence(session_id)
            if self._serves(session_id):  # kept for the refresh's comparison while a connection of it is here
                self._presence_sent[session_id] = message
            self.outbox.to_audience(session_id, "host", "presence", message)

        self.socketio.start_background_task(send)

    def _refresh_shared_presence(self) -> None:
        """With Redis: renew this process's entries, and tell the hosts connected here when the session's
        presence changed elsewhere (a process that died is gone from it once its entries expired)."""
        while self._refreshing:
            try:
                self._refresh_shared_presence_once()
                self.ownership.housekeep()
            except Exception:
                log.exception("refreshing the shared presence failed")
            self.socketio.sleep(PRESENCE_REFRESH_SECONDS)

    def _refresh_shared_presence_once(self) -> None:
        connected: dict[int, list[Identity]] = {}
        for who in list(self.connections.values()):
            connected.setdefault(who.session_id, []).append(who)
        self.shared_presence.write(
            {session_id: summary(here) for session_id, here in connected.items()}, every_session=True
        )
        for session_id, here in connected.items():
            hosted_here = any(who.role == "host" for who in here)
            if hosted_here and self.presence(session_id) != self._presence_sent.get(session_id):
                self.presence_changed(session_id)

    def snapshot(self, who: Identity) -> dict[str, Any]:
        """All the connection's role may see now, with the state_version it is valid for."""
        with self.reader() as db:
            state = self._state_for_reading(db, who.session_id)
            if who.role == displaced.ROLE:
                view = self._displaced_view(db, state, who)
            elif who.role == "juror":
                sheet, votes = juror_rows(db, who.session_id, who.actor_id, state.round)
                view = audiences.juror_snapshot(state, who.label, sheet, votes)
                if who.token:
                    view["me"]["token"] = who.token
            elif who.role == "player":
                view = audiences.player_snapshot(state, who.actor_id)
            elif who.role == "stage":
                view = audiences.stage_snapshot(state)
            else:
                view = {
                    **audiences.host_snapshot(state, host_moves(state), self.presence(who.session_id)),
                    "jurors": jury_rows(db, who.session_id),
                    "open_join_cap": state.open_join_cap,
                }
        return {**view, "state_version": state.state_version}

    def send_snapshot(self, sid: str, who: Identity) -> None:
        """The snapshot a connection gets when it connects: at once, or for a displaced juror beyond the burst,
        when their turn comes (a page simply waits for it)."""
        delay = self.displaced_arrivals.wait() if who.role == displaced.ROLE else 0.0
        if not delay:
            self.outbox.to_connection(sid, who.role, "snapshot", self.snapshot(who))
            return

        def later() -> None:
            self.socketio.sleep(delay)
            if sid in self.connections:  # still there
                self.outbox.to_connection(sid, who.role, "snapshot", self.snapshot(who))

        self.socketio.start_background_task(later)

    def _displaced_view(self, db: Session, state: LiveState, who: Identity) -> dict[str, Any]:
        task = assignments(db, who.session_id, [who.actor_id])[who.actor_id]
        rounds = task.rounds_to_judge(state)
        sheet, votes = rows_of_rounds(db, who.session_id, who.actor_id, rounds)
        # the rounds as the live jury saw them are the same for every displaced juror: built once per state read
        kept = self._judged_rounds.get(who.session_id)
        if kept is None or kept[0] is not state:
            kept = (state, {})
            if self._serves(who.session_id):  # not for a connection that left while its snapshot was read
                self._judged_rounds[who.session_id] = kept
        judged = kept[1]
        shown = [judged[n] if n in judged else judged.setdefault(n, audiences.judged_round(state, n)) for n in rounds]
        attention = None
        if task.attention_check:
            asks = displaced.attention_value(who.actor_id)
            attention = {"asks": asks, "answered": task.attention_passed is not None}
        code = task.completion_code if task.done(state) else None
        return audiences.displaced_snapshot(
            state,
            who.label,
            shown,
            sheet,
            votes,
            attention=attention,
            completion_code=code,
            route=session_route(self.secret_key, who.session_id),
        )

    def _state_for_reading(self, db: Session, session_id: int) -> LiveState:
        """The session's state, read again only when its state_version has moved (a thousand jurors
        connecting at once cost one full read)."""
        cached = self._read_states.get(session_id)
        if cached is not None and cached.state_version == current_version(db, session_id):
            return cached
        state = load_state(db, session_id)
        if self._serves(session_id):  # not for a connection that left while its snapshot was read
            self._read_states[session_id] = state
        return state


def current_hub() -> Hub:
    """The current app's hub: every live action of a session goes through it."""
    return current_app.extensions["vtt.hub"]
