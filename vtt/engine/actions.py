"""What an action is and what answers it, and the one registry of actions.

An :class:`Action` of an :class:`Actor` is answered by an :class:`Outcome` or refused with a :class:`Refusal`.
Each action is declared on its handlers (:func:`declare`, :func:`declare_host`, :func:`declare_later`): who may
send it, the client message that carries it (its schema, ``vtt.protocol.messages``), and for a move of the host's
flow the precondition the rules check before its handler runs (``host_moves`` lists the moves by it).  What else
names actions is read from :data:`ACTIONS`: the socket events that carry them and the moves of the flow
(``vtt.engine.rules``), the actions a displaced juror may send (``vtt.engine.displaced``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from pydantic import BaseModel

from ..kinds import Phase
from ..protocol.messages import HostIn, Invalid, carried_by, parse_action
from ..protocol.replies import error_message
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
        return error_message(self.code, self.message, state_version)


# --- the declarations ------------------------------------------------------------------------------

Handler = Callable[[LiveState, Action, datetime, Tally], Outcome]
LaterHandler = Callable[..., Outcome]  # (state, assignment, action, now): ``vtt.engine.displaced``
Precondition = Callable[[LiveState], None]
Waiver = Callable[[LiveState, Action], bool]


@dataclass
class Declared:
    """An action as declared: the client message that carries it (None: only the server itself sends it, for an
    upload, a transcription or an open join); the roles its live handler answers (none: a displaced juror's
    only); for a move of the host's flow the precondition the rules check before the handler, and when it is
    waived (``finish`` with ``force``); and the handler of a displaced juror's same action (``later``)."""

    name: str
    schema: type[BaseModel] | None = None
    roles: frozenset[str] = frozenset()
    handler: Handler | None = None
    fits: Precondition | None = None
    waived: Waiver | None = None
    later: LaterHandler | None = None


ACTIONS: dict[str, Declared] = {}


def _declared(name: str, schema: type[BaseModel] | None) -> Declared:
    """The action's entry, its schema given (a schema must carry the action; one action, one schema)."""
    entry = ACTIONS.get(name) or Declared(name)
    if schema is not None:
        if name not in carried_by(schema) or entry.schema not in (None, schema):
            raise ValueError(f"action {name!r}: {schema.__name__} does not carry it, or it has another schema")
        entry.schema = schema
    return ACTIONS.setdefault(name, entry)


def declare(
    name: str,
    *,
    roles: tuple[str, ...],
    schema: type[BaseModel] | None,
    fits: Precondition | None = None,
    waived: Waiver | None = None,
) -> Callable[[Handler], Handler]:
    """Declare the decorated handler as the one that answers ``name`` in the live session."""

    def register(handler: Handler) -> Handler:
        live = ROLES - {"displaced"}  # a displaced juror's actions are declared with ``declare_later``
        if not roles or not live.issuperset(roles) or (name in ACTIONS and ACTIONS[name].handler is not None):
            raise ValueError(f"action {name!r}: declared twice, or with roles outside {sorted(live)}: {roles}")
        entry = _declared(name, schema)
        entry.roles, entry.handler, entry.fits, entry.waived = frozenset(roles), handler, fits, waived
        return handler

    return register


def declare_host(
    name: str, *, fits: Precondition | None = None, waived: Waiver | None = None
) -> Callable[[Handler], Handler]:
    """Declare a move of the host, carried by the host's message (its ``action`` field)."""
    return declare(name, roles=("host",), schema=HostIn, fits=fits, waived=waived)


def declare_later(name: str, *, schema: type[BaseModel] | None = None) -> Callable[[LaterHandler], LaterHandler]:
    """Declare the decorated handler as the one that answers a displaced juror's ``name`` (its schema given
    here when no live handler's declaration gives it)."""

    def register(handler: LaterHandler) -> LaterHandler:
        if name in ACTIONS and ACTIONS[name].later is not None:
            raise ValueError(f"action {name!r}: a displaced juror's handler declared twice")
        _declared(name, schema).later = handler
        return handler

    return register


def read_args(name: str, args: dict[str, Any], client_key: str | None = None) -> dict[str, Any]:
    """The fields of action ``name`` as its declared schema reads them, for a caller that is not a client message
    (the server's views, the paper and import paths, tests): the one check of the fields a client message
    carries, as ``vtt.protocol.messages.parse_action`` makes it at the socket; the handlers check only what depends
    on the session.  An action no client message carries (the server's own) is returned as given.  Raises
    :class:`Refusal` ``invalid`` naming the field."""
    declared = ACTIONS.get(name)
    if declared is None or declared.schema is None:
        return args
    event, data = name, {**args, "id": client_key or name}
    if declared.schema is HostIn:
        event, data["action"] = "host", name
    try:
        return parse_action(event, data)[1]
    except Invalid as invalid:
        raise Refusal(**invalid.as_error()) from None
