"""The writer's hot statements on SQLite: compiled once, run on the transaction's DBAPI connection.

SQLAlchemy's execution path (the ORM session, Core's execution context, events, result set-up) costs ~100-300 us
a statement, several times SQLite's own work for a batch's rows, and the writer runs a few such statements in
every batch. Other databases keep SQLAlchemy's path (it batches PostgreSQL's executemany itself).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session


@dataclass(frozen=True)
class Prepared:
    """A statement compiled for one dialect and one set of row keys."""

    statement: Any  # kept here so that its id, the cache's key, stays its own while the entry lives
    sql: str
    names: tuple[str, ...]  # the parameters, in the SQL's order
    processors: tuple[Any, ...]  # each parameter's bind processor (the column type's), or None


_PREPARED: dict[tuple[int, str, tuple[str, ...]], Prepared] = {}


def prepared(statement, dialect, keys: tuple[str, ...] = ()) -> Prepared:
    """``statement`` compiled for ``dialect`` (a positional one) and rows of ``keys``, once per process."""
    cache_key = (id(statement), dialect.name, keys)
    found = _PREPARED.get(cache_key)
    if found is None:
        compiled = statement.compile(dialect=dialect, column_keys=list(keys) or None, for_executemany=bool(keys))
        if compiled.statement is not statement or not compiled.positional:
            raise TypeError("a prepared statement needs a positional dialect")
        names = tuple(compiled.positiontup or ())
        processors = tuple(compiled.binds[name].type.dialect_impl(dialect).bind_processor(dialect) for name in names)
        found = _PREPARED[cache_key] = Prepared(statement, compiled.string, names, processors)
    return found


def dbapi_connection(db: Session):
    """The DBAPI connection of ``db``'s transaction (looked up once per transaction: ``db.connection()``
    costs ~40 us a call)."""
    held, transaction = db.info.get("vtt.dbapi"), db.get_transaction()
    if held is not None and transaction is not None and held[0] is transaction:
        return held[1]
    connection = db.connection().connection.dbapi_connection
    db.info["vtt.dbapi"] = (db.get_transaction(), connection)
    return connection


def execute_many(db: Session, statement, rows: list[dict[str, Any]]) -> None:
    """``db.execute(statement, rows)``; on SQLite compiled once and run on the DBAPI cursor."""
    dialect = db.get_bind().dialect
    if dialect.name != "sqlite":
        db.execute(statement, rows)
        return
    found = prepared(statement, dialect, tuple(rows[0]))
    if not set(found.names) <= rows[0].keys():  # a default to compute: SQLAlchemy's path does that
        db.execute(statement, rows)
        return
    cursor = dbapi_connection(db).cursor()
    try:
        parameters = _parameters(found, rows)
        if len(parameters) == 1:
            cursor.execute(found.sql, parameters[0])
        else:
            cursor.executemany(found.sql, parameters)
    finally:
        cursor.close()


_UNSET = object()


def _parameters(found: Prepared, rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The rows' parameters in the statement's order, each through its column's bind processor (once for a
    run of the same value: a batch's rows share their timestamp)."""
    columns = []
    for name, process in zip(found.names, found.processors):
        values = [row[name] for row in rows]
        if process is not None:
            last, done, processed = _UNSET, None, []
            for value in values:
                if value is not last:
                    last, done = value, process(value)
                processed.append(done)
            values = processed
        columns.append(values)
    return list(zip(*columns)) if columns else [()] * len(rows)
