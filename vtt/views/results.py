"""The results page (tallies per round with the verdict, a CogME radar per player) and the report downloads.

The downloads are the files ``vtt report`` and ``vtt export`` write, made afresh on each request (so that they carry
the latest final marks) by a worker process into the instance's exports folder, and streamed from there.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from flask import Blueprint, abort, current_app, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _

from ..extensions import request_db
from ..i18n import report_language
from ..jobs.model import ACTIVE, DEAD, DONE, FAILED, Job
from ..jobs.store import latest, submit
from ..judge.agreement import judge_card
from ..juries.ai import MAX_FRAMES, MODEL_LENGTH, JuryError, JurySettings, ai_jurors, last_run
from ..juries.rounds import cut_short_offerable
from ..kinds import SessionStatus
from ..model_calls.endpoints import chat_url
from ..models import VttSession
from ..offloop import scratch_path
from ..results.juries import test_name
from ..results.summary import session_results
from .auth import host_required
from .jobs import jobs_card, queue, send_job_file, start_and_wait, unfinished

bp = Blueprint("results", __name__, url_prefix="/host/sessions/<int:session_id>/results")

PDF_FILES = ("report.pdf", "profiles.pdf", "tallies.pdf")


@bp.get("/")
@host_required
def page(session_id: int):
    vtt_session = _session(session_id)
    return render_template(
        "results/page.html",
        s=vtt_session,
        results=session_results(request_db(), vtt_session),
        judge=judge_card(request_db(), vtt_session),
        pdf_files=PDF_FILES,
        ai_jury=_ai_jury_card(vtt_session),
        test_name=test_name,
        jobs=jobs_card(vtt_session.id),
    )


@bp.post("/ai-jury")
@host_required
def ask_ai_juror(session_id: int):
    """Start a model judging the finished session's rounds as an AI juror (``vtt jury ai``), in a worker process."""
    vtt_session = _session(session_id)
    url, model = (request.form.get("url") or "").strip(), (request.form.get("model") or "").strip()
    frames, problem = ai_jury_form_problem(url, model, request.form.get("frames"))
    if problem is None:
        try:
            JurySettings.from_spec(url, model, frames=frames)  # refused here, not in the worker, where it can be
        except JuryError as error:  # a rule the form's own check does not know (tests keep the two agreeing)
            problem = str(error)
    if problem is not None:
        flash(_("The model cannot judge: %(reason)s", reason=problem), "error")
        return redirect(url_for(".page", session_id=vtt_session.id, _anchor="ai-jury"))
    if vtt_session.status is not SessionStatus.FINISHED:
        flash(_("A model judges a finished session: finish the session first."), "error")
    elif _ai_jury_running(vtt_session):
        flash(_("A model is already judging this session."), "info")
    else:
        argv = [vtt_session.id, url, model, frames, current_app.config["MEDIA_DIR"]]
        cut_short = "1" if request.form.get("cut_short") == "1" else "0"
        queue(submit(request_db(), "ai_jury", [*argv, cut_short], vtt_session.id))
        flash(_("%(model)s is judging the rounds; reload the page to see its votes.", model=model), "success")
    return redirect(url_for(".page", session_id=vtt_session.id, _anchor="ai-jury"))


def ai_jury_form_problem(url: str, model: str, frames: str | None) -> tuple[int, str | None]:
    """The AI-jury form's frames, and what is wrong with its fields (None: nothing), in the interface's language
    and naming the form's fields (the command line's messages name its options: --judge, --model, --frames)."""
    try:
        count = int((frames or "0").strip())
    except ValueError:
        count = -1
    if chat_url(url) is None:
        return count, _(
            "Chat-completions endpoint: give the address of an OpenAI-compatible server, beginning with http:// or "
            "https://, e.g. http://127.0.0.1:8000/v1."
        )
    if not model:
        return count, _("Model: name the model the endpoint serves.")
    if len(model) > MODEL_LENGTH:
        return count, _("Model: at most %(most)s characters.", most=MODEL_LENGTH)
    if not 0 <= count <= MAX_FRAMES:
        return count, _("Frames per clip: a whole number from 0 to %(most)s.", most=MAX_FRAMES)
    return count, None


def ai_jury_run(vtt_session: VttSession) -> Job | None:
    """The session's last AI juror run (a job: every process sees it)."""
    return latest(request_db(), "ai_jury", vtt_session.id)


def _ai_jury_running(vtt_session: VttSession) -> bool:
    run = ai_jury_run(vtt_session)
    return run is not None and run.state in ACTIVE


def _ai_jury_failure(vtt_session: VttSession) -> str | None:
    """Why the session's last AI juror run failed (or died); None if it did not."""
    run = ai_jury_run(vtt_session)
    return run.error if run is not None and run.state in (FAILED, DEAD) else None


def _ai_jury_card(vtt_session: VttSession) -> dict:
    return {
        "finished": vtt_session.status is SessionStatus.FINISHED,
        "url": current_app.config.get("JUDGE_URL") or "",
        "model": current_app.config.get("JUDGE_MODEL") or "",
        "max_frames": MAX_FRAMES,
        "running": _ai_jury_running(vtt_session),
        "failure": _ai_jury_failure(vtt_session),
        "last_run": last_run(request_db(), vtt_session.id),
        "jurors": ai_jurors(request_db(), vtt_session.id),
        "cut_short": cut_short_offerable(request_db(), vtt_session),
    }


@bp.get("/files/<name>")
@host_required
def report_file(session_id: int, name: str):
    """One PDF of the report (``report.pdf``, ``profiles.pdf``, ``tallies.pdf``) or all its CSVs (``report-csv.zip``),
    built by a job (:mod:`vtt.jobs`) and sent when it is ready.

    The PDFs are in the language ``?report_lang=`` asks for, else the page's; the CSVs are English.  Asking for a
    report in another language leaves the interface's language alone.
    """
    vtt_session = _session(session_id)
    if name not in (*PDF_FILES, "report-csv.zip"):
        abort(404)
    folder = scratch_path(_exports(), vtt_session.id, "report")
    job = start_and_wait(
        "report",
        [vtt_session.join_code, str(folder), report_language()],
        vtt_session.id,
        file=str(folder / name),
        name=f"{vtt_session.join_code}_{name}",
    )
    if job.state != DONE:
        return unfinished(job)
    result = job.output or {}
    if "nothing" in result or name not in result.get("written", ()):
        shutil.rmtree(folder, ignore_errors=True)
        if "nothing" in result:
            message = _(
                "%(file)s: no graded answer yet, so nothing to report (grade the open answers first).", file=name
            )
        else:  # tallies.pdf needs votes or a judgment sheet
            message = _("%(file)s: no votes and no judgment sheet yet, so no tallies.", file=name)
        flash(message, "error")
        return redirect(url_for(".page", session_id=vtt_session.id))
    return send_job_file(job)


@bp.get("/export.zip")
@host_required
def export(session_id: int):
    """Every table of the session as CSV, plus the wide file and the kept recordings of spoken answers (as
    ``vtt export`` writes them), built by a job (:mod:`vtt.jobs`) and sent when it is ready."""
    vtt_session = _session(session_id)
    out = scratch_path(_exports(), vtt_session.id, "export.zip")
    job = start_and_wait(
        "export",
        [vtt_session.join_code, current_app.config["RECORDINGS_DIR"], str(out)],
        vtt_session.id,
        file=str(out),
        name=f"{vtt_session.join_code}_export.zip",
    )
    return send_job_file(job) if job.state == DONE else unfinished(job)


def _exports() -> Path:
    return Path(current_app.config["EXPORTS_DIR"])


def _session(session_id: int) -> VttSession:
    return request_db().get(VttSession, session_id) or abort(404)
