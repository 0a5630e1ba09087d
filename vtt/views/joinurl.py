"""The address phones on the venue's network open: what every player's and juror's link starts with.

In order: the one the host set on this console (kept in the host's signed cookie session), VTT_BASE_URL,
the machine's LAN address when the server listens on all interfaces (``make run HOST=0.0.0.0``), the
address the server was started on, and last the address this page was asked for.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

from flask import current_app, request
from flask import session as cookie  # Flask's signed cookie; 'session' means a VTT session

from .. import netaddr

CONSOLE_KEY = "join_base_url"
URL_SHAPE = re.compile(r"https?://[^/\s?#]+(/[^\s?#]*)?")


def join_base_url() -> str:
    chosen = cookie.get(CONSOLE_KEY)
    if chosen:
        return chosen
    configured = current_app.config.get("BASE_URL")
    if configured:
        return configured.rstrip("/")
    served_on = current_app.config.get("SERVE_HOST")
    if served_on is not None:
        return netaddr.base_url(served_on, current_app.config["SERVE_PORT"])
    return request.url_root.rstrip("/")


def valid_base_url(text: str) -> str | None:
    """``text`` as a base URL (no trailing slash), or None when it is not an http(s) address."""
    text = text.strip().rstrip("/")
    return text if URL_SHAPE.fullmatch(text) and len(text) <= 300 else None


def set_console_base_url(url: str | None) -> None:
    """Use ``url`` on this console from now on; None goes back to the configured or derived one."""
    if url:
        cookie[CONSOLE_KEY] = url
    else:
        cookie.pop(CONSOLE_KEY, None)


def only_this_machine(url: str) -> bool:
    """True when phones cannot open ``url``: it names this machine's loopback (localhost, 127.x, ::1)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
