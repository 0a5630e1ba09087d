"""Host login: one password per installation (see ``vtt.config``), kept in the signed cookie session."""

from __future__ import annotations

import functools
import hmac
from urllib.parse import urlsplit

from flask import Blueprint, current_app, flash, redirect, render_template, request, url_for
from flask import session as cookie  # Flask's signed cookie; 'session' means a VTT session
from flask_babel import gettext as _

from ..extensions import limiter

bp = Blueprint("auth", __name__, url_prefix="/host")
# Wrong passwords per client address (the right one never counts).  The address is request.remote_addr: behind a
# reverse proxy it is the real client's only with VTT_TRUSTED_PROXIES set (vtt.access.web_guard), else the proxy's.
LOGIN_LIMIT = "10 per minute"


def failed_login(response) -> bool:
    """Only a refused password counts against the limit: a host signing in on several devices is not locked out."""
    return response.status_code == 401


def local_path(target: str) -> str | None:
    r"""``target`` if it is a path on this site, else None (an open redirect would let a link send the host away).

    Browsers drop tabs and line breaks from a URL and read a backslash as a slash, so ``/\t/evil.example`` and
    ``/\evil.example`` both go to evil.example: anything with a control character, whitespace or a backslash is
    refused outright, and so is anything with a scheme or a host, or starting with ``//``.
    """
    if not target.startswith("/") or target.startswith(("//", "/\\")):
        return None
    if any(ord(char) < 0x20 or ord(char) == 0x7F or char.isspace() or char == "\\" for char in target):
        return None
    parts = urlsplit(target)
    if parts.scheme or parts.netloc:
        return None
    return target


def host_required(view):
    @functools.wraps(view)
    def wrapped(*args, **kwargs):
        if not cookie.get("host"):
            return redirect(url_for("auth.login", next=request.full_path.rstrip("?")))
        return view(*args, **kwargs)

    return wrapped


@bp.app_context_processor
def inject_host() -> dict:
    return {"is_host": bool(cookie.get("host"))}


@bp.route("/login", methods=["GET", "POST"])
@limiter.limit(LOGIN_LIMIT, methods=["POST"], deduct_when=failed_login)
def login():
    error = None
    if request.method == "POST":
        given = request.form.get("password", "")
        if given and hmac.compare_digest(given.encode(), current_app.config["HOST_PASSWORD"].encode()):
            cookie.clear()
            cookie["host"] = True
            cookie.permanent = True
            return redirect(local_path(request.args.get("next", "")) or url_for("host.dashboard"))
        error = _("Wrong password.") if given else _("Enter the host password.")
    return render_template("auth/login.html", error=error), (401 if error else 200)


@bp.post("/logout")
def logout():
    cookie.clear()
    flash(_("Signed out."), "info")
    return redirect(url_for("auth.login"))
