"""This process's Socket.IO connections: who each one is, and how many each VTT session has here."""

from __future__ import annotations

from .identify import Identity


class Connections:
    """Who each connection (``sid``) is, and the count of each session's connections.  Both let a session go by the
    rule beside them (docs/design.md, "Memory over months")."""

    def __init__(self) -> None:
        self.identities: dict[str, Identity] = {}  # per connection: gone at its disconnect (depart)
        self._per_session: dict[int, int] = {}  # this process's connections of each session: gone with the last

    def arrive(self, sid: str, who: Identity) -> None:
        self.identities[sid] = who
        self._per_session[who.session_id] = self._per_session.get(who.session_id, 0) + 1

    def depart(self, sid: str) -> tuple[Identity | None, bool]:
        """Who the closed connection was (None: it never authenticated), and whether it was its session's last
        connection here."""
        who = self.identities.pop(sid, None)
        if who is None:
            return None, False
        left = self._per_session.get(who.session_id, 1) - 1
        if left > 0:
            self._per_session[who.session_id] = left
            return who, False
        self._per_session.pop(who.session_id, None)
        return who, True

    def count(self, session_id: int) -> int:
        return self._per_session.get(session_id, 0)

    def serves(self, session_id: int) -> bool:
        """Whether a connection of ``session_id`` is here."""
        return session_id in self._per_session

    def served(self) -> dict[int, int]:
        """The connections per session (``/healthz``)."""
        return dict(self._per_session)

    def of_session(self, session_id: int) -> list[Identity]:
        return [who for who in list(self.identities.values()) if who.session_id == session_id]

    def by_session(self) -> dict[int, list[Identity]]:
        connected: dict[int, list[Identity]] = {}
        for who in list(self.identities.values()):
            connected.setdefault(who.session_id, []).append(who)
        return connected

    def held_sessions(self) -> dict[str, set[int]]:
        return {
            "connections": {who.session_id for who in list(self.identities.values())},
            "connections.per_session": set(self._per_session),
        }
