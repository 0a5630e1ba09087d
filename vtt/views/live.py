"""The live pages: a player's, a juror's (and the open join that makes one), the stage screen, the host's console.

Each page is a client of the Socket.IO protocol like any other (``static/js/live.js``); these views only
check the link and hand the page what it needs to connect.  Nothing is created by opening a link: an open
join makes a juror only when the person presses join (chat apps fetch links to preview them).
"""

from __future__ import annotations

import io
from pathlib import Path

import qrcode
import qrcode.image.svg
from flask import Blueprint, Response, abort, current_app, redirect, render_template, request, send_from_directory, url_for
from flask_babel import gettext as _
from sqlalchemy import select
from werkzeug.security import safe_join

from ..extensions import db, limiter
from ..models import Juror, Player, VttSession
from ..realtime.live import Identity
from .auth import host_required
from .joinurl import join_base_url

bp = Blueprint("live", __name__)

JOIN_LIMIT = "20 per minute"  # open joins per address: a venue shares one address, a script does not get far


def _session_by_code(code: str) -> VttSession:
    found = db.session.scalar(select(VttSession).where(VttSession.join_code == code.strip().upper()))
    return found or abort(404, description=_("No session has the code %(code)s.", code=code))


@bp.get("/play/<token>")
def player_page(token: str):
    return _person_page(Player, token, "live/play.html",
                        _("This player link is not valid. Ask the host for yours."))


@bp.get("/jury/<token>")
def juror_page(token: str):
    return _person_page(Juror, token, "live/jury.html",
                        _("This juror link is not valid. Ask the host for yours."))


def _person_page(model: type[Player] | type[Juror], token: str, template: str, invalid: str):
    """A player's or juror's own page: the token is checked here and again by the socket's auth."""
    person = db.session.scalar(select(model).where(model.token == token))
    if person is None:
        abort(404, description=invalid)
    return render_template(template, auth={"token": token}, key=token, title=person.session.name)


@bp.route("/join/<code>", methods=["GET", "POST"])
@limiter.limit(JOIN_LIMIT, methods=["POST"])
def join(code: str):
    vtt_session = _session_by_code(code)
    error = None
    if request.method == "POST":
        nickname = request.form.get("nickname", "").strip()
        if not nickname:
            error = _("Enter a nickname.")
        elif len(nickname) > 30:
            error = _("A nickname has at most 30 characters.")
        else:
            reply = current_app.extensions["vtt.live"].submit(Identity("guest", vtt_session.id), "join",
                                                               {"nickname": nickname}, None)
            if reply.get("ok"):
                return redirect(url_for("live.juror_page", token=reply["token"]))
            error = reply["error"]["message"]
    elif not vtt_session.open_join:
        error = _("This session does not take open joins now. Ask the host for a juror link.")
    return render_template("live/join.html", s=vtt_session, error=error), (400 if error and request.method == "POST"
                                                                          else 200)


@bp.get("/stage/<code>")
def stage(code: str):
    vtt_session = _session_by_code(code)
    return render_template("live/stage.html", s=vtt_session, join_url=f"{join_base_url()}/join/{vtt_session.join_code}")


@bp.get("/stage/<code>/join-qr.svg")
def join_qr(code: str):
    """The open join link as a QR code (SVG), for the stage screen's lobby."""
    vtt_session = _session_by_code(code)
    image = qrcode.make(f"{join_base_url()}/join/{vtt_session.join_code}", image_factory=qrcode.image.svg.SvgPathImage,
                        box_size=12, border=2)
    buffer = io.BytesIO()
    image.save(buffer)
    return Response(buffer.getvalue(), mimetype="image/svg+xml")


@bp.get("/host/sessions/<int:session_id>/live")
@host_required
def host_console(session_id: int):
    vtt_session = db.session.get(VttSession, session_id) or abort(404)
    return render_template("live/host.html", s=vtt_session, auth={"code": vtt_session.join_code, "role": "host"},
                           stage_url=url_for("live.stage", code=vtt_session.join_code))


@bp.get("/media/<path:name>")
def media(name: str):
    """A clip from the media folder (VTT_MEDIA_DIR), with byte ranges so the player can seek to a span."""
    folder = Path(current_app.config["MEDIA_DIR"])
    if safe_join(str(folder), name) is None:
        abort(404)
    return send_from_directory(folder, name, conditional=True)
