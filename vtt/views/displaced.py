"""A displaced jury's pages: a displaced juror's own page, the open link that makes one, and the host's card on the
session page (jurors made with their links as CSV, open links and their closing, how many have finished).

The rules and the writing are :mod:`vtt.juries.displaced`'s; these views validate, call it, commit and respond.
Nothing is made by opening a link: an open link makes a juror only when the person presses Start (chat apps and
crowd platforms fetch links to preview them).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from flask import (
    Blueprint,
    Response,
    abort,
    current_app,
    flash,
    make_response,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_babel import ngettext
from flask_limiter.util import get_remote_address
from sqlalchemy import select
from sqlalchemy.orm import Session

from ..access.admission import admit_arrival, session_route
from ..engine.actions import Refusal
from ..extensions import request_db
from ..juries.displaced import (
    MAX_CAP,
    MAX_CREATED,
    JuryError,
    arrivals,
    arrive,
    check_link,
    close_link,
    create_jurors,
    finished_task,
    is_batch,
    judgeable,
    link_ids,
    link_jurors,
    links_csv,
    open_link,
    progress,
    returning_juror,
)
from ..juries.displaced_crowd import PROLIFIC, BadPlatformId, IdParams, completion_url, new_browser_key, read_arrival
from ..juries.rounds import cut_short_offerable
from ..kinds import Jury
from ..models import Juror, JuryLink, SessionStatus, VttSession
from .auth import host_required
from .joinurl import join_base_url

bp = Blueprint("displaced", __name__)

SHOWN_LINKS = 100  # the links of a batch just made, on the session page (all of them: the CSV)
ARRIVAL_COOKIE = "vtt_arrival"  # an open link's browser key (one per link: the cookie's path is the link's)
ARRIVAL_COOKIE_SECONDS = 90 * 24 * 3600  # a crowd study's weeks, and a late return
DEFAULT_NAMES = (PROLIFIC.participant, PROLIFIC.study, PROLIFIC.session)

# Why nobody can arrive at an open link now, as its page says it, and the page's HTTP status.
LINK_REFUSALS = {
    "bad_link": (_l("This link is not valid. Ask whoever sent it for a new one."), 404),
    "link_closed": (_l("This jury is closed: thank you for your interest."), 410),
    "link_full": (_l("This jury is full: thank you for your interest."), 410),
    "not_finished": (_l("This session has not finished yet: come back once it has."), 409),
}


# --- the displaced juror's page --------------------------------------------------------------------------------


def displaced_page(juror: Juror):
    """A displaced juror's own page (``/jury/<token>``): the finished session's rounds at their own pace.  Before
    the session has finished, or once the host withdrew the link, the page says so (the socket refuses it too)."""
    finished = juror.session.status is SessionStatus.FINISHED
    link = request_db().get(JuryLink, juror.link_id) if juror.link_id is not None else None
    return render_template(
        "live/displaced.html",
        auth={"token": juror.token},
        key=juror.token,
        route=session_route(current_app.config["SECRET_KEY"], juror.session_id),  # never the join code
        title=juror.session.name,
        finished=finished,
        removed=juror.removed_at is not None,
        # the end of the task sends the juror back to the crowd platform (through the server: :func:`completion`)
        complete=url_for("displaced.completion", token=juror.token) if link is not None and link.complete_url else None,
    )


# --- the open link -----------------------------------------------------------------------------------------------


@bp.route("/jury/open/<token>", methods=["GET", "POST"])
def open_link_page(token: str):
    """An open displaced link: what judging is, and Start (a POST: it makes the person's juror).  Someone who has a
    juror of this link already (the platform's participant id on the link, or this browser's cookie) is sent to it,
    whether they open the link or press Start, even once the link is full or closed."""
    db = request_db()
    link = db.scalar(select(JuryLink).where(JuryLink.token == token[:64]))
    if link is None:
        return _refused_link(JuryError("this link is not valid", "bad_link"))
    try:
        arrival = read_arrival(link_ids(link), request.args, request.cookies.get(ARRIVAL_COOKIE))
    except BadPlatformId as error:
        return _bad_id(error)
    known = returning_juror(db, link, arrival)
    if known is not None:
        return _to_juror(link, known.token, known.browser_key)
    try:
        check_link(db, link)
    except JuryError as error:
        return _refused_link(error)
    key = arrival.browser_key or new_browser_key()
    if request.method == "POST":
        try:
            admit_arrival(get_remote_address())
        except Refusal:
            message = _("Too many people started from your network just now. Try again in a minute.")
            return _with_key(link, _open_page(link, error=message), key), 429, {"Retry-After": "60"}
        try:
            made = arrive(db, link.token, replace(arrival, browser_key=key))
            db.commit()
        except JuryError as error:  # filled or closed meanwhile
            db.rollback()
            return _refused_link(error)
        return _to_juror(link, made.token, made.browser_key)
    return _with_key(link, _open_page(link), key)


def _with_key(link: JuryLink, body, key: str | None) -> Response:
    """``body`` as a response carrying the browser's key for this link: an HttpOnly cookie sent back only to this
    link's address, so that Start pressed twice (or the link opened again) finds the juror it made."""
    response = make_response(body)
    if key is not None:
        response.set_cookie(
            ARRIVAL_COOKIE,
            key,
            max_age=ARRIVAL_COOKIE_SECONDS,
            path=url_for("displaced.open_link_page", token=link.token),
            secure=request.is_secure,
            httponly=True,
            samesite="Lax",
        )
    return response


def _to_juror(link: JuryLink, juror_token: str, key: str | None) -> Response:
    return _with_key(link, redirect(url_for("live.juror_page", token=juror_token)), key)


def _open_page(link: JuryLink, error: str | None = None):
    vtt_session = request_db().get(VttSession, link.session_id)
    rounds = len(link.rounds) if link.rounds else len(judgeable(request_db(), vtt_session))
    return render_template("live/displaced_open.html", s=vtt_session, rounds=rounds, error=error, refused=False)


def _refused_link(error: JuryError):
    message, status = LINK_REFUSALS.get(error.code, (error.message, 409))
    return render_template("live/displaced_open.html", s=None, rounds=0, error=str(message), refused=True), status


def _bad_id(error: BadPlatformId):
    message = _(
        "The participant id on this link (%(parameter)s) is not valid: up to 64 letters, digits, '.', '_' or '-'. "
        "Open the task again from the platform that sent you here.",
        parameter=error.parameter,
    )
    return render_template("live/displaced_open.html", s=None, rounds=0, error=message, refused=True), 400


@bp.get("/jury/<token>/complete")
def completion(token: str):
    """The end of a displaced juror's task: to the host's completion URL with their code.  The address is the link's,
    checked when it was made; nothing in the request chooses it."""
    db = request_db()
    juror = db.scalar(select(Juror).where(Juror.token == token[:64], Juror.jury == Jury.DISPLACED))
    link = db.get(JuryLink, juror.link_id) if juror is not None and juror.link_id is not None else None
    if link is None or not link.complete_url:
        abort(404, description=_("This juror link is not valid. Ask the host for yours."))
    if juror.removed_at is not None:
        abort(410, description=_("This link was withdrawn by the host."))
    if not finished_task(db, juror):
        message = _("You have not finished yet: vote in every round first, then press Finish.")
        return render_template("live/displaced_open.html", s=None, rounds=0, error=message, refused=True), 409
    return redirect(completion_url(link.complete_url, juror.completion_code), 302)


# --- the host's card ---------------------------------------------------------------------------------------------


def displaced_card(db: Session, vtt_session: VttSession, batch: int | None) -> dict[str, Any]:
    """What the session page's card "Judge this session again online" shows: whether it is open, the rounds that
    can be judged, the batches of jurors made and the open links (each with how many came and finished), and the
    links of the batch just made (``batch``)."""
    card: dict[str, Any] = {"finished": vtt_session.status is SessionStatus.FINISHED, "rounds": [], "problem": None}
    if not card["finished"]:
        return card
    try:
        card["rounds"] = judgeable(db, vtt_session)
    except JuryError as error:
        card["problem"] = error.code
    card["cut_short"] = cut_short_offerable(db, vtt_session)
    base = join_base_url()
    made = progress(db, vtt_session)
    card.update(jurors=made.jurors, done=made.finished, batches=[], open_links=[], shown=None)
    links = db.scalars(select(JuryLink).where(JuryLink.session_id == vtt_session.id).order_by(JuryLink.id.desc()))
    for link in links:
        count, done = made.per_link.get(link.id, (0, 0))
        row = {"link": link, "jurors": count, "done": done, "rounds": link.rounds, "attention": link.attention_check}
        if is_batch(link):
            card["batches"].append(row)
        else:
            card["open_links"].append({**row, "url": f"{base}/jury/open/{link.token}"})
        if batch == link.id and is_batch(link):
            shown = link_jurors(db, link)
            card["shown"] = {
                "link": link,
                "jurors": [(j.label, f"{base}/jury/{j.token}") for j in shown[:SHOWN_LINKS]],
                "more": max(0, len(shown) - SHOWN_LINKS),
            }
    return card


def _session(session_id: int) -> VttSession:
    return request_db().get(VttSession, session_id) or abort(404)


def _back(session_id: int, **args: Any):
    return redirect(url_for("host.session_config", session_id=session_id, _anchor="displaced", **args))


def _whole(name: str) -> int | None:
    """A form's whole number (``None``: empty); anything else is 0, which every check refuses."""
    text = request.form.get(name, "").strip()
    if not text:
        return None
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 9 else 0


def _task() -> tuple[str | None, bool, bool]:
    """The form's rounds (``1,3``; empty: every round), whether to add an attention line and whether to offer a
    round cut short."""
    form = request.form
    return form.get("rounds", "").strip()[:200] or None, form.get("attention") == "1", form.get("cut_short") == "1"


def _crowd() -> tuple[IdParams, str | None]:
    """The open-link form's parameter names (a field left out: Prolific's; empty: not read) and completion URL."""
    names = [
        request.form.get(field, default)[:100]
        for field, default in zip(("participant_param", "study_param", "session_param"), DEFAULT_NAMES, strict=True)
    ]
    return IdParams(*names), request.form.get("complete_url", "")[:4000].strip() or None


def _host_message(error: JuryError, vtt_session: VttSession) -> str:
    """A refusal of :mod:`vtt.juries.displaced` in the host's language."""
    if error.code == "bad_count":
        return _("The number of jurors must be from 1 to %(most)s.", most=f"{MAX_CREATED:,}")
    if error.code == "bad_cap":
        return _("The cap must be from 1 to %(most)s jurors, or empty for no cap.", most=f"{MAX_CAP:,}")
    if error.code == "bad_rounds":
        rounds = ", ".join(map(str, judgeable(request_db(), vtt_session)))
        return _("Give round numbers separated by commas, among %(rounds)s (empty: every round).", rounds=rounds)
    if error.code == "cut_short":
        rounds = ", ".join(map(str, cut_short_offerable(request_db(), vtt_session)))
        return _(
            "Round %(rounds)s was cut short (the session stopped before its vote opened): tick the box to offer it.",
            rounds=rounds,
        )
    if error.code == "not_finished":
        return _("This session has not finished: it can be judged again once it has.")
    if error.code == "bad_complete_url":
        return _(
            "The completion URL must be an http:// or https:// address of at most 2,000 characters, without spaces, "
            "a user name or braces, with {code} in its path or query where the completion code goes."
        )
    if error.code == "bad_params":
        return _(
            "The parameter names are up to 40 letters, digits, '.', '_' or '-' each, all different (empty: not read)."
        )
    if error.code == "nothing_to_judge":
        return _("This session has no round with revealed answers: there is nothing to judge.")
    return error.message


@bp.post("/host/sessions/<int:session_id>/displaced/jurors")
@host_required
def make_jurors(session_id: int):
    """N displaced jurors, each with a link of their own; the page then shows the links (and their CSV)."""
    db, vtt_session = request_db(), _session(session_id)
    rounds, attention, cut_short = _task()
    try:
        made = create_jurors(db, vtt_session, _whole("count") or 0, rounds, attention, cut_short=cut_short)
        db.commit()
    except JuryError as error:
        db.rollback()
        flash(_host_message(error, vtt_session), "error")
        return _back(session_id)
    link_id = db.scalar(select(Juror.link_id).where(Juror.token == made[0].token))
    flash(ngettext("%(num)d displaced juror made.", "%(num)d displaced jurors made.", len(made)), "success")
    return _back(session_id, batch=link_id)


@bp.post("/host/sessions/<int:session_id>/displaced/links")
@host_required
def make_open_link(session_id: int):
    """An open displaced link: each arrival gets a juror of their own, up to the cap (empty: no cap)."""
    db, vtt_session = request_db(), _session(session_id)
    rounds, attention, cut_short = _task()
    ids, complete_url = _crowd()
    try:
        link = open_link(
            db, vtt_session, _whole("cap"), rounds, attention, cut_short=cut_short, ids=ids, complete_url=complete_url
        )
        db.commit()
    except JuryError as error:
        db.rollback()
        flash(_host_message(error, vtt_session), "error")
        return _back(session_id)
    flash(_("Open link made: %(url)s", url=f"{join_base_url()}/jury/open/{link.token}"), "success")
    return _back(session_id)


def _link(session_id: int, link_id: int) -> JuryLink:
    link = request_db().get(JuryLink, link_id)
    if link is None or link.session_id != session_id:
        abort(404)
    return link


@bp.post("/host/sessions/<int:session_id>/displaced/links/<int:link_id>/close")
@host_required
def close_open_link(session_id: int, link_id: int):
    """Nobody more arrives at this open link; the jurors it made keep judging."""
    link = _link(session_id, link_id)
    close_link(request_db(), link)
    request_db().commit()
    came = arrivals(request_db(), link.id)
    flash(
        ngettext("Open link closed after %(num)d arrival.", "Open link closed after %(num)d arrivals.", came), "success"
    )
    return _back(session_id)


@bp.get("/host/sessions/<int:session_id>/displaced/links/<int:link_id>/jurors.csv")
@host_required
def links_file(session_id: int, link_id: int):
    """The links of the jurors a batch (or an open link) made, as a CSV for a crowd platform: label, url."""
    link = _link(session_id, link_id)
    code = _session(session_id).join_code
    return Response(
        links_csv(link_jurors(request_db(), link), join_base_url()),
        mimetype="text/csv",
        headers={"Content-Disposition": f'attachment; filename="{code}-displaced-{link.id}.csv"'},
    )
