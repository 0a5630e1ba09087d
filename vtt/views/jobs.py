"""A session's background jobs on the host's pages: started and waited for, listed, cancelled, run again, and
their files downloaded, from any server process (the jobs are rows: :mod:`vtt.jobs`)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from flask import Blueprint, abort, current_app, flash, redirect, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from ..extensions import request_db
from ..jobs.model import ACTIVE, DEAD, DONE, Job
from ..jobs.store import cancel as cancel_job
from ..jobs.store import fail, run_again, session_jobs, submit
from ..offloop import in_process
from .auth import host_required
from .downloads import send_built

bp = Blueprint("jobs", __name__, url_prefix="/host/sessions/<int:session_id>/jobs")

WAIT_SECONDS = 15.0  # a download's click waits this long for its job; a longer one is fetched from the job list
WAIT_STEP = 0.05
KINDS = {
    "export": _l("All session data (CSV, zip)"),
    "report": _l("Report"),
    "ai_jury": _l("A model judging the rounds"),
    "judge": _l("The judge scoring open answers"),
    "transcribe": _l("A transcript suggestion"),
}
STATES = {
    "queued": _l("queued"),
    "running": _l("running"),
    "cancelling": _l("cancelling"),
    "done": _l("done"),
    "failed": _l("failed"),
    "cancelled": _l("cancelled"),
    "dead": _l("dead (its process is gone)"),
}


def start_and_wait(
    kind: str, argv: list, session_id: int | None, wait: float = WAIT_SECONDS, limit: float | None = None, **extra
) -> Job:
    """Queue a job and wait (yielding to the loop) until it ends or ``wait`` seconds pass; the job as it is
    then.  An app served without job workers (``flask run``, the tests) runs it here and now (for at most
    ``limit`` seconds, if given)."""
    db = request_db()
    job = queue(submit(db, kind, argv, session_id, **extra), limit)
    deadline = time.monotonic() + wait
    while True:
        db.rollback()  # a fresh read each time (SQLite keeps a transaction's snapshot)
        job = db.get(Job, job.id, populate_existing=True)
        if job.state not in ACTIVE or time.monotonic() > deadline:
            return job
        time.sleep(WAIT_STEP)  # under gevent, the loop goes on meanwhile


def queue(job: Job, limit: float | None = None) -> Job:
    """The submitted job, run now by a process of its own when this app has no job workers (``flask run``, the
    tests: each job then pays a Python start, as every job did before ``vtt serve`` kept workers)."""
    if not current_app.config.get("JOB_WORKERS"):
        try:
            in_process("vtt.jobs.runner", str(job.id), database_url=current_app.config["DATABASE_URL"], timeout=limit)
        except subprocess.TimeoutExpired:
            fail(request_db(), job.id, f"it took more than {limit:.0f} s", state=DEAD)
    return job


def job_file(job: Job) -> Path | None:
    """The finished job's file for the host, if it is still there (downloaded or expired: gone)."""
    if job.state != DONE or "file" not in job.args:
        return None
    path = Path(job.args["file"])
    return path if Path(current_app.config["EXPORTS_DIR"]) in path.parents and path.is_file() else None


def send_job_file(job: Job):
    """The finished job's file as the download it was made for; it is removed once sent."""
    path = job_file(job)
    if path is None:
        flash(_("That file is no longer kept: downloaded already, or past its time. Ask for it again."), "error")
        return redirect(url_for("results.page", session_id=job.session_id, _anchor="jobs"))
    folder = path.parent if path.parent != Path(current_app.config["EXPORTS_DIR"]) else None
    return send_built(path, job.args["name"], made=folder)


def unfinished(job: Job):
    """The host's answer when the job did not give a file in time: where it stands, on the results page."""
    if job.state in ACTIVE:
        flash(_("Still being built: it will be under Background work when ready."), "info")
    else:
        flash(_("Not built: %(reason)s", reason=job.error or job.state), "error")
    return redirect(url_for("results.page", session_id=job.session_id, _anchor="jobs"))


def jobs_card(session_id: int) -> list[dict]:
    """The session's latest jobs for the results page's Background work card."""
    return [
        {
            "job": job,
            "label": job.args.get("name") or KINDS.get(job.kind, job.kind),
            "state": STATES.get(job.state, job.state),
            "file": job_file(job) is not None,
            "active": job.state in ACTIVE,
        }
        for job in session_jobs(request_db(), session_id)
    ]


def _job(session_id: int, job_id: int) -> Job:
    job = request_db().get(Job, job_id)
    if job is None or job.session_id != session_id:
        abort(404)
    return job


@bp.get("/<int:job_id>/file")
@host_required
def download(session_id: int, job_id: int):
    return send_job_file(_job(session_id, job_id))


@bp.post("/<int:job_id>/cancel")
@host_required
def cancel(session_id: int, job_id: int):
    state = cancel_job(request_db(), _job(session_id, job_id).id)
    flash(_("Cancelled.") if state else _("That job had ended already."), "info")
    return redirect(url_for("results.page", session_id=session_id, _anchor="jobs"))


@bp.post("/<int:job_id>/again")
@host_required
def again(session_id: int, job_id: int):
    job = _job(session_id, job_id)
    if job.state in ACTIVE:
        flash(_("That job is still running."), "info")
    else:
        queue(run_again(request_db(), job))
        flash(_("Started again."), "success")
    return redirect(url_for("results.page", session_id=session_id, _anchor="jobs"))
