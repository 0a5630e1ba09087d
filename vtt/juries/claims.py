"""Which run asks an AI juror's round: two runs of one model on one session at once never ask a round twice.

A run claims a round in the database before asking it: a ``juror_claim`` row, unique per (juror, round), inserted
in a transaction of its own, so of two runs exactly one inserts it (the other's insert fails on the unique key, on
SQLite and on PostgreSQL alike) and the other leaves the round to it. The reply is stored and the claim deleted in
one transaction; a failed call deletes it too, and a run lets go of whatever it still holds when it ends, even by an
exception.

A run that dies (killed, the machine off) cannot let go: its claim carries ``expires_at`` (the run's --timeout
plus ``CLAIM_MARGIN``, the time a call and its frames may take), and a claim past it is taken over by one atomic
UPDATE that only matches while it has lapsed. A dead run's rounds are free again within minutes, never blocked.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import timedelta

from sqlalchemy import delete, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ..models import JurorClaim, utcnow

CLAIM_MARGIN = timedelta(minutes=5)  # beyond the call's timeout: taking frames from the clips, storing the reply


def new_run() -> str:
    """A run's id, the owner of its claims."""
    return secrets.token_hex(8)


def lease(timeout: float) -> timedelta:
    """How long a claim holds before another run may take it over: the call's timeout and the margin."""
    return timedelta(seconds=timeout) + CLAIM_MARGIN


def claim_round(
    db_factory: Callable[[], Session], session_id: int, juror_id: int, number: int, run: str, held: timedelta
) -> bool:
    """Whether ``run`` now holds round ``number`` of ``juror_id`` (claimed anew, or taken over from a claim that
    lapsed); False while another run holds it. Commits."""
    now = utcnow()
    with db_factory() as db:
        db.add(
            JurorClaim(
                session_id=session_id, juror_id=juror_id, round=number, run=run, claimed_at=now, expires_at=now + held
            )
        )
        try:
            db.commit()
            return True
        except IntegrityError:  # another run holds it, or held it and died
            db.rollback()
        taken = db.execute(
            update(JurorClaim)
            .where(JurorClaim.juror_id == juror_id, JurorClaim.round == number, JurorClaim.expires_at < now)
            .values(run=run, claimed_at=now, expires_at=now + held)
            .execution_options(synchronize_session=False)
        )
        db.commit()
        return taken.rowcount == 1


def let_go(db: Session, juror_id: int, number: int, run: str) -> None:
    """Delete ``run``'s claim of the round (a claim taken over by another run stays); the caller commits."""
    db.execute(
        delete(JurorClaim)
        .where(JurorClaim.juror_id == juror_id, JurorClaim.round == number, JurorClaim.run == run)
        .execution_options(synchronize_session=False)
    )


def let_go_all(db_factory: Callable[[], Session], juror_id: int, run: str) -> None:
    """Delete every claim ``run`` still holds (the run ends). Commits."""
    with db_factory() as db:
        db.execute(
            delete(JurorClaim)
            .where(JurorClaim.juror_id == juror_id, JurorClaim.run == run)
            .execution_options(synchronize_session=False)
        )
        db.commit()
