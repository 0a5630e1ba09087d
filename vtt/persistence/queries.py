"""Reads beside the live state: replayed client keys, a juror's own rows, displaced jurors' tasks, the jury for the
host."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from ..engine.displaced import Assignment
from ..models import Event, Juror, Jury, JuryLink, SessionQuestion, SheetEntry, Vote
from .statements import dbapi_connection

_EVENTS = Event.__table__
_SEEN_KEYS = select(_EVENTS.c.actor, _EVENTS.c.client_key).where(
    _EVENTS.c.session_id == bindparam("session_id"), _EVENTS.c.client_key.in_(bindparam("keys", expanding=True))
)


def seen_client_keys(db: Session, session_id: int, keys: list[tuple[str, str]]) -> set[tuple[str, str]]:
    """Which ``(actor, client key)`` pairs the event log already holds: replays to acknowledge again."""
    if not keys:
        return set()
    if db.get_bind().dialect.name == "sqlite":
        # One index lookup per (actor, key) pair of the batch: by the client key alone, SQLite walked
        # every event of the session (a batch's cost grew with the session's history), and with two
        # IN lists it looks up every actor x key combination (250,000 for a burst's batch of 500).
        pairs = sorted(set(keys))
        found = (
            dbapi_connection(db)
            .execute(
                f"SELECT e.actor, e.client_key FROM (VALUES {', '.join(['(?, ?)'] * len(pairs))}) AS k "
                f"JOIN {_EVENTS.name} AS e ON e.session_id = ? AND e.actor = k.column1 AND e.client_key = k.column2",
                (*(part for pair in pairs for part in pair), session_id),
            )
            .fetchall()
        )
    else:
        found = db.execute(_SEEN_KEYS, {"session_id": session_id, "keys": sorted({key for _actor, key in keys})})
    return {(actor, key) for actor, key in found} & set(keys)


def juror_rows(db: Session, session_id: int, juror_id: int, round_: int | None) -> tuple[list[dict], list[dict]]:
    """A juror's own sheet entries and votes of ``round_`` (for the juror's snapshot)."""
    return ([], []) if round_ is None else rows_of_rounds(db, session_id, juror_id, [round_])


def rows_of_rounds(
    db: Session, session_id: int, juror_id: int, rounds: Collection[int]
) -> tuple[list[dict], list[dict]]:
    """A juror's own sheet entries and votes of ``rounds`` (a displaced juror's snapshot holds all their rounds)."""
    sheet = db.execute(
        select(
            SheetEntry.session_question_id,
            SheetEntry.alias,
            SheetEntry.note,
            SheetEntry.human_likeness,
            SheetEntry.looks_like_ai,
        )
        .join(SessionQuestion, SessionQuestion.id == SheetEntry.session_question_id)
        .where(SheetEntry.juror_id == juror_id, SessionQuestion.round.in_(list(rounds)))
        .order_by(SessionQuestion.round, SessionQuestion.position, SheetEntry.alias)
    ).all()
    votes = db.execute(
        select(Vote.round, Vote.slot, Vote.alias, Vote.confidence, Vote.reason)
        .where(Vote.session_id == session_id, Vote.juror_id == juror_id, Vote.round.in_(list(rounds)))
        .order_by(Vote.round, Vote.slot)
    ).all()
    return (
        [{"question": q, "alias": a, "note": n, "human_likeness": h, "looks_like_ai": m} for q, a, n, h, m in sheet],
        [{"round": r, "slot": s, "alias": a, "confidence": c, "reason": why} for r, s, a, c, why in votes],
    )


def assignments(db: Session, session_id: int, juror_ids: Collection[int]) -> dict[int, Assignment]:
    """The displaced jurors ``juror_ids`` of a session with their votes so far (jurors of other juries are left
    out: their actions are refused)."""
    found = {
        juror.id: Assignment(
            juror.id,
            list(juror.rounds) if juror.rounds is not None else None,
            juror.completion_code,
            bool(link_check),
            juror.attention_passed,
            juror.removed_at is not None,
        )
        for juror, link_check in db.execute(
            select(Juror, JuryLink.attention_check)
            .outerjoin(JuryLink, JuryLink.id == Juror.link_id)
            .where(Juror.session_id == session_id, Juror.id.in_(list(juror_ids)), Juror.jury == Jury.DISPLACED)
        )
    }
    if found:
        for juror_id, number, slot, player in db.execute(
            select(Vote.juror_id, Vote.round, Vote.slot, Vote.player_id).where(
                Vote.session_id == session_id, Vote.juror_id.in_(list(found))
            )
        ):
            found[juror_id].votes[(number, slot)] = player
    return found


def jury_rows(db: Session, session_id: int) -> list[dict[str, Any]]:
    """The session's live jurors for the host, newest first: label, joined openly or not, removed or not, when."""
    rows = db.execute(
        select(Juror.label, Juror.juror_group, Juror.removed_at, Juror.joined_at)
        .where(Juror.session_id == session_id, Juror.jury == Jury.LIVE)
        .order_by(Juror.id.desc())
    ).all()
    return [
        {
            "label": label,
            "open": group == "open",
            "removed": removed is not None,
            "joined_at": joined.isoformat().replace("+00:00", "Z") if joined else None,
        }
        for label, group, removed, joined in rows
    ]
