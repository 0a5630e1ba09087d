"""The grading view: open answers marked by one or more graders, their agreement, and the final marks.

A grader names themself once (kept in the signed session cookie); every write names the grader.
Writes go through ``vtt.results.grading``; a refused request re-renders the page with status 400 and the
field at fault named.
"""

from __future__ import annotations

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask import session as cookie  # Flask's signed cookie; 'session' means a VTT session
from flask_babel import gettext as _

from ..extensions import request_db
from ..models import RUBRIC_DIMENSIONS, VttSession
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
    vtt_session = _session(session_id)
    try:
        grader = grader_name(cookie.get(GRADER_KEY))
        answer = answer_to_grade(request_db(), vtt_session, request.form.get("answer_id"))
        given = MarkInput.from_form(request.form)
        write(request_db(), vtt_session, answer, grader, given)
    except GradingError as error:
        request_db().rollback()
        return _render(vtt_session, error)
    request_db().commit()
    flash(done_message(grader, answer, _("correct") if given.correct else _("incorrect")), "success")
    return _back(vtt_session, answer.id)


@bp.post("/settle")
@host_required
def settle(session_id: int):
    """Final marks from the graders' agreement: one answer (``answer_id``), or every answer without one."""
    vtt_session = _session(session_id)
    one = bool(request.form.get("answer_id"))
    try:
        grader = grader_name(cookie.get(GRADER_KEY))
        answer = answer_to_grade(request_db(), vtt_session, request.form.get("answer_id")) if one else None
        settled = settle_from_agreement(request_db(), vtt_session, grader, answer)
    except GradingError as error:
        request_db().rollback()
        return _render(vtt_session, error)
    request_db().commit()
    if answer is not None:
        flash(_("Final mark of answer %(answer)s set from the graders' agreement.", answer=answer.id), "success")
        return _back(vtt_session, answer.id)
    if settled:
        flash(_("%(count)s final marks set from the graders' agreement.", count=settled), "success")
    else:
        flash(_("No answer without a final mark has graders who agree."), "info")
    return redirect(url_for(".page", session_id=vtt_session.id))


def _session(session_id: int) -> VttSession:
    return request_db().get(VttSession, session_id) or abort(404)


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
    listed = [(question, [item for item in question.answers if keep(item, grader)]) for question in overview.questions]
    return render_template(
        "grading/page.html",
        s=vtt_session,
        overview=overview,
        listed=listed,
        grader=grader,
        show=show if show in FILTERS else "all",
        error=error,
        dimensions=RUBRIC_DIMENSIONS,
    ), 400 if error else 200
