"""The places a client plays in a session: each player's and juror's private link token and name.

Read from the database by whoever created or holds the session (:mod:`vtt.sessions.simulation`), then
handed to clients that only speak the protocol.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Seat:
    role: str  # player | juror
    token: str
    name: str
    kind: str = "human"  # a player's kind


@dataclass
class Cast:
    session_id: int
    code: str
    rounds: int
    questions: int
    seats: list[Seat] = field(default_factory=list)

    @property
    def jurors(self) -> int:
        return sum(seat.role == "juror" for seat in self.seats)
