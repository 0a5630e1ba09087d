"""Which process runs the deadlines: a claim in the database, so that a deadline fires once however many
processes serve a session.

On PostgreSQL the claim is a session-level advisory lock held by a connection kept for it alone, outside any
transaction (a batch never waits on it): the process whose connection holds the lock ticks, and the others try to
take it at each of their ticks.  A process that dies closes its connection, PostgreSQL frees the lock at once, and
another process takes it at its next tick.  On SQLite one process serves by design: it always ticks.
"""

from __future__ import annotations

import logging

from sqlalchemy import URL, Connection, Engine, create_engine, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.pool import NullPool

log = logging.getLogger(__name__)

TIMERS_LOCK_KEY = 0x7674_745F_7469_636B  # "vtt_tick": the one advisory lock key this app uses
# The connection's keepalives, on both ends: a holder whose machine vanishes (no FIN ever comes) frees the lock
# after about idle + interval * count seconds, not after the operating system's default two hours.
KEEPALIVE_IDLE, KEEPALIVE_INTERVAL, KEEPALIVE_COUNT = 5, 2, 3
CONNECT_SECONDS = 5


class TimerClaim:
    """This process's claim on the timers; ``held()`` keeps it or tries to take it (one quick query)."""

    def __init__(self, url: str | URL):
        self._engine = None if str(url).startswith("sqlite") else _claim_engine(url)
        self._connection: Connection | None = None
        self._holds = self._engine is None
        self._failing = False  # the connection's failures are logged once per outage, not at every tick

    @property
    def holds(self) -> bool:
        """Whether this process held the timers at its last check (no query: for ``/healthz``)."""
        return self._holds

    def held(self) -> bool:
        """Whether this process runs the timers now: the holder checks that its connection still lives, the
        others try to take the lock."""
        if self._engine is None:
            return True
        try:
            if self._connection is None:
                self._connection = self._engine.connect()
            if self._holds:
                self._connection.exec_driver_sql("SELECT 1")
            elif self._connection.scalar(text("SELECT pg_try_advisory_lock(:key)"), {"key": TIMERS_LOCK_KEY}):
                self._holds = True
                log.warning("this process runs the session timers now")  # a takeover: shown with the server's defaults
            self._failing = False
        except SQLAlchemyError as error:
            if not self._failing:
                log.warning("the timers' connection failed (%s); trying again at every tick", error)
            self._failing = True
            self._drop()
        return self._holds

    def release(self) -> None:
        """Give the timers up (a process stopping): closing the connection frees the lock."""
        self._drop()
        if self._engine is not None:
            self._engine.dispose()

    def _drop(self) -> None:
        if self._holds and self._engine is not None:
            log.warning("this process no longer runs the session timers")
            self._holds = False
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
        poolclass=NullPool,  # one connection, closed when dropped: its lock goes with it
        isolation_level="AUTOCOMMIT",  # the lock is the session's; no transaction stays open
        connect_args={**keepalives, "connect_timeout": CONNECT_SECONDS, "options": server_side},
    )
