"""Studies in the host's pages: make one from sessions, add sessions, and download its report (per session and
pooled), built by ``vtt study report`` in a worker process (pooling many sessions is seconds of pandas and ReportLab:
never on the event loop)."""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, abort, current_app, flash, redirect, render_template, request, url_for
from flask_babel import get_locale
from flask_babel import gettext as _
from sqlalchemy import func, select
from sqlalchemy.orm import selectinload

from ..extensions import request_db
from ..jobs.model import DONE
from ..models import Juror, Jury, Player, Study, StudySession, VttSession
from ..offloop import scratch_path
from ..studies import StudyProblem, add_sessions, create_study, pooled_detection
from .auth import host_required
from .downloads import send_built
from .jobs import start_and_wait

STUDY_SECONDS = 600  # a study of many large sessions: its click waits this long for the job

bp = Blueprint("studies", __name__, url_prefix="/host/studies")


def _sessions() -> list[VttSession]:
    return request_db().scalars(select(VttSession).order_by(VttSession.created_at.desc())).all()


@bp.get("/")
@host_required
def index():
    studies = (
        request_db()
        .scalars(
            select(Study).options(selectinload(Study.members).selectinload(StudySession.session)).order_by(Study.name)
        )
        .all()
    )
    return render_template("host/studies.html", studies=studies, sessions=_sessions())


@bp.post("/")
@host_required
def create():
    codes = request.form.getlist("session")
    db = request_db()
    try:
        made = create_study(db, request.form.get("name", ""), codes, request.form.get("description", ""))
    except StudyProblem as problem:
        flash(_("No study made: %(problem)s", problem=str(problem)), "error")
        return redirect(url_for(".index"))
    db.commit()
    flash(_("Study %(name)s made of %(count)s sessions.", name=made.name, count=len(made.members)), "success")
    return redirect(url_for(".page", study_id=made.id))


def _study(study_id: int) -> Study:
    return request_db().get(Study, study_id) or abort(404)


@bp.get("/<int:study_id>")
@host_required
def page(study_id: int):
    study = _study(study_id)
    db = request_db()
    ids = [member.session_id for member in study.members]
    # per session and jury, jurors the host removed left out: the live jury's, then who judged afterwards
    jurors: dict[int, dict[str, int]] = {}
    for session_id, jury, count in db.execute(
        select(Juror.session_id, Juror.jury, func.count())
        .where(Juror.session_id.in_(ids), Juror.removed_at.is_(None))
        .group_by(Juror.session_id, Juror.jury)
    ):
        jurors.setdefault(session_id, {})[Jury(jury).value] = count
    players = dict(
        db.execute(
            select(Player.session_id, func.count()).where(Player.session_id.in_(ids)).group_by(Player.session_id)
        ).all()
    )
    figures = _figures(study) if request.args.get("figures") else None
    return render_template(
        "host/study.html",
        study=study,
        figures=figures,
        jurors=jurors,
        players=players,
        others=[s for s in _sessions() if s.id not in ids],
        pooled=pooled_detection(db, study),
    )


def _figures(study: Study) -> dict:
    """The study's main tables, pooled by a job (``vtt.workers.study_figures``)."""
    job = start_and_wait("study_figures", [study.id], None, wait=STUDY_SECONDS)
    if job.state != DONE:
        raise RuntimeError(f"the study's figures were not made ({job.state}): {job.error}")
    return job.output


@bp.post("/<int:study_id>/sessions")
@host_required
def add(study_id: int):
    study = _study(study_id)
    db = request_db()
    try:
        added = add_sessions(db, study.name, request.form.getlist("session"))
    except StudyProblem as problem:
        flash(_("Nothing added: %(problem)s", problem=str(problem)), "error")
    else:
        db.commit()
        flash(_("Added %(codes)s.", codes=", ".join(added)), "success")
    return redirect(url_for(".page", study_id=study.id))


@bp.get("/<int:study_id>/report.zip")
@host_required
def report(study_id: int):
    """The study's report: study_report.pdf (in the page's language), every table and the all-sessions export."""
    study = _study(study_id)
    language = "ko" if str(get_locale()) == "ko" else "en"
    out = scratch_path(Path(current_app.config["EXPORTS_DIR"]), 0, "study-report.zip")
    job = start_and_wait(
        "study_report", [study.id, language, out], None, wait=STUDY_SECONDS, file=str(out), name=f"study-{study.id}.zip"
    )
    if job.state != DONE:
        out.unlink(missing_ok=True)
        flash(_("No report: %(reason)s", reason=job.error or job.state), "error")
        return redirect(url_for(".page", study_id=study.id))
    return send_built(out, f"study-{study.id}.zip")
