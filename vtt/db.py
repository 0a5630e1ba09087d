"""Engines and database sessions (SQLAlchemy's, named ``db``), usable with or without a Flask app."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from .config import Settings
from .offloop import gevent_serving

SQLITE_BUSY_TIMEOUT_MS = 10_000
CHECKPOINT_QUIET_SECONDS = 1.0  # serving: the WAL is copied into the database once the writer is this quiet...
CHECKPOINT_AT_MOST_SECONDS = 30.0  # ...or after this long, whatever happens


def make_engine(url: str, **kwargs) -> Engine:
    """An engine for ``url``; SQLite gets WAL, foreign keys and a busy timeout on every connection."""
    if url.startswith("sqlite"):
        kwargs.setdefault("connect_args", {"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})
        engine = create_engine(url, **kwargs)
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    kwargs.setdefault("pool_pre_ping", True)
    return create_engine(url, **kwargs)


def make_writer_engine(url: str) -> Engine:
    """The engine of a process's one writer.

    On SQLite every transaction starts with ``BEGIN IMMEDIATE`` (the write lock is taken first,
    so check-then-insert is atomic) and never waits for the lock inside SQLite: a busy database
    fails at once and the writer retries after yielding (under gevent a wait inside C would
    freeze every greenlet of the server).
    """
    if not url.startswith("sqlite"):
        return make_engine(url)
    engine = create_engine(
        url, connect_args={"timeout": 0, "isolation_level": None, "factory": CommitOffLoop, "check_same_thread": False}
    )
    event.listen(engine, "connect", _sqlite_pragmas)
    event.listen(engine, "connect", _no_busy_wait)
    event.listen(engine, "connect", _checkpoint_apart)
    event.listen(engine, "begin", _begin_immediate)
    return engine


def make_reader_engine(url: str) -> Engine:
    """The engine of the live side's reads (snapshots, sign-ins, the deadline check): every statement of one of its
    transactions reads the same picture of the database.

    A snapshot is read in several statements (the session row, then its rounds, answers, votes ...).  Under
    PostgreSQL's READ COMMITTED, and under SQLite's driver (which begins a transaction only before a write), each
    statement saw the latest commit: a commit landing between them gave a snapshot that mixed two versions, and a
    player told the previous round's ``playing`` saw no question until answering closed.  PostgreSQL reads at
    REPEATABLE READ; SQLite begins a (deferred) transaction, whose first read fixes its picture under WAL.
    """
    if not url.startswith("sqlite"):
        return make_engine(url, isolation_level="REPEATABLE READ")
    engine = make_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000, "isolation_level": None})
    event.listen(engine, "begin", _begin_deferred)
    return engine


def _begin_deferred(connection) -> None:
    connection.connection.dbapi_connection.execute("BEGIN")


def _begin_immediate(connection) -> None:
    # On the DBAPI connection: through SQLAlchemy's statement path this cost ~80 us, in every batch.
    connection.connection.dbapi_connection.execute("BEGIN IMMEDIATE")


class CommitOffLoop(sqlite3.Connection):
    """A SQLite connection whose commit (the fsync that makes an ack true) runs in a native thread.

    Under gevent the writer greenlet waits for it while the loop goes on serving connections: an
    fsync is ~1 ms of waiting on the disk, and at a few hundred batches a second that was a third
    of the loop's time.  Elsewhere (tests' threads, the CLI) it is a plain commit.  Only the writer
    ever uses the connection, and it waits for the commit, so no two threads touch it at once.

    Under gevent the WAL is also checkpointed apart (:func:`_checkpoint_apart`): SQLite's automatic
    checkpoint runs inside the commit that fills the WAL, and copying ~1,000 pages into the database
    file and syncing it held that commit, and every ack queued behind it, for 20-45 ms about once a
    second in a paced round of 2,000 jurors (a checkpoint in a thread beside the writer, once a
    second, still cost 10-40 ms: the two syncs queue on one disk).  So the WAL is checkpointed when
    the writer has been quiet for a second, or after half a minute of writing whatever happens, on
    its own connection in a native thread (in WAL mode a checkpoint and a writer go on side by side).
    """

    database: str | None = None  # the file checkpointed apart; None: SQLite checkpoints by itself
    _last_commit = _last_checkpoint = 0.0
    _waiting = _checkpointing = False

    def commit(self) -> None:
        if not gevent_serving():
            super().commit()
            return
        import gevent

        gevent.get_hub().threadpool.apply(super().commit)
        self._last_commit = time.monotonic()
        if self.database and not self._waiting:
            self._waiting = True
            gevent.spawn_later(CHECKPOINT_QUIET_SECONDS, self._checkpoint_when_quiet)

    def _checkpoint_when_quiet(self) -> None:
        import gevent

        now = time.monotonic()
        busy = now - self._last_commit < CHECKPOINT_QUIET_SECONDS
        if self._checkpointing or (busy and now - self._last_checkpoint < CHECKPOINT_AT_MOST_SECONDS):
            gevent.spawn_later(CHECKPOINT_QUIET_SECONDS, self._checkpoint_when_quiet)
            return
        self._waiting, self._checkpointing, self._last_checkpoint = False, True, now
        gevent.get_hub().threadpool.spawn(self._checkpoint)  # not waited for

    def _checkpoint(self) -> None:
        try:
            with closing(sqlite3.connect(self.database, timeout=0, check_same_thread=False)) as other:
                other.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error:
            pass  # busy or interrupted: the next one copies what this one did not
        finally:
            self._checkpointing = False


def _checkpoint_apart(dbapi_connection, _record) -> None:
    """Serving under gevent: turn SQLite's automatic checkpoint off for the writer (see :class:`CommitOffLoop`)."""
    path = dbapi_connection.execute("PRAGMA database_list").fetchone()[2]
    if path and gevent_serving() and isinstance(dbapi_connection, CommitOffLoop):
        dbapi_connection.execute("PRAGMA wal_autocheckpoint=0")
        dbapi_connection.database, dbapi_connection._last_checkpoint = path, time.monotonic()


def _no_busy_wait(dbapi_connection, _record) -> None:
    dbapi_connection.execute("PRAGMA busy_timeout=0")


def is_locked(error: Exception) -> bool:
    """Whether a database error only means another writer holds SQLite's lock (retry later)."""
    text = str(getattr(error, "orig", error)).lower()
    return "database is locked" in text or "database is busy" in text


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    in_memory = dbapi_connection.execute("PRAGMA database_list").fetchone()[2] == ""
    if not in_memory:  # WAL needs a file
        cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA synchronous=FULL")  # an acknowledged write is on disk
    cursor.close()


def make_db_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(bind=engine, expire_on_commit=False)


def db_factory_from_env() -> sessionmaker[Session]:
    """Database sessions on the database the environment names (``DATABASE_URL``, as :class:`Settings` reads it):
    the command line's, and a worker process's (started on the server's database by :mod:`vtt.offloop`)."""
    return make_db_factory(make_engine(Settings.from_env().database_url))


class KeptDb:
    """The one Session of a process's writer, on one Connection kept from batch to batch.

    A Session and a Connection made for each batch left ~40 objects in reference cycles (their
    event dispatchers and weak dictionaries) for the garbage collector: at ~150 batches a second
    a young-generation collection came every 1.5 s and held the event loop 14-28 ms while it freed
    them.  Kept, they leave nothing behind, and a batch costs a fifth less CPU.  After a failed
    transaction the Session and its Connection are dropped, so the next one starts on a new
    connection (a database server restarted under a live db).  One user at a time.
    """

    def __init__(self, engine: Engine):
        self.engine = engine
        self._db: Session | None = None

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """The kept Session in a new transaction: committed on success, rolled back and dropped on any error."""
        if self._db is None:
            self._db = Session(bind=self.engine.connect(), expire_on_commit=False)
        db = self._db
        try:
            with db.begin():
                yield db
        except BaseException:
            self.close()
            raise
        finally:
            if self._db is db:
                db.expunge_all()  # a later batch reads rows afresh, never an object this one loaded

    def close(self) -> None:
        db, self._db = self._db, None
        if db is not None:
            connection = db.get_bind()
            try:
                db.close()
            finally:
                connection.close()


@contextmanager
def transaction(factory: sessionmaker[Session]) -> Iterator[Session]:
    """A database session whose work is committed on success and rolled back whole on any error."""
    with factory() as db, db.begin():
        yield db


def added_unless_taken(db: Session, row: object, taken: Callable[[], bool]) -> bool:
    """Add ``row`` and flush it in a savepoint; False (nothing added) when a unique constraint refuses it because
    another transaction took its name meanwhile (``taken()``, read again after the refusal).  Two creations of one
    name at the same instant both find the name free (PostgreSQL reads what is committed); the second is then told
    the name is taken, not given a server error.  Any other constraint's refusal is raised."""
    try:
        with db.begin_nested():
            db.add(row)
            db.flush()
    except IntegrityError:
        if taken():
            return False
        raise
    return True


def alembic_config(url: str):
    """An Alembic config for this checkout's ``migrations/`` aimed at ``url``."""
    from alembic.config import Config

    from .config import PROJECT_ROOT

    config = Config(str(PROJECT_ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(PROJECT_ROOT / "migrations"))
    config.attributes["database_url"] = url
    config.attributes["configure_logging"] = False
    return config


def upgrade(url: str, revision: str = "head") -> None:
    from alembic import command

    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str) -> None:
    from alembic import command

    command.downgrade(alembic_config(url), revision)


def current_revision(url: str) -> str | None:
    from alembic.runtime.migration import MigrationContext

    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()
    finally:
        engine.dispose()


def head_revision() -> str:
    """The newest migration this code knows."""
    from alembic.script import ScriptDirectory

    from .config import PROJECT_ROOT

    return ScriptDirectory(str(PROJECT_ROOT / "migrations")).get_current_head()
