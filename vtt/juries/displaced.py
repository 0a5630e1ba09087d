"""A displaced jury: people judging a finished session's rounds later, online, each through a link of their own.

The host (``vtt jury displaced``, the session page) creates N jurors at once (their links as a list or a CSV for
a crowd platform) or an open link with a cap: each person who arrives gets a juror of their own (:func:`arrive`;
found again by the crowd platform's participant id or the browser's key, :mod:`vtt.juries.displaced_crowd`).  Jurors are
labelled D001, D002, ... and judge with the ``displaced`` jury: the live tally, the stage and the round verdicts
never count them (``vtt.engine.displaced`` decides their actions).
"""

from __future__ import annotations

import csv
import io
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..kinds import Jury
from ..models import Juror, JuryLink, SessionStatus, VttSession
from ..persistence.load import load_state
from ..persistence.locks import lock_session, write_lock
from ..persistence.queries import assignments
from .displaced_crowd import PROLIFIC, Arrival, IdParams, check_arrival, check_complete_url, new_browser_key
from .rounds import JuryError, finished_state, offered_rounds

LABEL_PREFIX = "D"
MAX_CREATED = 10_000  # jurors made by one request (an open link takes any number, up to its cap)
MAX_CAP = 1_000_000


@dataclass(frozen=True)
class DisplacedJuror:
    label: str
    token: str
    browser_key: str | None = None  # an open link's arrival: the cookie that finds this juror again


def judgeable(db: Session, vtt_session: VttSession) -> list[int]:
    """The finished session's rounds a displaced juror can judge; refuses a session that has not finished."""
    return finished_state(db, vtt_session)[1]


def create_jurors(
    db: Session,
    vtt_session: VttSession,
    count: int,
    rounds: str | list[int] | None = None,
    attention: bool = False,
    *,
    cut_short: bool = False,
    complete_url: str | None = None,
) -> list[DisplacedJuror]:
    """``count`` displaced jurors of a finished session, each with a link of their own (written, not committed);
    ``cut_short``: a round cut short is offered too (:mod:`vtt.juries.rounds`); with ``complete_url`` the end of
    their task sends them there with their code."""
    if not 1 <= count <= MAX_CREATED:
        raise JuryError(f"the number of jurors must be from 1 to {MAX_CREATED:,}", "bad_count")
    complete_url = check_complete_url(complete_url) if complete_url else None
    lock_session(db, vtt_session.id)  # the labels are numbered across the session's links and batches
    numbers = offered_rounds(db, vtt_session, rounds, cut_short)[1]
    now = datetime.now(UTC)
    # The jurors made together share a closed link: it keeps their rounds and attention line, and admits nobody.
    link = JuryLink(
        session_id=vtt_session.id,
        token=secrets.token_urlsafe(18),
        cap=count,
        rounds=numbers,
        attention_check=attention,
        created_at=now,
        closed_at=now,
        complete_url=complete_url,
    )
    db.add(link)
    db.flush()
    return [
        _new_juror(db, vtt_session.id, link, number, Arrival()) for number in _next_numbers(db, vtt_session.id, count)
    ]


def open_link(
    db: Session,
    vtt_session: VttSession,
    cap: int | None,
    rounds: str | list[int] | None = None,
    attention: bool = False,
    *,
    cut_short: bool = False,
    ids: IdParams = PROLIFIC,
    complete_url: str | None = None,
) -> JuryLink:
    """An open displaced link: each person who arrives becomes a juror of their own until ``cap`` have come
    (``cut_short``: as :func:`create_jurors`).  The crowd platform's ids are read from the query parameters ``ids``
    names; with ``complete_url`` the end of the task sends the juror there with their code."""
    if cap is not None and not 1 <= cap <= MAX_CAP:
        raise JuryError(f"the cap must be from 1 to {MAX_CAP:,} jurors (or none)", "bad_cap")
    ids = ids.checked()
    complete_url = check_complete_url(complete_url) if complete_url else None
    numbers = offered_rounds(db, vtt_session, rounds, cut_short)[1]
    link = JuryLink(
        session_id=vtt_session.id,
        token=secrets.token_urlsafe(18),
        cap=cap,
        rounds=numbers,
        attention_check=attention,
        participant_param=ids.participant,
        study_param=ids.study,
        session_param=ids.session,
        complete_url=complete_url,
    )
    db.add(link)
    db.flush()
    return link


def link_ids(link: JuryLink) -> IdParams:
    return IdParams(link.participant_param, link.study_param, link.session_param)


def arrive(db: Session, token: str, arrival: Arrival | None = None) -> DisplacedJuror:
    """Someone pressed Start on an open displaced link: their own juror (written, not committed), or why not.  A
    person who has one already (:func:`returning_juror`) gets it back, even once the link is full or closed: no
    label, cap slot or completion code is used again.

    The link's row, then its session's, are locked before the returning juror, the cap and the next label are read,
    so arrivals at one moment queue (two presses of one person find one juror), and so do the session's other links
    and batches, whose labels are numbered with these: PostgreSQL by ``FOR UPDATE``; SQLite, which has no row
    locks, by taking the database's write lock first."""
    arrival = arrival or Arrival()
    write_lock(db)
    link = db.scalar(
        select(JuryLink).where(JuryLink.token == token).with_for_update().execution_options(populate_existing=True)
    )
    if link is None:
        check_link(db, link)
    lock_session(db, link.session_id)
    check_arrival(link_ids(link), arrival)
    known = returning_juror(db, link, arrival)
    if known is not None:
        return DisplacedJuror(known.label, known.token, known.browser_key)
    check_link(db, link)
    (number,) = _next_numbers(db, link.session_id, 1)
    return _new_juror(db, link.session_id, link, number, arrival)


def returning_juror(db: Session, link: JuryLink, arrival: Arrival) -> Juror | None:
    """The juror ``arrival`` already has at ``link``, if any.  With a participant id, it alone says who came (a shared
    computer's browser is not its participant); without one, the browser's key does."""
    if arrival.participant_id is not None:
        found = Juror.participant_id == arrival.participant_id
    elif arrival.browser_key is not None:
        found = Juror.browser_key == arrival.browser_key
    else:
        return None
    return db.scalar(select(Juror).where(Juror.link_id == link.id, found))


def check_link(db: Session, link: JuryLink | None) -> JuryLink:
    """``link`` if someone may arrive at it now; raises :class:`JuryError` (bad_link, link_closed, not_finished,
    link_full) otherwise.  Writes nothing: the open link's page asks before anyone presses Start."""
    if link is None:
        raise JuryError("this link is not valid", "bad_link")
    if link.closed_at is not None:
        raise JuryError("this jury is closed: thank you for your interest", "link_closed")
    vtt_session = db.get(VttSession, link.session_id)
    if vtt_session.status is not SessionStatus.FINISHED:
        raise JuryError("this session has not finished yet: come back once it has", "not_finished")
    if link.cap is not None and arrivals(db, link.id) >= link.cap:
        raise JuryError(f"this jury is full ({link.cap:,} jurors): thank you for your interest", "link_full")
    return link


def close_link(db: Session, link: JuryLink) -> None:
    if link.closed_at is None:
        link.closed_at = datetime.now(UTC)


def arrivals(db: Session, link_id: int) -> int:
    return db.scalar(select(func.count()).select_from(Juror).where(Juror.link_id == link_id)) or 0


def is_batch(link: JuryLink) -> bool:
    """Whether ``link`` holds jurors made together (:func:`create_jurors`: closed as it was made), not an open link."""
    return link.closed_at is not None and link.closed_at == link.created_at


def link_jurors(db: Session, link: JuryLink) -> list[DisplacedJuror]:
    """The jurors a link made (a batch's, or an open link's arrivals), in label order."""
    rows = db.execute(select(Juror.label, Juror.token).where(Juror.link_id == link.id).order_by(Juror.label)).all()
    return [DisplacedJuror(label, token) for label, token in rows]


@dataclass(frozen=True)
class Progress:
    """A session's displaced jury so far: its jurors, and those who finished (voted every round they judge, and
    answered their attention line if they have one: they were shown their completion code), in all and per link."""

    jurors: int
    finished: int
    per_link: dict[int, tuple[int, int]]  # link id -> (jurors, finished)


def finished_task(db: Session, juror: Juror) -> bool:
    """Whether displaced ``juror`` has done their task (every round voted, the attention line answered): their
    completion code was shown."""
    task = assignments(db, juror.session_id, [juror.id]).get(juror.id)
    return task is not None and task.done(load_state(db, juror.session_id))


def progress(db: Session, vtt_session: VttSession) -> Progress:
    ids = list(db.scalars(select(Juror.id).where(Juror.session_id == vtt_session.id, Juror.jury == Jury.DISPLACED)))
    if not ids:
        return Progress(0, 0, {})
    state = load_state(db, vtt_session.id)
    tasks = assignments(db, vtt_session.id, ids)
    links = dict(db.execute(select(Juror.id, Juror.link_id).where(Juror.id.in_(ids))).all())
    per_link: dict[int, tuple[int, int]] = {}
    finished = 0
    for juror_id, task in tasks.items():
        done = task.done(state)
        finished += done
        made, ended = per_link.get(links[juror_id], (0, 0))
        per_link[links[juror_id]] = (made + 1, ended + done)
    return Progress(len(tasks), finished, per_link)


def links_csv(jurors: list[DisplacedJuror], base: str) -> str:
    """The jurors' links as a CSV for a crowd platform: label, url."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["label", "url"])
    for juror in jurors:
        writer.writerow([juror.label, f"{base.rstrip('/')}/jury/{juror.token}"])
    return out.getvalue()


def _next_numbers(db: Session, session_id: int, count: int) -> list[int]:
    taken = set(
        db.scalars(select(Juror.label).where(Juror.session_id == session_id, Juror.label.like(f"{LABEL_PREFIX}%")))
    )
    numbers, number = [], 1
    while len(numbers) < count:
        if _label(number) not in taken:
            numbers.append(number)
        number += 1
    return numbers


def _label(number: int) -> str:
    return f"{LABEL_PREFIX}{number:03d}"


def _new_juror(db: Session, session_id: int, link: JuryLink, number: int, arrival: Arrival) -> DisplacedJuror:
    key = None
    if not is_batch(link):  # the browser's key unless another juror of the link holds it (a participant before)
        key = arrival.browser_key
        if key is None or db.scalar(select(Juror.id).where(Juror.link_id == link.id, Juror.browser_key == key)):
            key = new_browser_key()
    juror = Juror(
        session_id=session_id,
        label=_label(number),
        token=secrets.token_urlsafe(18),
        jury=Jury.DISPLACED,
        rounds=link.rounds,
        completion_code=secrets.token_hex(4).upper(),
        link_id=link.id,
        participant_id=arrival.participant_id,
        platform_study_id=arrival.study_id,
        platform_session_id=arrival.session_id,
        browser_key=key,
    )
    db.add(juror)
    return DisplacedJuror(juror.label, juror.token, key)
