"""Socket.IO handlers: validate -> submit to the writer -> acknowledge after the commit.

Registered once on the process's SocketIO object; each handler finds its app's :class:`Live`
through ``current_app``.  Client actions: ``answer`` (players), ``sheet`` and ``vote`` (jurors),
``host`` (the host's moves), ``snapshot`` (anyone).  See ``docs/protocol.md``.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import current_app, request
from flask import session as http_session
from flask_socketio import join_room

from ..engine.rules import Refusal
from ..extensions import socketio
from .live import Live
from .outbox import room
from .schemas import CLIENT_MESSAGES, Auth, Invalid, parse

log = logging.getLogger(__name__)


def _live() -> Live:
    return current_app.extensions["vtt.live"]


def _error(code: str, message: str) -> dict[str, Any]:
    return {"ok": False, "error": {"code": code, "message": message}}


@socketio.on("connect")
def on_connect(auth: Any = None) -> None:
    live = _live()
    try:
        who = live.authenticate(parse(Auth, auth or {}), bool(http_session.get("host")))
    except (Invalid, Refusal) as refused:
        # The client's connect_error carries {code, message}; the connection is refused, not dropped silently.
        raise ConnectionRefusedError(refused.as_error()) from None
    live.connections[request.sid] = who
    join_room(room(who.session_id, who.role))  # before the snapshot is read: nothing falls between them
    live.outbox.to_connection(request.sid, who.role, "snapshot", live.snapshot(who))


@socketio.on("disconnect")
def on_disconnect(*_reason: Any) -> None:
    _live().connections.pop(request.sid, None)


@socketio.on("snapshot")
def on_snapshot(_data: Any = None) -> dict[str, Any]:
    live = _live()
    who = live.connections.get(request.sid)
    if who is None:
        return _error("not_connected", "connect with a token or code first")
    return live.outbox.record_ack(request.sid, who.role, "snapshot", {"ok": True, "snapshot": live.snapshot(who)})


def _action_handler(event: str):
    schema = CLIENT_MESSAGES[event]

    def handle(data: Any = None) -> dict[str, Any]:
        live = _live()
        who = live.connections.get(request.sid)
        if who is None:
            return _error("not_connected", "connect with a token or code first")
        try:
            message = parse(schema, data)
        except Invalid as invalid:
            reply = {"ok": False, "error": invalid.as_error()}
        else:
            fields = message.model_dump(exclude={"id", "action"})
            name = getattr(message, "action", event)
            try:
                reply = live.submit(who, name, fields, message.id)
            except Exception:  # noqa: BLE001 - a client gets an error, never a dropped connection
                log.exception("%s from %s failed", event, who)
                reply = _error("server_error", "the server could not handle this; try again")
        return live.outbox.record_ack(request.sid, who.role, event, reply)

    handle.__name__ = f"on_{event}"
    return handle


for _event in CLIENT_MESSAGES:
    socketio.on_event(_event, _action_handler(_event))


@socketio.on("*")
def on_unknown(event: str, *_data: Any) -> dict[str, Any]:
    known = ", ".join(["snapshot", *CLIENT_MESSAGES])
    return _error("unknown_event", f"there is no event {event!r}; the events are {known}")
