"""Studies: several sessions read together, the unit a researcher reports.

A study is a name and the sessions it holds (by join code); each session keeps its own frozen design and hash. This
module makes and lists studies; :mod:`vtt.studies.data` reads a study's sessions into the long frames
``analysis.study`` pools, and the all-sessions export. The caller commits.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from ..db import added_unless_taken
from ..models import Player, PlayerKind, Study, StudySession, Vote, VttSession
from ..persistence.counted import live_votes
from ..persistence.locks import write_lock

MAX_STUDY_NAME = 120


class StudyProblem(ValueError):
    """A study request that cannot be done; the message names what is wrong."""


@dataclass(frozen=True)
class StudyRow:
    name: str
    sessions: list[str]  # join codes, in the order they were added
    created_at: datetime
    description: str


def study_by_name(db: Session, name: str) -> Study:
    found = db.scalar(
        select(Study)
        .where(Study.name == name.strip())
        .options(selectinload(Study.members).selectinload(StudySession.session))
    )
    if found is None:
        known = db.scalars(select(Study.name).order_by(Study.name)).all()
        raise StudyProblem(
            f"no study called {name.strip()!r}" + (f" (the studies: {', '.join(known)})" if known else " (none yet)")
        )
    return found


def _sessions(db: Session, codes: list[str]) -> list[VttSession]:
    wanted = [code.strip().upper() for code in codes]
    if not wanted:
        raise StudyProblem("name at least one session by its join code")
    found = {s.join_code: s for s in db.scalars(select(VttSession).where(VttSession.join_code.in_(wanted)))}
    missing = [code for code in wanted if code not in found]
    if missing:
        raise StudyProblem(f"no session with join code {', '.join(repr(code) for code in missing)}")
    twice = sorted({code for code in wanted if wanted.count(code) > 1})
    if twice:
        raise StudyProblem(f"{', '.join(twice)} named twice")
    return [found[code] for code in wanted]


def create_study(db: Session, name: str, codes: list[str], description: str = "") -> Study:
    """A new study of the sessions with these join codes (all of them exist, or nothing is made)."""
    name = name.strip()
    if not name or len(name) > MAX_STUDY_NAME:
        raise StudyProblem(f"a study's name is 1 to {MAX_STUDY_NAME} characters")

    def taken() -> bool:
        return db.scalar(select(Study.id).where(Study.name == name)) is not None

    name_taken = StudyProblem(f"a study called {name!r} exists already (add sessions to it instead)")
    if taken():
        raise name_taken
    study = Study(name=name, description=description.strip())
    study.members = [StudySession(session=session) for session in _sessions(db, codes)]
    if not added_unless_taken(db, study, taken):
        raise name_taken
    return study


def add_sessions(db: Session, name: str, codes: list[str]) -> list[str]:
    """Add sessions to a study; the join codes added (those already in it are named in the refusal).  The study's
    row is locked before its members are read (SQLite: the write lock), so two pages adding one session at once
    queue, and the second is told it is there already."""
    write_lock(db)
    study = study_by_name(db, name)
    db.execute(select(Study.id).where(Study.id == study.id).with_for_update())
    db.expire(study, ["members"])  # read again, under the lock
    sessions = _sessions(db, codes)
    held = {member.session_id for member in study.members}
    already = [s.join_code for s in sessions if s.id in held]
    if already:
        raise StudyProblem(f"{', '.join(already)} {'is' if len(already) == 1 else 'are'} in {study.name} already")
    study.members.extend(StudySession(session=session) for session in sessions)
    db.flush()
    return [s.join_code for s in sessions]


def all_studies(db: Session) -> list[StudyRow]:
    studies = db.scalars(
        select(Study).options(selectinload(Study.members).selectinload(StudySession.session)).order_by(Study.name)
    ).all()
    return [StudyRow(s.name, [m.session.join_code for m in s.members], s.created_at, s.description) for s in studies]


def studies_of(db: Session, session_id: int) -> list[str]:
    """The names of the studies a session is in."""
    return list(
        db.scalars(
            select(Study.name).join(StudySession).where(StudySession.session_id == session_id).order_by(Study.name)
        )
    )


def pooled_detection(db: Session, study: Study) -> dict[str, float | int | None]:
    """The study's live cast votes that name an AI player, of all its cast votes: the planner's default rate (one SQL
    count; the report has it per session, with intervals and tests)."""
    ids = [member.session_id for member in study.members]
    named = (
        live_votes(Player.kind, func.count())
        .join(Player, (Player.id == Vote.player_id) & (Player.session_id == Vote.session_id))
        .where(Vote.session_id.in_(ids))
        .group_by(Player.kind)
    )
    counts = dict(db.execute(named).all()) if ids else {}
    votes, hits = sum(counts.values()), counts.get(PlayerKind.AI, 0)
    return {"votes": votes, "hits": hits, "rate_pct": round(100 * hits / votes, 1) if votes else None}
