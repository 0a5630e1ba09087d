"""One session's rows, each table queried once: what its analysis tables and its export are built from."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from ..models import (
    Answer,
    Event,
    GraderMark,
    IdentityReveal,
    JudgeSuggestion,
    Juror,
    JurorReply,
    Player,
    Question,
    Recording,
    RoundAlias,
    SessionQuestion,
    SheetEntry,
    Vote,
    VttSession,
)
from ..persistence.counted import counted


def session_by_code(db: Session, code: str) -> VttSession | None:
    """The session with this join code (case and surrounding spaces ignored), or None."""
    return db.scalar(select(VttSession).where(VttSession.join_code == code.strip().upper()))


@dataclass(frozen=True)
class SessionRows:
    """The rows that both the analysis tables and the export read."""

    placed: list[SessionQuestion]  # in (round, position) order, with their questions and tags
    players: list[Player]  # in id order
    aliases: list[RoundAlias]  # in (round, alias) order
    jurors: list[Juror]  # in id order
    answers: list[Answer]  # in id order, with their grades
    # a removed juror's sheet lines and votes are left out here, for every table, export and report built on these
    # rows (vtt.persistence.counted); their juror stays in ``jurors`` with its removed_at
    entries: list[SheetEntry]  # in id order
    votes: list[Vote]  # in (round, juror, slot) order


def session_rows(db: Session, session_id: int) -> SessionRows:
    return SessionRows(
        placed=list(
            db.scalars(
                select(SessionQuestion)
                .where(SessionQuestion.session_id == session_id)
                .options(selectinload(SessionQuestion.question).selectinload(Question.tags))
                .order_by(SessionQuestion.round, SessionQuestion.position)
            )
        ),
        players=list(db.scalars(select(Player).where(Player.session_id == session_id).order_by(Player.id))),
        aliases=list(
            db.scalars(
                select(RoundAlias)
                .where(RoundAlias.session_id == session_id)
                .order_by(RoundAlias.round, RoundAlias.alias)
            )
        ),
        jurors=list(db.scalars(select(Juror).where(Juror.session_id == session_id).order_by(Juror.id))),
        answers=list(
            db.scalars(
                select(Answer)
                .where(Answer.session_id == session_id)
                .options(selectinload(Answer.grade))
                .order_by(Answer.id)
            )
        ),
        entries=list(
            db.scalars(counted(SheetEntry).where(SheetEntry.session_id == session_id).order_by(SheetEntry.id))
        ),
        votes=list(
            db.scalars(
                counted(Vote).where(Vote.session_id == session_id).order_by(Vote.round, Vote.juror_id, Vote.slot)
            )
        ),
    )


@dataclass(frozen=True)
class RecordRows:
    """The rows only the export reads: the record of what happened around the answers and votes."""

    reveals: list[IdentityReveal]  # in (round, id) order
    events: list[Event]  # in id order
    recordings: list[Recording]  # in id order
    marks: list[GraderMark]  # in (answer, id) order
    suggestions: list[JudgeSuggestion]  # in (answer, id) order
    juror_replies: list[JurorReply]  # AI jurors' replies, in (juror, round, id) order


def record_rows(db: Session, session_id: int) -> RecordRows:
    marks, suggestions = (
        list(
            db.scalars(
                select(table)
                .join(Answer, Answer.id == table.answer_id)
                .where(Answer.session_id == session_id)
                .order_by(table.answer_id, table.id)
            )
        )
        for table in (GraderMark, JudgeSuggestion)
    )
    return RecordRows(
        reveals=list(
            db.scalars(
                select(IdentityReveal)
                .where(IdentityReveal.session_id == session_id)
                .order_by(IdentityReveal.round, IdentityReveal.id)
            )
        ),
        events=list(db.scalars(select(Event).where(Event.session_id == session_id).order_by(Event.id))),
        recordings=list(db.scalars(select(Recording).where(Recording.session_id == session_id).order_by(Recording.id))),
        marks=marks,
        suggestions=suggestions,
        juror_replies=list(
            db.scalars(
                select(JurorReply)
                .where(JurorReply.session_id == session_id)
                .order_by(JurorReply.juror_id, JurorReply.round, JurorReply.id)
            )
        ),
    )
