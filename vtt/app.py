"""The app factory: config -> extensions -> blueprints -> template helpers."""

from __future__ import annotations

import mimetypes
import os

from flask import Flask, redirect, url_for
from werkzeug.routing import IntegerConverter

from .config import PROJECT_ROOT, Settings
from .extensions import csrf, database, limiter, socketio

# Safari plays media only under its media type: the pages' silent source (static/media/silence.m4a) is not left to
# the machine's /etc/mime.types, which a slim server image lacks (.webm is known without it).
mimetypes.add_type("audio/mp4", ".m4a")


def create_app(test_config: dict | None = None) -> Flask:
    app = Flask(__name__, template_folder=str(PROJECT_ROOT / "templates"), static_folder=str(PROJECT_ROOT / "static"))
    register_config(app, test_config)
    register_extensions(app)
    register_blueprints(app)
    register_errors(app)
    register_realtime(app)
    register_template_helpers(app)
    return app


def register_config(app: Flask, test_config: dict | None) -> None:
    app.config.update(Settings.from_env().flask_config())
    app.config["SOCKETIO_ASYNC_MODE"] = os.environ.get("VTT_ASYNC_MODE", "gevent")
    if test_config:
        app.config.update(test_config)


def register_extensions(app: Flask) -> None:
    # The Socket.IO handlers must be declared before the first init_app: Flask-SocketIO re-applies
    # only handlers declared while it had no server, to the server each init_app creates.
    from . import i18n
    from .access import web_guard as security
    from .realtime import wirejson
    from .realtime.packets import ServerPacket
    from .realtime.rooms import client_manager

    database.init_app(app)
    csrf.init_app(app)
    limiter.init_app(app)
    i18n.init_app(app)
    # Same-origin websockets only (the default); REDIS_URL lets several processes share broadcasts (the client
    # manager's message queue: vtt.realtime.rooms).  Each app gets a manager of its own.
    socketio.server_options.pop("message_queue", None)
    socketio.init_app(
        app,
        async_mode=app.config["SOCKETIO_ASYNC_MODE"],
        client_manager=client_manager(app.config.get("REDIS_URL")),
        json=wirejson,
        serializer=ServerPacket,
    )
    security.init_app(app)  # headers, Secure cookies over HTTPS, VTT_TRUSTED_PROXIES (after SocketIO: outermost)


class RowId(IntegerConverter):
    """``<int:...>`` in every route: at most a 64-bit row id (a larger one is a 404, not the database's overflow)."""

    def __init__(self, url_map, *args, **kwargs):
        kwargs.setdefault("max", 2**63 - 1)
        super().__init__(url_map, *args, **kwargs)


def register_blueprints(app: Flask) -> None:
    from .views import auth, host, juries, live, setup, spoken, studies

    app.url_map.converters["int"] = RowId
    app.register_blueprint(auth.bp)
    app.register_blueprint(host.bp)
    app.register_blueprint(setup.bp)
    app.register_blueprint(live.bp)
    app.register_blueprint(juries.bp)  # a displaced jury: its juror's page, open links, the host's card
    app.register_blueprint(spoken.bp)  # recordings of spoken answers
    app.register_blueprint(studies.bp)  # sessions read together
    from .views import grading, results  # the grading view and the results page

    app.register_blueprint(grading.bp)
    app.register_blueprint(results.bp)
    from .views import jobs  # a session's background jobs

    app.register_blueprint(jobs.bp)
    from .views import printouts  # join cards, paper sheets, paper jurors' marks

    app.register_blueprint(printouts.bp)
    app.add_url_rule("/", "index", lambda: redirect(url_for("host.dashboard")))
    app.add_url_rule("/healthz", "healthz", healthz)


def healthz() -> tuple[dict, int]:
    """Up, how late the event loop has run at worst (``?reset=1`` starts a new window: the host's only), the message
    queue, whether this process holds the session timers, and the sessions it serves and owns.

    A process whose queue listener has died no longer hears the other processes' broadcasts: 503, so that a load
    balancer takes it out.  The worst stall is the operator's figure: anyone may read it, but a reset without the
    host's login or API token is refused (403) and resets nothing.
    """
    from flask import request

    from .realtime.hub import current_hub

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
    from sqlalchemy import select

    from .extensions import request_db
    from .models import VttSession

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
    from flask import current_app, request
    from flask import session as cookie

    from .access.host_token import is_host_token

    given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
    config = current_app.config
    return bool(cookie.get("host")) or is_host_token(given, config["SECRET_KEY"], config["HOST_PASSWORD"])


def queue_status(manager) -> dict:
    """``{"kind": "none"}`` without a message queue; with one, whether this process's listener is alive.

    python-socketio's pub/sub managers receive the other processes' messages in one background task,
    ``manager.thread``, started by ``manager.initialize()`` (by ``vtt serve`` at start); it ends for good when the
    queue's listen() returns, while Redis being away only makes it retry (alive).
    """
    from socketio import PubSubManager

    if not isinstance(manager, PubSubManager):
        return {"kind": "none"}
    listener = getattr(manager, "thread", None)
    # a thread in threading mode, a greenlet under gevent
    alive = listener is not None and (listener.is_alive() if hasattr(listener, "is_alive") else not listener.dead)
    return {"kind": manager.name, "listening": alive}


def register_errors(app: Flask) -> None:
    from .views.errors import register_errors as register

    register(app)


def register_realtime(app: Flask) -> None:
    from .db import make_db_factory, make_reader_engine
    from .realtime.handlers import attach
    from .realtime.hub import Hub

    app.extensions["vtt.hub"] = Hub(app, socketio, make_db_factory(make_reader_engine(app.config["DATABASE_URL"])))
    attach(socketio.server, app.extensions["vtt.hub"], app)


def register_template_helpers(app: Flask) -> None:
    from analysis.taxonomy import Module

    from .protocol.vocabulary import MAX_TEXT
    from .views import assets

    assets.init_app(app)  # static/: versioned addresses, long caching, gzip, module_script()
    # MAX_TEXT: the longest answer, note or reason, the pages' maxlength (the engine refuses longer: too_long)
    app.jinja_env.globals.update(cogme_modules=list(Module), MAX_TEXT=MAX_TEXT)
