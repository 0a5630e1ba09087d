"""What every HTTP answer carries for the browser's protection, and the reverse proxy in front (if any).

* Security headers on every response (``after_request``): a Content-Security-Policy that lets pages run only
  this server's own scripts, no framing, no Referer to other sites (player and juror links carry their token in
  the URL), no MIME sniffing.  A view that sets one of these headers itself keeps its own value.
* Cookies get ``Secure`` whenever the request came over HTTPS (directly, or through a trusted proxy): every
  ``Set-Cookie`` of the answer, the session's and the language's alike (a WSGI wrapper, so the session cookie,
  written after the ``after_request`` functions, is covered too).
* ``VTT_TRUSTED_PROXIES`` (``TRUSTED_PROXIES``): how many reverse proxies stand in front.  Only then are their
  X-Forwarded-For/-Proto/-Host believed (werkzeug's ProxyFix); with none, anyone could claim any address or
  scheme.  With it, the client address the rate limits count by (flask_limiter's ``get_remote_address``, i.e.
  ``request.remote_addr``) is the real visitor's, not the proxy's: one address for the whole world otherwise.
"""

from __future__ import annotations

import re

from flask import Flask, Response, abort, request
from flask_babel import gettext as _
from werkzeug.middleware.proxy_fix import ProxyFix

# A host as the Host header may name it: letters, digits, dots, dashes, a port, an IPv6 literal.
_HOST = re.compile(r"[A-Za-z0-9.\-]+(:\d+)?|\[[0-9A-Fa-f:.]+\](:\d+)?")


def content_security_policy(host: str | None = None) -> str:
    """The policy of every page.

    Scripts and style sheets only from this server (the pages have no inline script; JSON boot data sits in
    ``<script type="application/json">``, which is data, not script); no inline style either (scripts size
    things through the CSSOM, which a policy does not govern).  Clips are this server's (``/media/``) or online
    (http/https URLs in a bank are allowed: see ``vtt media check``), never run as script.  Socket.IO connects to
    this same host: ``'self'`` covers ws/wss in current browsers; the explicit ``ws://host wss://host`` is for
    older Safari.
    """
    connect = ["'self'"]
    if host and _HOST.fullmatch(host):
        connect += [f"ws://{host}", f"wss://{host}"]
    return "; ".join(
        [
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self'",
            "img-src 'self' data: blob:",
            "media-src 'self' blob: https: http:",
            "font-src 'self'",
            f"connect-src {' '.join(connect)}",
            "object-src 'none'",
            "base-uri 'self'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        ]
    )


def security_headers(response: Response) -> Response:
    headers = response.headers
    headers.setdefault("Content-Security-Policy", content_security_policy(request.host))
    headers.setdefault("X-Frame-Options", "DENY")  # frame-ancestors for browsers without CSP 2
    headers.setdefault("Referrer-Policy", "same-origin")  # join links carry tokens: never a Referer to others
    headers.setdefault("X-Content-Type-Options", "nosniff")
    return response


class SecureCookies:
    """WSGI wrapper: on an HTTPS request every ``Set-Cookie`` of the answer gets ``Secure``.

    SESSION_COOKIE_SECURE is one value for all requests, but the same install is opened over plain HTTP on the
    venue's LAN and over HTTPS behind a proxy; the scheme of each request decides.  Behind a proxy the scheme is
    the one ProxyFix restored (ProxyFix wraps this, so it has run first).
    """

    def __init__(self, wsgi_app):
        self.wsgi_app = wsgi_app

    def __call__(self, environ, start_response):
        if environ.get("wsgi.url_scheme") != "https":
            return self.wsgi_app(environ, start_response)

        def secure_start_response(status, headers, exc_info=None):
            return start_response(
                status,
                [(name, secure_cookie(value) if name.lower() == "set-cookie" else value) for name, value in headers],
                exc_info,
            )

        return self.wsgi_app(environ, secure_start_response)


def secure_cookie(value: str) -> str:
    attributes = {part.strip().lower() for part in value.split(";")[1:]}
    return value if "secure" in attributes else f"{value}; Secure"


def trusted_proxies(app: Flask) -> int:
    return int(app.config.get("TRUSTED_PROXIES") or 0)


def refuse_unstorable_input() -> None:
    """A form field, query value or file name the database could not keep (a NUL: PostgreSQL refuses it in text)
    is refused here, for every form at once, before any view writes half of it.  (Werkzeug decodes invalid UTF-8
    to U+FFFD, so no lone surrogate arrives this way.)"""
    fields = [*request.args.items(multi=True), *request.form.items(multi=True)]
    fields += [(name, upload.filename or "") for name, upload in request.files.items(multi=True)]
    for name, value in fields:
        name, value = name or "", value or ""  # a multipart part may come without a name
        if "\x00" in name or "\x00" in value:
            abort(
                400,
                description=_(
                    "The field %(field)s contains a NUL character, which cannot be stored.",
                    field=name.replace("\x00", "\\0"),
                ),
            )


def init_app(app: Flask) -> None:
    """Call after the other extensions (Flask-SocketIO wraps ``wsgi_app`` too): these wrappers go outermost."""
    app.before_request(refuse_unstorable_input)
    app.after_request(security_headers)
    app.wsgi_app = SecureCookies(app.wsgi_app)
    proxies = trusted_proxies(app)
    if proxies > 0:
        # Each of the n proxies appends to X-Forwarded-*; the nth value from the right is the one the outermost
        # trusted proxy saw.  Only then does request.remote_addr (and so the rate limits' key) become the client's.
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=proxies, x_proto=proxies, x_host=proxies)
