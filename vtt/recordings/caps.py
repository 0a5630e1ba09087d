"""The caps on spoken takes: how many takes, and how many bytes, a player and a whole session may send.

The database is the truth, whichever process serves the upload: before its first byte is written an upload
reserves its place (a ``take_reservation`` row with the upload's length), in one transaction that counts what the
player and the session hold (takes' rows, and the reservations of uploads still arriving) and is alone doing so for
its session: PostgreSQL by a transaction-scoped advisory lock on the session, SQLite by taking the database's write
lock first.  Uploads arriving together therefore queue for a moment, and those past a cap are refused before
anything is written.  The upload lets its reservation go once it has ended (its take's row written, or refused);
what a killed process never let go stops counting after RESERVATION_SECONDS, and an upload still writing then is
stopped (:func:`vtt.recordings.store`'s deadline).  Nothing here imports Flask.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, literal, select, text, union_all
from sqlalchemy.orm import Session
from sqlalchemy.pool import NullPool

from ..db import make_engine
from ..models import Recording, TakeReservation
from . import RecordingProblem

# An upload of one take (8 MB at most) that takes longer than this is stopped and its place given back (a page on a
# link of 100 kbit/s sends 8 MB in 11 minutes; a child's usual take of well under 1 MB, in seconds).
RESERVATION_SECONDS = 900
WRITE_SECONDS = RESERVATION_SECONDS - 60  # an upload stops writing this long after it reserved: a minute to spare
TAKES_LOCK_CLASS = 0x7674_7472  # "vttr": with a session's id, the lock of its uploads' reservations (PostgreSQL)
MB = 1024 * 1024


@dataclass(frozen=True)
class Caps:
    """The settings VTT_MAX_TAKES_PER_PLAYER, _PER_SESSION and VTT_MAX_TAKE_MB_PER_PLAYER, _PER_SESSION (in bytes)."""

    takes_per_player: int
    takes_per_session: int
    bytes_per_player: int
    bytes_per_session: int

    @classmethod
    def from_config(cls, config) -> Caps:
        return cls(
            config["MAX_TAKES_PER_PLAYER"],
            config["MAX_TAKES_PER_SESSION"],
            config["MAX_TAKE_BYTES_PER_PLAYER"],
            config["MAX_TAKE_BYTES_PER_SESSION"],
        )


@dataclass(frozen=True)
class Held:
    """What a player and their session hold: takes (rows, and uploads arriving that are no row yet) and bytes; and
    whether the take asked about is a new one (not a row, and not arriving already)."""

    player_takes: int
    session_takes: int
    player_bytes: int
    session_bytes: int
    new_take: bool = True


def reserve(
    database_url: str,
    session_id: int,
    player_id: int,
    client_key: str,
    size: int,
    caps: Caps,
    now: datetime | None = None,
) -> int:
    """The id of the reservation of ``size`` bytes for the take ``client_key`` of the player, committed; or
    RecordingProblem (too_many_takes, too_many_session_takes, too_much_audio, too_much_session_audio) and nothing
    reserved.  A take already arriving (a resend racing its first send) is not counted twice, its bytes are.

    On a connection of its own: meant for :func:`vtt.offloop.off_loop_waiting` (a wait for the lock holds no
    greenlet, and no thread the writer commits in)."""
    now = now or datetime.now(UTC)
    engine = make_engine(database_url, poolclass=NullPool)
    try:
        with Session(engine) as db:
            _lock_session(db, session_id)
            expired = now - timedelta(seconds=RESERVATION_SECONDS)
            db.execute(
                delete(TakeReservation).where(
                    TakeReservation.session_id == session_id, TakeReservation.reserved_at < expired
                )
            )
            held = holding(db, session_id, player_id, client_key)
            _check(held, size, caps)
            reservation = TakeReservation(
                session_id=session_id, player_id=player_id, client_key=client_key, size=size, reserved_at=now
            )
            db.add(reservation)
            db.commit()
            return reservation.id
    finally:
        engine.dispose()


def release(database_url: str, reservation_id: int) -> None:
    """Let an ended upload's reservation go (its take's row now counts, or nothing of it was kept)."""
    engine = make_engine(database_url, poolclass=NullPool)
    try:
        with Session(engine) as db:
            db.execute(delete(TakeReservation).where(TakeReservation.id == reservation_id))
            db.commit()
    finally:
        engine.dispose()


def _lock_session(db: Session, session_id: int) -> None:
    """Be the only transaction reserving in this session until the commit."""
    connection = db.connection()
    if connection.dialect.name == "sqlite":
        if not connection.connection.dbapi_connection.in_transaction:  # the driver's own BEGIN would come too late
            connection.exec_driver_sql("BEGIN IMMEDIATE")
        return
    db.execute(
        text("SELECT pg_advisory_xact_lock(:class, :session)"), {"class": TAKES_LOCK_CLASS, "session": session_id}
    )


def holding(db: Session, session_id: int, player_id: int, client_key: str = "") -> Held:
    """What the player and the session hold now: every take's row (deleted or not: the caps count what was sent)
    and every reservation.  A reservation's take counts once, and not at all once its row is written; its bytes count
    until it is let go.  One statement, so one picture of the database (under PostgreSQL's READ COMMITTED two reads
    could miss a take whose row was written, and its reservation let go, between them)."""
    rows = select(literal(True).label("written"), Recording.player_id, Recording.client_key, Recording.size).where(
        Recording.session_id == session_id
    )
    arriving = select(
        literal(False).label("written"), TakeReservation.player_id, TakeReservation.client_key, TakeReservation.size
    ).where(TakeReservation.session_id == session_id)
    held = db.execute(union_all(rows, arriving)).all()
    written = {(player, key) for is_row, player, key, _size in held if is_row}
    takes = written | {(player, key) for _row, player, key, _size in held}
    return Held(
        sum(player == player_id for player, _key in takes),
        len(takes),
        sum(size for _row, player, _key, size in held if player == player_id),
        sum(size for _row, _player, _key, size in held),
        (player_id, client_key) not in takes,
    )


def _check(held: Held, size: int, caps: Caps) -> None:
    """Refuse an upload past a cap: a new take past the takes' caps, any upload past the bytes' (a resend racing its
    first send writes a temporary file of its own)."""
    if held.new_take and held.player_takes >= caps.takes_per_player:
        raise RecordingProblem(
            "too_many_takes", f"you have sent {held.player_takes} recordings in this session: no more are kept"
        )
    if held.new_take and held.session_takes >= caps.takes_per_session:
        raise RecordingProblem(
            "too_many_session_takes", f"this session holds {held.session_takes} recordings: no more are kept"
        )
    if held.player_bytes + size > caps.bytes_per_player:
        raise RecordingProblem(
            "too_much_audio",
            f"your recordings in this session may come to {caps.bytes_per_player / MB:g} MB at most: no more are kept",
        )
    if held.session_bytes + size > caps.bytes_per_session:
        raise RecordingProblem(
            "too_much_session_audio",
            f"this session's recordings may come to {caps.bytes_per_session / MB:g} MB at most: no more are kept",
        )
