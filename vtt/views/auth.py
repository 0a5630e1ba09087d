"""Host login: one password per installation (see ``vtt.config``), kept in the signed cookie session."""

from __future__ import annotations

import functools
import hmac

from flask import Blueprint, current_app, flash, redirect, render_template, request, session, url_for
from flask_babel import gettext as _

from ..extensions import limiter

bp = Blueprint("auth", __name__, url_prefix="/host")
LOGIN_LIMIT = "10 per minute"  # password guesses per address


def host_required(view):
    @functools.wraps(view)
    def wrapped(*args, **kwargs):
        if not session.get("host"):
            return redirect(url_for("auth.login", next=request.full_path.rstrip("?")))
        return view(*args, **kwargs)
    return wrapped


@bp.app_context_processor
def inject_host() -> dict:
    return {"is_host": bool(session.get("host"))}


@bp.route("/login", methods=["GET", "POST"])
@limiter.limit(LOGIN_LIMIT, methods=["POST"])
def login():
    error = None
    if request.method == "POST":
        given = request.form.get("password", "")
        if given and hmac.compare_digest(given.encode(), current_app.config["HOST_PASSWORD"].encode()):
            session.clear()
            session["host"] = True
            session.permanent = True
            target = request.args.get("next", "")
            # Only local paths: an open redirect would let a link send the host elsewhere.
            if not target.startswith("/") or target.startswith("//"):
                target = url_for("host.dashboard")
            return redirect(target)
        error = _("Wrong password.") if given else _("Enter the host password.")
    return render_template("auth/login.html", error=error), (401 if error else 200)


@bp.post("/logout")
def logout():
    session.clear()
    flash(_("Signed out."), "info")
    return redirect(url_for("auth.login"))
