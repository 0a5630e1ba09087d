"""Locks for a read-then-write that two processes may run at once on one session (the next juror label, a count
against a cap): taken first, held until the transaction ends, on each database."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..models import VttSession


def lock_session(db: Session, session_id: int) -> None:
    """Hold ``session_id``'s row until ``db`` commits or rolls back, before reading what is about to be written:
    PostgreSQL by ``SELECT ... FOR UPDATE`` on the session's row (the writer's batches of the session take it too);
    SQLite, which has no row locks, by the database's write lock (:func:`write_lock`)."""
    if write_lock(db):
        return
    db.execute(select(VttSession.id).where(VttSession.id == session_id).with_for_update())


def write_lock(db: Session) -> bool:
    """On SQLite, take the database's write lock now (``BEGIN IMMEDIATE``) unless this transaction holds it already;
    whether ``db`` is on SQLite.  The driver begins a transaction only before its first write, so a transaction
    already open has written, and holds the lock; one begun later than the reads would let another writer in
    between."""
    connection = db.connection()
    if connection.dialect.name != "sqlite":
        return False
    if not connection.connection.dbapi_connection.in_transaction:
        connection.exec_driver_sql("BEGIN IMMEDIATE")
    return True
