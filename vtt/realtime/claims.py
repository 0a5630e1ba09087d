"""What a process holds in the database: the timers of the sessions nobody owns, and the sessions it owns.

A session is owned by one process at a time (``vtt.realtime.ownership`` says what owning means: its deadlines,
and broadcasts kept on the process).  On PostgreSQL each claim is a session-level advisory lock, all of them held by
one connection kept for them alone, outside any transaction (a batch never waits on one): the timers' lock
``TIMERS_LOCK_KEY``, and per owned session the two-key lock ``(SESSION_LOCK_CLASS, session id)``.  A process that
dies closes its connection and PostgreSQL frees every lock it held at once; the others take them at their next try.
On SQLite one process serves by design: it holds everything it asks for.
"""

from __future__ import annotations

import logging
import threading

from sqlalchemy import URL, Connection, Engine, create_engine, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.pool import NullPool

log = logging.getLogger(__name__)

TIMERS_LOCK_KEY = 0x7674_745F_7469_636B  # "vtt_tick": the timers of the sessions no process owns
SESSION_LOCK_CLASS = 0x7674_7473  # "vtts": with a session's id, the lock of its owner
# The connection's keepalives, on both ends: a holder whose machine vanishes (no FIN ever comes) frees the lock
# after about idle + interval * count seconds, not after the operating system's default two hours.
KEEPALIVE_IDLE, KEEPALIVE_INTERVAL, KEEPALIVE_COUNT = 5, 2, 3
CONNECT_SECONDS = 5


class Claims:
    """This process's claims.  ``held()`` keeps or tries to take the timers (one quick query, at every tick);
    ``claim``/``give_up`` a session's ownership; ``owns`` and ``holds`` answer without a query."""

    def __init__(self, url: str | URL):
        self._engine = None if str(url).startswith("sqlite") else _claim_engine(url)
        self._connection: Connection | None = None
        self._holds = self._engine is None
        # the sessions this process owns: each given up by vtt.realtime.ownership (at its last connection on SQLite,
        # GIVE_UP_AFTER_SECONDS after it with PostgreSQL), all of them with the connection
        self.sessions: set[int] = set()
        self._failing = False  # the connection's failures are logged once per outage, not at every tick
        # The ticker and the connections' greenlets share the one connection: one query at a time.
        self._lock = threading.RLock()

    @property
    def shared(self) -> bool:
        """Whether other processes may serve this database (PostgreSQL): claims are real, not this process's alone."""
        return self._engine is not None

    @property
    def holds(self) -> bool:
        """Whether this process held the timers at its last check (no query: for ``/healthz``)."""
        return self._holds

    def owns(self, session_id: int) -> bool:
        return session_id in self.sessions

    def held(self) -> bool:
        """Whether this process runs the timers now: the holder checks that its connection still lives, the
        others try to take the lock."""
        if self._engine is None:
            return True
        with self._lock:
            return self._held()

    def _held(self) -> bool:
        try:
            connection = self._connected()
            if self._holds:
                connection.exec_driver_sql("SELECT 1")
            elif connection.scalar(text("SELECT pg_try_advisory_lock(:key)"), {"key": TIMERS_LOCK_KEY}):
                self._holds = True
                log.warning("this process runs the session timers now")  # a takeover: shown with the server's defaults
            self._failing = False
        except SQLAlchemyError as error:
            self._failed(error)
        return self._holds

    def claim(self, session_id: int) -> bool:
        """Own ``session_id`` if no other process does (kept: asking again costs nothing); whether this process
        owns it now."""
        if session_id in self.sessions:
            return True
        if self._engine is None:
            self.sessions.add(session_id)
            return True
        with self._lock:
            return self._claim(session_id)

    def _claim(self, session_id: int) -> bool:
        if session_id in self.sessions:
            return True
        try:
            taken = self._connected().scalar(
                text("SELECT pg_try_advisory_lock(:class, :session)"),
                {"class": SESSION_LOCK_CLASS, "session": session_id},
            )
        except SQLAlchemyError as error:
            self._failed(error)
            return False
        if taken:
            self.sessions.add(session_id)
        return bool(taken)

    def give_up(self, session_id: int) -> None:
        """No longer own ``session_id`` (another process may claim it from now on)."""
        if session_id not in self.sessions:
            return
        self.sessions.discard(session_id)
        if self._engine is None:
            return
        with self._lock:
            self._unlock(session_id)

    def _unlock(self, session_id: int) -> None:
        if self._connection is None:
            return
        try:
            self._connection.scalar(
                text("SELECT pg_advisory_unlock(:class, :session)"),
                {"class": SESSION_LOCK_CLASS, "session": session_id},
            )
        except SQLAlchemyError as error:
            self._failed(error)

    def release(self) -> None:
        """Give everything up (a process stopping): closing the connection frees every lock."""
        with self._lock:
            self._drop()
        if self._engine is not None:
            self._engine.dispose()

    def _connected(self) -> Connection:
        if self._connection is None:
            self._connection = self._engine.connect()
        return self._connection

    def _failed(self, error: SQLAlchemyError) -> None:
        if not self._failing:
            log.warning("the claims' connection failed (%s); trying again at every tick", error)
        self._failing = True
        self._drop()

    def _drop(self) -> None:
        """The connection is gone, and every lock it held with it."""
        if self._engine is None:
            return
        if self._holds:
            log.warning("this process no longer runs the session timers")
            self._holds = False
        if self.sessions:
            log.warning("this process no longer owns sessions %s", sorted(self.sessions))
            self.sessions.clear()
        if self._connection is not None:
            try:
                self._connection.close()
            except SQLAlchemyError:
                pass  # a connection already broken: nothing to free
            self._connection = None


def _claim_engine(url: str | URL) -> Engine:
    keepalives = {
        "keepalives": 1,
        "keepalives_idle": KEEPALIVE_IDLE,
        "keepalives_interval": KEEPALIVE_INTERVAL,
        "keepalives_count": KEEPALIVE_COUNT,
    }
    server_side = " ".join(
        f"-c tcp_keepalives_{name}={value}"
        for name, value in (("idle", KEEPALIVE_IDLE), ("interval", KEEPALIVE_INTERVAL), ("count", KEEPALIVE_COUNT))
    )
    return create_engine(
        url,
        poolclass=NullPool,  # one connection, closed when dropped: its locks go with it
        isolation_level="AUTOCOMMIT",  # the locks are the connection's; no transaction stays open
        connect_args={**keepalives, "connect_timeout": CONNECT_SECONDS, "options": server_side},
    )
