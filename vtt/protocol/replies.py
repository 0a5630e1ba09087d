"""The one place an acknowledgement is built: every reply to a client's event is one of these two shapes.

``docs/protocol.md`` ("Actions and acknowledgements") describes them: ``{"ok": true, ...}`` with what the event
answers, or ``{"ok": false, "error": {"code", "message"}}`` (and the ``state_version`` the refusal was judged at,
when there is one).
"""

from __future__ import annotations

from typing import Any


def result_message(**fields: Any) -> dict[str, Any]:
    """An accepted event's reply: ``ok`` and whatever the event answers (``state_version``, ``snapshot``...)."""
    return {"ok": True, **fields}


def error_message(code: str, message: str, state_version: int | None = None) -> dict[str, Any]:
    """A refused event's reply: ``code`` for programs, ``message`` for people."""
    reply: dict[str, Any] = {"ok": False, "error": {"code": code, "message": message}}
    if state_version is not None:
        reply["state_version"] = state_version
    return reply
