"""A displaced jury's pages: a displaced juror's own page, the open link that makes one, and the host's card on the
session page (jurors made with their links as CSV, open links and their closing, how many have finished).

The rules and the writing are :mod:`vtt.juries.displaced`'s; these views validate, call it, commit and respond.
Nothing is made by opening a link: an open link makes a juror only when the person presses Start (chat apps and
crowd platforms fetch links to preview them).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, abort, current_app, flash, redirect, render_template, request, url_for
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
    is_batch,
    judgeable,
    link_jurors,
    links_csv,
    open_link,
    progress,
)
from ..models import Juror, JuryLink, SessionStatus, VttSession
from .auth import host_required
from .joinurl import join_base_url

bp = Blueprint("juries", __name__)

SHOWN_LINKS = 100  # the links of a batch just made, on the session page (all of them: the CSV)

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
    return render_template(
        "live/displaced.html",
        auth={"token": juror.token},
        key=juror.token,
        route=session_route(current_app.config["SECRET_KEY"], juror.session_id),  # never the join code
        title=juror.session.name,
        finished=finished,
        removed=juror.removed_at is not None,
    )


# --- the open link -----------------------------------------------------------------------------------------------


@bp.route("/jury/open/<token>", methods=["GET", "POST"])
def open_link_page(token: str):
    """An open displaced link: what judging is, and Start (a POST: each press makes a juror of their own)."""
    db = request_db()
    link = db.scalar(select(JuryLink).where(JuryLink.token == token[:64]))
    try:
        check_link(db, link)
    except JuryError as error:
        return _refused_link(error)
    if request.method == "POST":
        try:
            admit_arrival(get_remote_address())
        except Refusal:
            message = _("Too many people started from your network just now. Try again in a minute.")
            return _open_page(link, error=message), 429, {"Retry-After": "60"}
        try:
            made = arrive(db, link.token)
            db.commit()
        except JuryError as error:  # filled or closed meanwhile
            db.rollback()
            return _refused_link(error)
        return redirect(url_for("live.juror_page", token=made.token))
    return _open_page(link)


def _open_page(link: JuryLink, error: str | None = None):
    vtt_session = request_db().get(VttSession, link.session_id)
    rounds = len(link.rounds) if link.rounds else len(judgeable(request_db(), vtt_session))
    return render_template("live/displaced_open.html", s=vtt_session, rounds=rounds, error=error, refused=False)


def _refused_link(error: JuryError):
    message, status = LINK_REFUSALS.get(error.code, (error.message, 409))
    return render_template("live/displaced_open.html", s=None, rounds=0, error=str(message), refused=True), status


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


def _task() -> tuple[str | None, bool]:
    """The form's rounds (``1,3``; empty: every round) and whether to add an attention line."""
    return request.form.get("rounds", "").strip()[:200] or None, request.form.get("attention") == "1"


def _host_message(error: JuryError, vtt_session: VttSession) -> str:
    """A refusal of :mod:`vtt.juries.displaced` in the host's language."""
    if error.code == "bad_count":
        return _("The number of jurors must be from 1 to %(most)s.", most=f"{MAX_CREATED:,}")
    if error.code == "bad_cap":
        return _("The cap must be from 1 to %(most)s jurors, or empty for no cap.", most=f"{MAX_CAP:,}")
    if error.code == "bad_rounds":
        rounds = ", ".join(map(str, judgeable(request_db(), vtt_session)))
        return _("Give round numbers separated by commas, among %(rounds)s (empty: every round).", rounds=rounds)
    if error.code == "not_finished":
        return _("This session has not finished: it can be judged again once it has.")
    if error.code == "nothing_to_judge":
        return _("This session has no round with revealed answers: there is nothing to judge.")
    return error.message


@bp.post("/host/sessions/<int:session_id>/displaced/jurors")
@host_required
def make_jurors(session_id: int):
    """N displaced jurors, each with a link of their own; the page then shows the links (and their CSV)."""
    db, vtt_session = request_db(), _session(session_id)
    rounds, attention = _task()
    try:
        made = create_jurors(db, vtt_session, _whole("count") or 0, rounds, attention)
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
    rounds, attention = _task()
    try:
        link = open_link(db, vtt_session, _whole("cap"), rounds, attention)
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
