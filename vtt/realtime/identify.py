"""Who a Socket.IO connection is: the identity its ``auth`` proves, from a player's or juror's token, or a session's
join code with the host's login, the stage's key or an open join.

The connect path's one question to the database, asked here with no hub: :func:`identify` needs a database
connection, the secret key and, for an open join, a way to submit the ``join`` action (the hub's writer).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, bindparam, select

from ..access.admission import admit, stage_key, stage_key_valid
from ..engine import displaced
from ..engine.actions import Actor, Refusal
from ..models import Juror, Jury, Player, SessionStatus, VttSession
from ..protocol.messages import Auth


@dataclass(frozen=True)
class Identity:
    """Who a connection is: role, VTT session, and the player's or juror's id."""

    role: str  # host | player | juror | displaced | stage
    session_id: int
    actor_id: int | None = None
    label: str = ""
    token: str | None = field(default=None, repr=False)  # handed back to an open-join juror (never logged)
    sees_door: bool = False  # the host or the stage: may ask for the door code

    @property
    def actor(self) -> Actor:
        return Actor(self.role, self.actor_id)

    def __str__(self) -> str:  # for the log
        return f"{self.role} {self.label!r} of session {self.session_id}"


def judging_later(status: SessionStatus, removed: bool) -> None:
    """A displaced juror may judge once the session has finished, until the host removes them."""
    if status is not SessionStatus.FINISHED:
        raise Refusal("not_finished", "this session has not finished yet: come back once it has")
    if removed:
        raise Refusal("removed", "this link was withdrawn by the host")


# A connection's token, looked up as plain rows (no ORM objects built): thousands of jurors connecting at once
# spent a quarter of the connect path's time building and dropping a Juror each.
JUROR_BY_TOKEN = (
    select(Juror.id, Juror.session_id, Juror.label, Juror.jury, Juror.removed_at, VttSession.status)
    .join(VttSession, VttSession.id == Juror.session_id)
    .where(Juror.token == bindparam("token"), Juror.jury != Jury.AI)
)
PLAYER_BY_TOKEN = select(Player.id, Player.session_id, Player.name).where(Player.token == bindparam("token"))
SESSION_BY_CODE = select(VttSession.id).where(VttSession.join_code == bindparam("code"))

# An open join: ``join(session_id, args)`` submits the ``join`` action of a guest and returns its reply.
Join = Callable[[int, dict[str, Any]], dict[str, Any]]


def identify(
    connect: Callable[[], Connection], secret_key: str, auth: Auth, is_host: bool, address: str, join: Join
) -> Identity:
    """The identity a connection's ``auth`` proves; raises :class:`Refusal` otherwise.  ``connect()`` opens a
    database connection (the reader engine's); an open join is counted against the join rates of ``address``
    (vtt.access.admission) and submitted through ``join``."""
    # A connection of the reader's engine, not an ORM session: a token is two plain queries at most, and
    # thousands of jurors connect at once (bench/bench_connect.py).
    with connect() as db:
        if auth.token:  # jurors first: thousands of them to a handful of players
            juror = db.execute(JUROR_BY_TOKEN, {"token": auth.token}).first()
            if juror is not None and juror.jury is Jury.LIVE:
                return Identity("juror", juror.session_id, juror.id, juror.label)
            if juror is not None:  # a displaced juror judges the finished session, apart from its live rooms
                judging_later(juror.status, juror.removed_at is not None)
                return Identity(displaced.ROLE, juror.session_id, juror.id, juror.label)
            player = db.execute(PLAYER_BY_TOKEN, {"token": auth.token}).first()
            if player is not None:
                return Identity("player", player.session_id, player.id, player.name)
            raise Refusal("bad_token", "this link is not valid (no player or juror has that token)")
        session_id = db.scalar(SESSION_BY_CODE, {"code": auth.code.strip().upper()})
    if session_id is None:
        raise Refusal("bad_code", f"no session has the code {auth.code!r}")
    if auth.role == "host":
        if not is_host:
            raise Refusal("not_host", "sign in as the host first (or give the host's API token: vtt host-token)")
        return Identity("host", session_id, None, "host", sees_door=True)
    if auth.role == "stage":  # the join code is public: the stage's key (or the host's login) opens it
        if not (is_host or stage_key_valid(auth.key, stage_key(secret_key, session_id))):
            raise Refusal("stage_key", "the stage screen opens with the stage link from the host's console")
        return Identity("stage", session_id, None, "stage", sees_door=True)
    door_ok = admit(address, session_id, auth.door)
    reply = join(session_id, {"nickname": auth.nickname, "door_ok": door_ok})
    if not reply.get("ok"):
        raise Refusal(reply["error"]["code"], reply["error"]["message"])
    return Identity("juror", session_id, reply["juror"], reply["label"], reply["token"])
