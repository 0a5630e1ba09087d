"""The grading view: open answers marked by one or more graders, their agreement, and the final marks.

A grader names themself once (kept in the signed session cookie); every write names the grader.
Writes go through ``vtt.results.grading``; a refused request re-renders the page with status 400 and the
field at fault named. A write about one answer asked for JSON (the page's script, ``static/js/grading_rows.js``)
gets the answer's row and the Agreement card drawn again instead of a redirect, or the refusal as JSON (400).
"""

from __future__ import annotations

from flask import Blueprint, abort, current_app, flash, jsonify, redirect, render_template, request, url_for
from flask import session as cookie  # Flask's signed cookie; 'session' means a VTT session
from flask_babel import gettext as _
from sqlalchemy import select

from ..extensions import request_db
from ..jobs.model import ACTIVE, DEAD, FAILED, Job
from ..jobs.store import latest, submit
from ..judge.rubric import DIMENSIONS
from ..judge.suggest import suggestions, take_suggestion
from ..models import RUBRIC_DIMENSIONS, Event, VttSession
from ..persistence.locks import lock_session
from ..results.grading import (
    GradingError,
    MarkInput,
    answer_to_grade,
    grader_name,
    grading_overview,
    save_mark,
    set_final,
    settle_from_agreement,
)
from .auth import host_required
from .errors import wants_json
from .jobs import queue

bp = Blueprint("grading", __name__, url_prefix="/host/sessions/<int:session_id>/grading")

GRADER_KEY = "grader"
# Which answers the page lists: ?show=...
FILTERS = {
    "all": lambda item, grader: True,
    "mine": lambda item, grader: grader not in item.marks,
    "disagreements": lambda item, grader: item.disagreement or item.final_differs,
    "unsettled": lambda item, grader: item.final is None,
}


@bp.get("/")
@host_required
def page(session_id: int):
    return _render(_session(session_id))


@bp.post("/grader")
@host_required
def name_grader(session_id: int):
    vtt_session = _session(session_id)
    if request.form.get("action") == "leave":
        cookie.pop(GRADER_KEY, None)
        return redirect(url_for(".page", session_id=vtt_session.id))
    try:
        cookie[GRADER_KEY] = grader_name(request.form.get("grader"))
    except GradingError as error:
        return _render(vtt_session, error)
    flash(_("You grade as %(grader)s.", grader=cookie[GRADER_KEY]), "success")
    return redirect(url_for(".page", session_id=vtt_session.id))


@bp.post("/mark")
@host_required
def mark(session_id: int):
    return _write_mark(
        session_id,
        save_mark,
        lambda grader, answer, verdict: _(
            "%(grader)s marked answer %(answer)s %(verdict)s.", grader=grader, answer=answer.id, verdict=verdict
        ),
    )


@bp.post("/final")
@host_required
def final(session_id: int):
    return _write_mark(
        session_id,
        set_final,
        lambda _grader, answer, verdict: _(
            "Final mark of answer %(answer)s: %(verdict)s.", answer=answer.id, verdict=verdict
        ),
    )


def _write_mark(session_id: int, write, done_message):
    """A grader's mark or a final mark: validate, write through the service, commit, say what was saved."""
    vtt_session = _session_to_write(session_id)
    try:
        grader = grader_name(cookie.get(GRADER_KEY))
        answer = answer_to_grade(request_db(), vtt_session, request.form.get("answer_id"))
        given = MarkInput.from_form(request.form)
        write(request_db(), vtt_session, answer, grader, given)
    except GradingError as error:
        return _refused(vtt_session, error)
    request_db().commit()
    return _done(vtt_session, answer, done_message(grader, answer, _("correct") if given.correct else _("incorrect")))


@bp.post("/take")
@host_required
def take(session_id: int):
    """The grader takes a judge model's suggestion as their own mark (it counts from then on, like any mark); where
    the judge's verdict could not be read, the form's ``correct`` is the grader's verdict."""
    vtt_session = _session_to_write(session_id)
    model = (request.form.get("model") or "").strip()
    verdict = {"1": True, "0": False}.get((request.form.get("correct") or "").strip())
    try:
        grader = grader_name(cookie.get(GRADER_KEY))
        answer = answer_to_grade(request_db(), vtt_session, request.form.get("answer_id"))
        taken = take_suggestion(request_db(), vtt_session, answer, grader, model, verdict)
    except GradingError as error:
        return _refused(vtt_session, error)
    request_db().commit()
    return _done(
        vtt_session,
        answer,
        _(
            "%(grader)s took %(model)s's mark of answer %(answer)s: %(verdict)s.",
            grader=grader,
            model=model,
            answer=answer.id,
            verdict=_("correct") if taken.correct else _("incorrect"),
        ),
    )


def _done(vtt_session: VttSession, answer, message: str):
    """After a write about one answer: its row and the Agreement card as JSON, or the page at the answer."""
    if not wants_json():
        flash(message, "success")
        return _back(vtt_session, answer.id)
    overview = grading_overview(request_db(), vtt_session)
    item = next(item for item in overview.answers if item.answer.id == answer.id)
    show = request.form.get("show", "all")
    drawn = {
        "s": vtt_session,
        "overview": overview,
        "item": item,
        "grader": cookie.get(GRADER_KEY),
        "show": show if show in FILTERS else "all",
        "dimensions": RUBRIC_DIMENSIONS,
        "suggested": suggestions(request_db(), [answer.id]),
    }
    return jsonify(
        ok=True,
        message=message,
        row=render_template("grading/answer.html", **drawn),
        agreement=render_template("grading/agreement.html", **drawn),
    )


def _refused(vtt_session: VttSession, error: GradingError):
    request_db().rollback()
    if wants_json():
        return jsonify(ok=False, error={"code": "refused", "field": error.field, "message": error.message}), 400
    return _render(vtt_session, error)


@bp.post("/judge")
@host_required
def ask_judge(session_id: int):
    """Start the judge (VTT_JUDGE_URL, VTT_JUDGE_MODEL) on every open answer not yet scored, in a worker process."""
    vtt_session = _session(session_id)
    url, model = current_app.config.get("JUDGE_URL"), current_app.config.get("JUDGE_MODEL")
    if not url or not model:
        flash(_("No judge is set: start the server with VTT_JUDGE_URL and VTT_JUDGE_MODEL (docs/grading.md)."), "error")
    elif judge_running(vtt_session):
        flash(_("The judge is already scoring this session's answers."), "info")
    else:
        queue(submit(request_db(), "judge", [str(vtt_session.id), url, model], vtt_session.id))
        flash(_("The judge is scoring the open answers; reload the page to see its suggestions."), "success")
    return redirect(url_for(".page", session_id=vtt_session.id, _anchor="judge"))


def judge_run(vtt_session: VttSession) -> Job | None:
    """The session's last judge run (a job: every process sees it)."""
    return latest(request_db(), "judge", vtt_session.id)


def judge_running(vtt_session: VttSession) -> bool:
    run = judge_run(vtt_session)
    return run is not None and run.state in ACTIVE


def judge_failure(vtt_session: VttSession) -> str | None:
    """Why the session's last judge run failed (or died); None if it did not."""
    run = judge_run(vtt_session)
    return run.error if run is not None and run.state in (FAILED, DEAD) else None


@bp.post("/settle")
@host_required
def settle(session_id: int):
    """Final marks from the graders' agreement: one answer (``answer_id``), or every answer without one."""
    vtt_session = _session_to_write(session_id)
    one = bool(request.form.get("answer_id"))
    try:
        grader = grader_name(cookie.get(GRADER_KEY))
        answer = answer_to_grade(request_db(), vtt_session, request.form.get("answer_id")) if one else None
        settled = settle_from_agreement(request_db(), vtt_session, grader, answer)
    except GradingError as error:
        return _refused(vtt_session, error)
    request_db().commit()
    if answer is not None:
        return _done(
            vtt_session, answer, _("Final mark of answer %(answer)s set from the graders' agreement.", answer=answer.id)
        )
    if settled:
        flash(_("%(count)s final marks set from the graders' agreement.", count=settled), "success")
    else:
        flash(_("No answer without a final mark has graders who agree."), "info")
    return redirect(url_for(".page", session_id=vtt_session.id))


def _session(session_id: int) -> VttSession:
    return request_db().get(VttSession, session_id) or abort(404)


def _session_to_write(session_id: int) -> VttSession:
    """The session, locked until this request commits: a mark is read, then inserted or replaced, so two graders (or
    one grader's two tabs) writing at one moment queue instead of both inserting (each row's key is unique)."""
    vtt_session = _session(session_id)
    lock_session(request_db(), session_id)
    return vtt_session


def _back(vtt_session: VttSession, answer_id: int):
    show = request.form.get("show", "all")
    return redirect(
        url_for(
            ".page", session_id=vtt_session.id, show=show if show in FILTERS else "all", _anchor=f"answer-{answer_id}"
        )
    )


def _render(vtt_session: VttSession, error: GradingError | None = None):
    overview = grading_overview(request_db(), vtt_session)
    grader = cookie.get(GRADER_KEY)
    show = request.values.get("show", "all")
    keep = FILTERS.get(show, FILTERS["all"])
    suggested = suggestions(request_db(), [item.answer.id for item in overview.answers])
    listed = [(question, [item for item in question.answers if keep(item, grader)]) for question in overview.questions]
    order = "doubt" if request.values.get("order") == "doubt" else "page"
    if order == "doubt":  # the judge's least sure first, within each question and across them

        def doubt(item) -> float:
            return max((suggestion.doubt for suggestion in suggested.get(item.answer.id, [])), default=-1.0)

        listed = [(question, sorted(items, key=doubt, reverse=True)) for question, items in listed]
        listed.sort(key=lambda pair: max((doubt(item) for item in pair[1]), default=-1.0), reverse=True)
    last_run = request_db().scalar(
        select(Event)
        .where(Event.session_id == vtt_session.id, Event.kind == "judge.run")
        .order_by(Event.id.desc())
        .limit(1)
    )
    return render_template(
        "grading/page.html",
        s=vtt_session,
        overview=overview,
        listed=listed,
        grader=grader,
        show=show if show in FILTERS else "all",
        error=error,
        dimensions=RUBRIC_DIMENSIONS,
        suggested=suggested,
        order=order,
        judge={
            "model": current_app.config.get("JUDGE_MODEL"),
            "url": current_app.config.get("JUDGE_URL"),
            "running": judge_running(vtt_session),
            "failure": judge_failure(vtt_session),
            "last_run": last_run,
            "dimensions": len(DIMENSIONS),
        },
    ), 400 if error else 200
