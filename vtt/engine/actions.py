"""What an action is and what answers it, and the one declaration of each action.

An :class:`Action` of an :class:`Actor` is answered by an :class:`Outcome` or refused with a :class:`Refusal`.
Each action is declared once, on its handler (:func:`declare`): who may send it, the client message that carries
it (``vtt.protocol.messages``) and, for a move of the host's flow, the precondition ``host_moves`` lists it by.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from pydantic import BaseModel

from ..kinds import Phase
from ..protocol.messages import HostIn
from .state import Effect, LiveState, SetPhase

ROLES = frozenset({"host", "player", "juror", "displaced", "guest", "system"})


class Tally(Protocol):
    """A round's tally from its votes, leaving out the jurors ``without``; None when the round's votes are not
    at hand (``vtt.persistence.tally``: the current round's are in the state, earlier ones in the database)."""

    def __call__(self, state: LiveState, number: int, without: frozenset[int] = ...) -> dict[str, Any] | None: ...


@dataclass(frozen=True)
class Actor:
    role: str  # host | player | juror | displaced | guest | system
    id: int | None = None

    @property
    def label(self) -> str:
        return f"{self.role}:{self.id}" if self.id is not None else self.role


SYSTEM = Actor("system")
HOST = Actor("host")


@dataclass(frozen=True)
class Action:
    actor: Actor
    name: str
    args: dict[str, Any] = field(default_factory=dict, hash=False)
    client_key: str | None = None


@dataclass(frozen=True)
class Message:
    """One event for one audience; ``replaces`` lets a later message of a batch supersede it."""

    audience: str
    event: str
    payload: dict[str, Any]
    replaces: str | None = None


@dataclass
class Outcome:
    """What an accepted action does; ``announce`` builds its messages from the state after it."""

    effects: list[Effect] = field(default_factory=list)
    reply: dict[str, Any] = field(default_factory=dict)
    announce: Callable[[LiveState], list[Message]] | None = None
    status_changed: bool = False
    messages: list[Message] = field(default_factory=list)

    def move(self, phase: Phase, round_: int | None, position: int | None, deadline: datetime | None) -> None:
        """The session moves to ``phase`` (everyone's status follows)."""
        self.effects.append(SetPhase(phase, round_, position, deadline))
        self.status_changed = True


def refused(code: str, message: str, state_version: int | None = None) -> dict[str, Any]:
    """The one shape of a refused action's reply (docs/protocol.md, "Actions and acknowledgements")."""
    reply: dict[str, Any] = {"ok": False, "error": {"code": code, "message": message}}
    if state_version is not None:
        reply["state_version"] = state_version
    return reply


SERVER_ERROR = ("server_error", "the server could not save this; try again")  # retry with the same id


class Refusal(Exception):
    """An action that does not fit: ``code`` for programs, ``message`` for people."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message
        self.before: list[Outcome] = []  # the clock's outcome when a deadline expired just before

    def as_error(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}

    def reply(self, state_version: int | None = None) -> dict[str, Any]:
        return refused(self.code, self.message, state_version)


# --- the declarations ------------------------------------------------------------------------------

Handler = Callable[[LiveState, Action, datetime, Tally], Outcome]
Precondition = Callable[[LiveState], None]


@dataclass(frozen=True)
class Declared:
    """An action as declared: who may send it, the client message that carries it (None: only the server itself
    sends it, for an upload, a transcription or an open join), its handler, and for a move of the host's flow the
    precondition its handler checks first."""

    name: str
    roles: frozenset[str]
    schema: type[BaseModel] | None
    handler: Handler
    fits: Precondition | None = None


ACTIONS: dict[str, Declared] = {}


def declare(
    name: str, *, roles: tuple[str, ...], schema: type[BaseModel] | None, fits: Precondition | None = None
) -> Callable[[Handler], Handler]:
    """Declare the decorated handler as the one that answers ``name``."""

    def register(handler: Handler) -> Handler:
        if name in ACTIONS or not roles or not ROLES.issuperset(roles):
            raise ValueError(f"action {name!r}: declared twice, or with roles outside {sorted(ROLES)}: {roles}")
        ACTIONS[name] = Declared(name, frozenset(roles), schema, handler, fits)
        return handler

    return register


def declare_host(name: str, *, fits: Precondition | None = None) -> Callable[[Handler], Handler]:
    """Declare a move of the host, carried by the host's message (its ``action`` field)."""
    return declare(name, roles=("host",), schema=HostIn, fits=fits)
