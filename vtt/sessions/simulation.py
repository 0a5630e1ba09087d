"""Sessions for ``vtt simulate``: created on the demo bank for bots, their places read, their record counted.

The bots themselves (:mod:`vtt.bots`) only speak the protocol; this is the database side of a run: before it, a
session is created (or an existing one's places read), and after it, the event log's count of the run's actions.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..client.cast import Cast, Seat
from ..models import Event, Juror, Player, SessionQuestion, VttSession
from .create import SessionConfig, create_session, numbered_jurors
from .demo import ensure_demo_bank

HUMAN_PLAYERS = (
    ("Mina", 5, "pre-operational"),
    ("Leo", 9, "concrete operational"),
    ("Ada", 14, "formal operational"),
    ("Grace", 31, "adult"),
    ("Hoon", 7, "pre-operational"),
    ("Sara", 11, "concrete operational"),
)
RECORDED_KINDS = {"vote": "votes", "sheet": "sheets", "answer": "answers"}


def create_simulation(db: Session, jurors: int, players: int, seed: int, rounds: int, per_round: int) -> Cast:
    """A session on the demo bank: ``players`` bot humans, one bot AI, ``jurors`` bot jurors."""
    if not 1 <= players <= len(HUMAN_PLAYERS):
        raise ValueError(f"a simulation has 1 to {len(HUMAN_PLAYERS)} human players, not {players}")
    ensure_demo_bank(db)
    people = [
        {"name": name, "kind": "human", "age": age, "stage": stage} for name, age, stage in HUMAN_PLAYERS[:players]
    ]
    people.append({"name": "Bot AI", "kind": "ai", "backends": {"any": "vtt simulate"}})
    config = SessionConfig.from_dict(
        {
            "name": f"Simulation {time.strftime('%Y-%m-%d %H:%M:%S')} {secrets.token_hex(2)}",
            "bank": "Demo drama bank",
            "rounds": rounds,
            "questions_per_round": per_round,
            "seed": seed,
            "answer_seconds": 60,
            "vote_seconds": 120,
            "reveal_policy": "per-round",
            "players": people,
            "jurors": numbered_jurors(jurors),
        },
        source="vtt simulate --new",
    )
    created = create_session(db, config, actor="vtt simulate")
    db.flush()
    return cast_of(db, created.join_code)


def cast_of(db: Session, code: str) -> Cast:
    """Every player and juror place of the session with join code ``code``."""
    row = db.scalar(select(VttSession).where(VttSession.join_code == code.strip().upper()))
    if row is None:
        raise LookupError(f"no session has the join code {code!r}")
    seats = [
        Seat("player", p.token, p.name, p.kind.value)
        for p in db.scalars(select(Player).where(Player.session_id == row.id).order_by(Player.id))
    ]
    seats += [
        Seat("juror", j.token, j.label)
        for j in db.scalars(select(Juror).where(Juror.session_id == row.id).order_by(Juror.id))
    ]
    questions = db.scalar(select(func.count()).select_from(SessionQuestion).where(SessionQuestion.session_id == row.id))
    return Cast(row.id, row.join_code, row.rounds, questions, seats)


def recorded(db: Session, session_id: int, run: str) -> dict[str, Any]:
    """What the server's event log holds of this run's actions, by kind, and where the session stands."""
    counts = dict(
        db.execute(
            select(Event.kind, func.count())
            .where(Event.session_id == session_id, Event.client_key.like(f"{run}-%"), Event.kind.in_(RECORDED_KINDS))
            .group_by(Event.kind)
        ).all()
    )
    phase = db.scalar(select(VttSession.phase).where(VttSession.id == session_id))
    return {
        "counts": {plural: counts.get(kind, 0) for kind, plural in RECORDED_KINDS.items()},
        "phase": phase.value if phase is not None else None,
    }
