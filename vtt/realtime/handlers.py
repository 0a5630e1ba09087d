"""Socket.IO handlers: validate -> submit to the writer -> acknowledge after the commit.

Every handler is registered on the python-socketio server directly by :func:`attach`: none needs a
Flask request context (``connect`` opens one only to read a host's login cookie), and building one
per message cost a fifth of a loaded server's CPU.  Client actions: ``answer``
(players), ``agent`` (AI players' status reports), ``notice`` (a read-aloud page's word on its
voice), ``sheet`` and ``vote`` (jurors), ``host`` (the host's moves), ``snapshot`` and ``clock``
(anyone).
See ``docs/protocol.md``.
"""

from __future__ import annotations

import logging
from contextlib import nullcontext
from datetime import UTC, datetime
from typing import Any

from flask import Flask
from flask import session as cookie  # Flask's signed cookie
from socketio import exceptions

from ..access.admission import door_code, door_expires
from ..access.host_token import is_host_token
from ..engine.actions import SERVER_ERROR, Refusal
from ..engine.audiences import protocol_timestamp
from ..engine.rules import client_events
from ..protocol.messages import Auth, Invalid, parse, parse_action
from ..protocol.replies import error_message, result_message
from .hub import Hub
from .outbox import person_room, room
from .packets import MALFORMED, Malformed

log = logging.getLogger(__name__)


NOT_CONNECTED = ("not_connected", "connect with a token or code first")


def connection_refused(error: dict[str, str]) -> exceptions.ConnectionRefusedError:
    """The refusal a client's ``connect_error`` receives: ``{message, data: {code, message}}``.

    socket.io-client (JavaScript) gives a handler ``err.message`` and ``err.data`` (the packet's ``data``);
    python-socketio's client gives the whole object.  Both read ``data.code``.  (python-socketio's exception
    class: the builtin one reaches the client as "Connection refused by server".)
    """
    refusal = exceptions.ConnectionRefusedError()
    refusal.error_args = {"message": error["message"], "data": error}
    return refusal


def connect_handler(server, hub: Hub, app: Flask):
    """``connect``, on python-socketio's server directly: a Flask request context is opened only for a host
    connecting with the console's login cookie (thousands of jurors connect at once; a context each cost as much
    as their token lookup)."""
    config = app.config

    def on_connect(sid: str, environ: dict[str, Any], auth: Any = None) -> None:
        try:
            if isinstance(auth, Malformed):
                raise Invalid(f"the connect frame cannot be read: {auth.reason}")
            given = parse(Auth, auth or {})
            is_host = given.role in ("host", "stage") and (  # the host's login opens the stage too
                is_host_token(given.host_token, config["SECRET_KEY"], config["HOST_PASSWORD"])
                or signed_in_host(app, environ)
            )
            # An open join is counted against the join rates, kept by the app's Flask-Limiter: in its app context.
            joining = given.code is not None and given.role not in ("host", "stage")
            with app.app_context() if joining else nullcontext():
                who = hub.authenticate(given, is_host, environ.get("REMOTE_ADDR", ""))
        except (Invalid, Refusal) as refusal:
            raise connection_refused(refusal.as_error()) from None
        hub.arrive(sid, who)
        server.enter_room(sid, room(who.session_id, who.role))  # before the snapshot is read: nothing between
        if who.actor_id is not None:
            server.enter_room(sid, person_room(who.session_id, who.role, who.actor_id))  # their other tabs (``mine``)
        hub.send_snapshot(sid, who)
        hub.presence_changed(who.session_id)

    return on_connect


def signed_in_host(app: Flask, environ: dict[str, Any]) -> bool:
    """Whether the handshake carries the host console's login cookie (Flask's signed session)."""
    if "HTTP_COOKIE" not in environ:
        return False
    with app.request_context(environ):
        return bool(cookie.get("host"))


def attach(server, hub: Hub, app: Flask) -> None:
    """Register ``connect``, ``disconnect``, the client actions, ``snapshot`` and the catch-all on ``server``
    (python-socketio's)."""

    events = client_events()  # the events that carry the declared actions

    def on_disconnect(sid: str, *_reason: Any) -> None:
        who = hub.depart(sid)
        if who is not None:
            hub.presence_changed(who.session_id)

    def on_snapshot(sid: str, _data: Any = None) -> dict[str, Any]:
        who = hub.connections.get(sid)
        if who is None:
            return error_message(*NOT_CONNECTED)
        return hub.outbox.record_ack(sid, who.role, "snapshot", result_message(snapshot=hub.snapshot(who)))

    def on_clock(sid: str, _data: Any = None) -> dict[str, Any]:
        """The server's time, for a page to find its clock's offset (a screening starts at a server moment)."""
        who = hub.connections.get(sid)
        if who is None:
            return error_message(*NOT_CONNECTED)
        now = protocol_timestamp(datetime.now(UTC), "milliseconds")
        return hub.outbox.record_ack(sid, who.role, "clock", result_message(now=now))

    def on_door(sid: str, _data: Any = None) -> dict[str, Any]:
        """The open join's door code now and when it changes: for the host and a stage opened with its key."""
        who = hub.connections.get(sid)
        if who is None:
            return error_message(*NOT_CONNECTED)
        if not who.sees_door:
            return error_message(
                "not_allowed", "only the host and the stage screen (opened with its key) see the door code"
            )
        reply = result_message(
            door=door_code(hub.secret_key, who.session_id),
            changes_at=protocol_timestamp(datetime.fromtimestamp(door_expires(), UTC)),
        )
        return hub.outbox.record_ack(sid, who.role, "door", reply)

    def action_handler(event: str):
        def handle(sid: str, data: Any = None) -> dict[str, Any]:
            who = hub.connections.get(sid)
            if who is None:
                return error_message(*NOT_CONNECTED)
            try:
                action, fields, client_id = parse_action(event, data)
            except Invalid as invalid:
                reply = error_message(**invalid.as_error())
            else:
                try:
                    reply = hub.submit(who, action, fields, client_id)
                except Exception:
                    log.exception("%s from %s failed", event, who)
                    reply = error_message(*SERVER_ERROR)
            return hub.outbox.record_ack(sid, who.role, event, reply)

        return handle

    def on_malformed(sid: str, reason: Any = None, acked: Any = False) -> dict[str, Any]:
        """A packet that could not be read (``vtt.realtime.packets``): refused alone, one line in the log; a
        client that asked for no answer is disconnected (every action of the protocol asks for one)."""
        log.warning("a packet from %s could not be read: %s", hub.connections.get(sid, sid), reason)
        if acked is not True:
            server.disconnect(sid)
        return error_message("malformed", f"this message cannot be read: {reason}")

    def on_unknown(event: str, _sid: str, *_data: Any) -> dict[str, Any]:
        known = ", ".join(["snapshot", "clock", "door", *events])
        return error_message("unknown_event", f"there is no event {event!r}; the events are {known}")

    server.on("connect", connect_handler(server, hub, app))
    server.on("disconnect", on_disconnect)
    server.on("snapshot", on_snapshot)
    server.on("clock", on_clock)
    server.on("door", on_door)
    server.on(MALFORMED, on_malformed)
    for event in events:
        server.on(event, action_handler(event))
    server.on("*", on_unknown)
