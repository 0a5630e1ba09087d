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
    from .views import auth, displaced, host, live, setup, spoken, studies

    app.url_map.converters["int"] = RowId
    app.register_blueprint(auth.bp)
    app.register_blueprint(host.bp)
    app.register_blueprint(setup.bp)
    app.register_blueprint(live.bp)
    app.register_blueprint(displaced.bp)  # a displaced jury: its juror's page, open links, the host's card
    app.register_blueprint(spoken.bp)  # recordings of spoken answers
    app.register_blueprint(studies.bp)  # sessions read together
    from .views import grading, results  # the grading view and the results page

    app.register_blueprint(grading.bp)
    app.register_blueprint(results.bp)
    from .views import jobs  # a session's background jobs

    app.register_blueprint(jobs.bp)
    from .views import printouts  # join cards, paper sheets, paper jurors' marks

    app.register_blueprint(printouts.bp)
    from .views import health  # /healthz: the process's loop, queue and sessions

    app.register_blueprint(health.bp)
    app.add_url_rule("/", "index", lambda: redirect(url_for("host.dashboard")))


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
