"""Every message the server sends goes out here: to a room or one connection, and to the audit log.

``vtt serve --audit-log FILE`` (or ``VTT_AUDIT_LOG``) appends each message as one JSON line
``{"t", "audience", "room", "event", "payload"}``, so a lab can show reviewers exactly what the
jurors and the stage screen were sent.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from flask_socketio import SocketIO


def room(session_id: int, audience: str) -> str:
    """The Socket.IO room of one audience (host, player, juror, stage) of one VTT session."""
    return f"vtt:{session_id}:{audience}"


def person_room(session_id: int, role: str, person_id: int) -> str:
    """The room of one player's or juror's connections (their tabs and devices)."""
    return f"vtt:{session_id}:{role}:{person_id}"


def sessions_of_rooms(names) -> set[int]:
    """The VTT sessions named by rooms (:func:`room`, :func:`person_room`); a connection's own room names none."""
    found = set()
    for name in names:
        parts = name.split(":") if isinstance(name, str) else ()
        if len(parts) >= 3 and parts[0] == "vtt" and parts[1].isdigit():
            found.add(int(parts[1]))
    return found


class AuditLog:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def write(self, audience: str, target: str, event: str, payload: Any) -> None:
        line = json.dumps(
            {
                "t": datetime.now(UTC).isoformat(),
                "audience": audience,
                "room": target,
                "event": event,
                "payload": payload,
            },
            ensure_ascii=False,
            default=str,
        )
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")


def nowhere_else(_session_id: int) -> bool:
    return False


class Outbox:
    """``local(session_id)``: whether a session's broadcasts may stay on this process, not go through the message
    queue (vtt.realtime.ownership: it owns the session and serves all of its connections)."""

    def __init__(self, socketio: SocketIO, audit_path: str | None, local: Callable[[int], bool] = nowhere_else):
        self.socketio = socketio
        self.audit = AuditLog(audit_path) if audit_path else None
        self.local = local

    def to_audience(self, session_id: int, audience: str, event: str, payload: dict[str, Any]) -> None:
        target = room(session_id, audience)
        if self.audit:
            self.audit.write(audience, target, event, payload)
        self.socketio.emit(event, payload, to=target, ignore_queue=self.local(session_id))

    def to_person(self, session_id: int, role: str, person_id: int, event: str, payload: dict[str, Any]) -> None:
        target = person_room(session_id, role, person_id)
        if self.audit:
            self.audit.write(role, target, event, payload)
        self.socketio.emit(event, payload, to=target, ignore_queue=self.local(session_id))

    def to_connection(self, sid: str, audience: str, event: str, payload: dict[str, Any]) -> None:
        """To one connection of this process (the snapshot at connect): straight to it, not through the message
        queue, so a thousand jurors connecting do not cost every other process a thousand snapshots to decode."""
        if self.audit:
            self.audit.write(audience, sid, event, payload)
        self.socketio.emit(event, payload, to=sid, ignore_queue=True)

    def record_ack(self, sid: str, audience: str, event: str, reply: dict[str, Any]) -> dict[str, Any]:
        """Acknowledgements are messages too: logged as ``ack:<event>``, then returned to Socket.IO."""
        if self.audit:
            self.audit.write(audience, sid, f"ack:{event}", reply)
        return reply
