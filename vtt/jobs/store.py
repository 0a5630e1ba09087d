"""The jobs table's reads and writes: submit, claim, finish, cancel, find the dead.  Every change of state is one
conditional UPDATE (``WHERE state = ...``), so two processes racing on a job (two workers claiming it, a worker
finishing it while a host cancels it) leave it in one state, on SQLite and on PostgreSQL."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from .model import ACTIVE, CANCELLED, CANCELLING, DEAD, DONE, FAILED, QUEUED, RUNNING, Job

# kind -> the worker module whose ``main(*argv)`` does it and returns its output (a dict)
KINDS = {
    "export": "vtt.workers.export",
    "report": "vtt.workers.session_reports",
    "ai_jury": "vtt.workers.ai_jury",
    "judge": "vtt.workers.judge",
    "transcribe": "vtt.workers.transcribe",
    "study_figures": "vtt.workers.study_figures",
    "study_report": "vtt.workers.study_report",
}
ERROR_CHARS = 2000


def this_host() -> str:
    return socket.gethostname()[:255]


def now() -> datetime:
    return datetime.now(UTC)


def submit(db: Session, kind: str, argv: list[str], session_id: int | None = None, **extra: Any) -> Job:
    """A new queued job of ``kind`` (one of :data:`KINDS`), committed: every worker can claim it now."""
    if kind not in KINDS:
        raise ValueError(f"no job of kind {kind!r}")
    job = Job(kind=kind, session_id=session_id, args={"argv": [str(arg) for arg in argv], **extra}, state=QUEUED)
    db.add(job)
    db.commit()
    return job


def claim(db: Session, host: str, pid: int) -> Job | None:
    """The oldest queued job, now running on ``host`` in process ``pid``; None when none is queued.  A job another
    worker took first is skipped (its UPDATE finds it no longer queued)."""
    for job_id in db.scalars(select(Job.id).where(Job.state == QUEUED).order_by(Job.id).limit(5)).all():
        taken = db.execute(
            update(Job)
            .where(Job.id == job_id, Job.state == QUEUED)
            .values(state=RUNNING, host=host, pid=pid, started_at=now(), progress="")
        )
        db.commit()
        if taken.rowcount == 1:
            return db.get(Job, job_id, populate_existing=True)
    return None


def moved(db: Session, job_id: int, states: tuple[str, ...], **values: Any) -> bool:
    """Set ``values`` on the job if it is in one of ``states``; whether it was."""
    changed = db.execute(update(Job).where(Job.id == job_id, Job.state.in_(states)).values(**values))
    db.commit()
    return changed.rowcount == 1


def set_progress(db: Session, job_id: int, text: str) -> None:
    moved(db, job_id, (RUNNING,), progress=text[:200])


def finish(db: Session, job_id: int, output: dict) -> bool:
    """The job is done with ``output`` (unless it was cancelled meanwhile)."""
    return moved(db, job_id, (RUNNING,), state=DONE, output=output, ended_at=now())


def fail(db: Session, job_id: int, error: str, state: str = FAILED) -> bool:
    """The job failed (or is ``dead``) because of ``error``."""
    return moved(db, job_id, (RUNNING, CANCELLING), state=state, error=error[-ERROR_CHARS:], ended_at=now())


def cancel(db: Session, job_id: int) -> str | None:
    """Stop the job: a queued one is cancelled now, a running one is asked to stop (its worker kills its process
    and marks it cancelled).  Its state after; None when it had ended already."""
    if moved(db, job_id, (QUEUED,), state=CANCELLED, ended_at=now()):
        return CANCELLED
    if moved(db, job_id, (RUNNING,), state=CANCELLING):
        return CANCELLING
    return None


def run_again(db: Session, job: Job) -> Job:
    """A new queued job doing what ``job`` did (an AI jury's run asks only the rounds not yet voted)."""
    return submit(db, job.kind, job.args.get("argv", []), job.session_id, **_extra(job.args))


def _extra(args: dict) -> dict:
    return {key: value for key, value in args.items() if key != "argv"}


def sweep_dead(db: Session, host: str, alive: Callable[[int], bool]) -> int:
    """Running jobs of ``host`` whose process is gone are dead, with the reason; how many were found."""
    found = 0
    rows = db.execute(select(Job.id, Job.pid).where(Job.state.in_((RUNNING, CANCELLING)), Job.host == host)).all()
    for job_id, pid in rows:
        if pid is not None and alive(pid):
            continue
        reason = (
            f"its process ({pid}) on {host} ended without finishing it: the worker or the server was stopped or "
            "killed, or the machine restarted"
        )
        found += fail(db, job_id, reason, state=DEAD)
    return found


def job_process_alive(pid: int) -> bool:
    """Whether ``pid`` is a job worker's process (not merely a process that took a dead worker's number)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return b"vtt.jobs.worker" in cmdline.read()
    except OSError:
        return False if os.path.isdir("/proc") else _signal_alive(pid)


def _signal_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def session_jobs(db: Session, session_id: int, limit: int = 10) -> list[Job]:
    """The session's latest jobs, newest first."""
    return list(db.scalars(select(Job).where(Job.session_id == session_id).order_by(Job.id.desc()).limit(limit)))


def active_jobs(db: Session) -> list[Job]:
    return list(db.scalars(select(Job).where(Job.state.in_(ACTIVE)).order_by(Job.id)))


def latest(db: Session, kind: str, session_id: int) -> Job | None:
    return db.scalar(select(Job).where(Job.kind == kind, Job.session_id == session_id).order_by(Job.id.desc()))
