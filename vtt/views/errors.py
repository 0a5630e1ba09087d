"""Error responses: a styled page in the visitor's language, or ``{"error": {"code", "message"}}`` for JSON clients."""

from __future__ import annotations

import logging
import math
import time
from urllib.parse import urlsplit

from flask import Flask, Response, jsonify, render_template, request
from flask_babel import lazy_gettext as _l
from flask_babel import ngettext
from flask_limiter.errors import RateLimitExceeded
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import HTTPException, InternalServerError

log = logging.getLogger(__name__)

API_PREFIXES = ("/api/",)
# What a person is told for each status; Werkzeug's own descriptions are English only.
MESSAGES = {
    400: (_l("Bad request"), _l("The request could not be understood. Go back, reload the page and try again.")),
    401: (_l("Sign in first"), _l("This page needs you to sign in.")),
    403: (_l("Not allowed"), _l("You are not allowed to open this page.")),
    404: (_l("Page not found"), _l("Nothing is at this address. Check the link, or start again from the home page.")),
    405: (_l("Not allowed here"), _l("This address does not take that kind of request.")),
    413: (_l("File too large"), _l("The file is larger than this server accepts.")),
    # 429's line is replaced by one that says how many seconds to wait (http_error).
    429: (
        _l("Too many attempts"),
        _l("Too many requests from this device in a short time. Wait a minute and try again."),
    ),
    500: (
        _l("Something went wrong"),
        _l(
            "The server hit an error it did not expect. Nothing you typed was lost "
            "on the server side; try again in a moment."
        ),
    ),
}
DEFAULT_RETRY_SECONDS = 60  # a 429 that is not a rate limit's (abort(429)): a minute, as the message says
CSRF_MESSAGE = _l("This form has expired or came from another page. Reload the page and send it again.")


def register_errors(app: Flask) -> None:
    app.register_error_handler(HTTPException, http_error)
    app.register_error_handler(InternalServerError, server_error)


def wants_json() -> bool:
    """A JSON client: a path under an API, a JSON body, or an Accept header that prefers JSON to HTML."""
    if request.path.startswith(API_PREFIXES) or request.is_json:
        return True
    best = request.accept_mimetypes.best_match(["text/html", "application/json"])
    return best == "application/json" and request.accept_mimetypes[best] > request.accept_mimetypes["text/html"]


def error_code(error: HTTPException) -> str:
    """A stable machine name: ``not_found``, ``too_many_requests``, ``csrf_failed`` ..."""
    if isinstance(error, CSRFError):
        return "csrf_failed"
    return (error.name or "error").lower().replace(" ", "_").replace("'", "")


def http_error(error: HTTPException) -> Response | HTTPException:
    if error.code is None or error.code < 400:  # redirects raised as exceptions (RequestRedirect) stay as they are
        return error
    status = error.code
    title, generic = MESSAGES.get(status, (error.name, ""))
    # A view's own description (abort(404, description=...)) says more than the generic line for its status;
    # a rate limit's description is only its rule ("10 per 1 minute"), not for people.
    specific = error.description if error.description != type(error).description else None
    if isinstance(error, RateLimitExceeded):
        specific = None
    message = str(CSRF_MESSAGE if isinstance(error, CSRFError) else specific or generic or error.description)
    retry_after = again_url = None
    if status == 429:
        retry_after = retry_seconds(error)
        message = specific or ngettext(
            "Too many attempts from this device in a short time. Try again in %(num)d second.",
            "Too many attempts from this device in a short time. Try again in %(num)d seconds.",
            retry_after,
        )
        again_url = form_page() if request.method != "GET" else None
    if wants_json():
        response = jsonify(
            error={
                "code": error_code(error),
                "message": message,
                **({"retry_after": retry_after} if retry_after else {}),
            }
        )
    else:
        response = Response(
            render_template("errors/error.html", status=status, title=title, message=message, again_url=again_url),
            mimetype="text/html",
        )
    response.status_code = status
    # Allow (405), Retry-After (429), WWW-Authenticate (401) ... keep their meaning.
    response.headers.extend((name, value) for name, value in error.get_headers() if name.lower() != "content-type")
    if retry_after:
        response.headers["Retry-After"] = str(retry_after)  # seconds, the same number the page gives
    return response


def retry_seconds(error: HTTPException) -> int:
    """Whole seconds until the refused request would be taken again (at least 1)."""
    if isinstance(error, RateLimitExceeded):
        from ..extensions import limiter

        limit = limiter.current_limit  # the breached limit of this request
        if limit is not None:
            try:
                return max(1, math.ceil(limit.window[0] - time.time()))  # window: (reset time, remaining)
            except Exception:
                log.exception("the rate limit's reset time could not be read")
    given = getattr(error, "retry_after", None)  # abort(429, retry_after=...)
    if isinstance(given, int) and given > 0:
        return given
    return DEFAULT_RETRY_SECONDS


def form_page() -> str:
    """The refused form's own page (a GET of the same address is never limited): path and query, this site."""
    parts = urlsplit(request.url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def server_error(error: InternalServerError) -> Response:
    try:
        return http_error(error)
    except Exception:
        log.exception("the error page could not be rendered")
        return Response("500 Internal Server Error", status=500, mimetype="text/plain")
