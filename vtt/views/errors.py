"""Error responses: a styled page in the visitor's language, or ``{"error": {"code", "message"}}`` for JSON clients."""

from __future__ import annotations

import logging

from flask import Flask, Response, jsonify, render_template, request
from flask_babel import lazy_gettext as _l
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
    429: (_l("Too many attempts"), _l("Too many requests from this device in a short time. Wait a minute and try "
                                      "again.")),
    500: (_l("Something went wrong"), _l("The server hit an error it did not expect. Nothing you typed was lost "
                                         "on the server side; try again in a moment.")),
}
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
    # A view's own description (abort(404, description=...)) says more than the generic line for its status.
    specific = error.description if error.description != type(error).description else None
    message = str(CSRF_MESSAGE if isinstance(error, CSRFError) else specific or generic or error.description)
    if wants_json():
        response = jsonify(error={"code": error_code(error), "message": message})
    else:
        response = Response(render_template("errors/error.html", status=status, title=title, message=message),
                            mimetype="text/html")
    response.status_code = status
    # Allow (405), Retry-After (429), WWW-Authenticate (401) ... keep their meaning.
    response.headers.extend((name, value) for name, value in error.get_headers() if name.lower() != "content-type")
    return response


def server_error(error: InternalServerError) -> Response:
    try:
        return http_error(error)
    except Exception:  # noqa: BLE001 - the page itself failed (a broken database, a template): plain text then
        log.exception("the error page could not be rendered")
        return Response("500 Internal Server Error", status=500, mimetype="text/plain")
