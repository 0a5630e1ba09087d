"""``/healthz``: whether this process is up and hears the others, for a load balancer and the operator."""

from __future__ import annotations

from flask import Blueprint, current_app, request
from flask import session as cookie
from socketio import PubSubManager
from sqlalchemy import select

from ..access.host_token import is_host_token
from ..extensions import request_db, socketio
from ..models import VttSession
from ..realtime.hub import current_hub

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz() -> tuple[dict, int]:
    """Up, how late the event loop has run at worst (``?reset=1`` starts a new window: the host's only), the message
    queue, whether this process holds the session timers, and the sessions it serves and owns.

    A process whose queue listener has died no longer hears the other processes' broadcasts: 503, so that a load
    balancer takes it out.  The worst stall is the operator's figure: anyone may read it, but a reset without the
    host's login or API token is refused (403) and resets nothing.
    """
    reset = request.args.get("reset") == "1"
    if reset and not is_host_request():
        return {"error": "resetting the loop's figures needs the host's login or API token"}, 403
    hub = current_hub()
    queue = queue_status(socketio.server.manager)
    healthy = queue.get("listening", True)
    loop = hub.loop_watch.report(reset=reset)
    reply = {
        "status": "ok" if healthy else "queue listener dead",
        "loop": loop,
        "queue": queue,
        "timers": hub.holds_timers,  # whether this process runs the deadlines of the sessions nobody owns
        "sessions": sessions_served(hub, by_code=is_host_request()),
    }
    return reply, 200 if healthy else 503


def sessions_served(hub, by_code: bool) -> dict[str, dict]:
    """Per session this process serves or owns: ``{"connections": n, "owner": bool}`` (the owner runs its deadlines
    and keeps its broadcasts on its process: vtt.realtime.ownership).  Keyed by join code for the host (signed in,
    or with the host's API token as a Bearer token), else by session id: a join code lets anyone join."""
    served = hub.served()
    owned = set(hub.ownership.claims.sessions)
    ids = sorted(served.keys() | owned)
    names = {session_id: str(session_id) for session_id in ids}
    if by_code and ids:
        rows = request_db().execute(select(VttSession.id, VttSession.join_code).where(VttSession.id.in_(ids)))
        names.update(dict(rows.all()))
    return {
        names[session_id]: {"connections": served.get(session_id, 0), "owner": session_id in owned}
        for session_id in ids
    }


def is_host_request() -> bool:
    given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
    config = current_app.config
    return bool(cookie.get("host")) or is_host_token(given, config["SECRET_KEY"], config["HOST_PASSWORD"])


def queue_status(manager) -> dict:
    """``{"kind": "none"}`` without a message queue; with one, whether this process's listener is alive.

    python-socketio's pub/sub managers receive the other processes' messages in one background task,
    ``manager.thread``, started by ``manager.initialize()`` (by ``vtt serve`` at start); it ends for good when the
    queue's listen() returns, while Redis being away only makes it retry (alive).
    """
    if not isinstance(manager, PubSubManager):
        return {"kind": "none"}
    listener = getattr(manager, "thread", None)
    # a thread in threading mode, a greenlet under gevent
    alive = listener is not None and (listener.is_alive() if hasattr(listener, "is_alive") else not listener.dead)
    return {"kind": manager.name, "listening": alive}
