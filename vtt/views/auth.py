"""Host login: one password per installation (see ``vtt.config``), kept in the signed cookie session."""

from __future__ import annotations

import functools
import hmac
import secrets

from flask import Blueprint, abort, current_app, flash, redirect, render_template, request, session, url_for

bp = Blueprint("auth", __name__, url_prefix="/host")


def csrf_token() -> str:
    if "csrf" not in session:
        session["csrf"] = secrets.token_urlsafe(24)
    return session["csrf"]


def check_csrf() -> None:
    sent, expected = request.form.get("csrf", ""), session.get("csrf", "")
    if not (sent and expected and hmac.compare_digest(sent, expected)):
        abort(400, description="The form expired or did not come from this site; reload the page and try again.")


def host_required(view):
    @functools.wraps(view)
    def wrapped(*args, **kwargs):
        if not session.get("host"):
            return redirect(url_for("auth.login", next=request.full_path.rstrip("?")))
        return view(*args, **kwargs)
    return wrapped


@bp.app_context_processor
def inject_csrf() -> dict:
    return {"csrf_token": csrf_token, "is_host": bool(session.get("host"))}


@bp.route("/login", methods=["GET", "POST"])
def login():
    error = None
    if request.method == "POST":
        check_csrf()
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
        error = "Wrong password." if given else "Enter the host password."
    return render_template("auth/login.html", error=error), (401 if error else 200)


@bp.post("/logout")
def logout():
    check_csrf()
    session.clear()
    flash("Signed out.")
    return redirect(url_for("auth.login"))
