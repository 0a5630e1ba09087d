"""Where a model is: an endpoint's address as an option gives it, the endpoint the call goes to, and the address
without credentials (what is shown and recorded: provenance, logs, error messages)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

CHAT = "/chat/completions"
TRANSCRIPTIONS = "/audio/transcriptions"


class EndpointError(ValueError):
    """An endpoint or a model that cannot be used: ``setting`` says which (``endpoint``, ``model``, ``timeout``,
    ``concurrency``), ``message`` why.  Each caller names the setting in its own words (the command line its option,
    a form its field): the message names none."""

    def __init__(self, message: str, setting: str):
        super().__init__(message)
        self.message, self.setting = message, setting


def is_http_url(url: str) -> bool:
    """Whether ``url`` is an http:// or https:// address with a host."""
    return re.match(r"^https?://[^/\s]+", url or "") is not None


def chat_endpoint(url: str) -> str:
    """The chat-completions endpoint of ``url``: ``/chat/completions`` added unless it ends so."""
    url = url.rstrip("/")
    return url if url.endswith(CHAT) else f"{url}{CHAT}"


def transcriptions_endpoint(url: str) -> str:
    """The transcriptions endpoint of ``url``: the server's root gets ``/v1/audio/transcriptions``, any other
    path (``/v1``, ``/openai/v1``) ``/audio/transcriptions``, unless it already ends so.  A query is kept."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    if not path.endswith(TRANSCRIPTIONS):
        path = f"{path or '/v1'}{TRANSCRIPTIONS}"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def chat_url(spec: str | None) -> str | None:
    """The http:// or https:// address a judge's or juror's endpoint gives (``http:URL``, the agents' spelling, or a
    bare URL); None when it gives none."""
    spec = spec or ""
    url = spec[5:] if spec.startswith("http:") and not spec.startswith("http://") else spec
    return url if is_http_url(url) else None


def chat_target(spec: str | None, model: str | None) -> tuple[str, str]:
    """The chat-completions endpoint and the model a judge's or juror's settings give; EndpointError (saying which
    setting) otherwise."""
    url = chat_url(spec)
    if url is None:
        raise EndpointError(f"{spec!r} is not http:URL (an http:// or https:// chat-completions endpoint)", "endpoint")
    model = (model or "").strip()
    if not model:
        raise EndpointError("name the model the endpoint serves", "model")
    return chat_endpoint(url), model


def public_url(url: str) -> str:
    """The URL without credentials or a query (what is shown and recorded)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
