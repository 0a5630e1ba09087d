"""The app factory: config -> extensions -> blueprints -> template helpers."""

from __future__ import annotations

import os

from flask import Flask, redirect, url_for

from .config import PROJECT_ROOT, Settings
from .extensions import db, socketio


def create_app(test_config: dict | None = None) -> Flask:
    app = Flask(__name__, template_folder=str(PROJECT_ROOT / "templates"), static_folder=str(PROJECT_ROOT / "static"))
    register_config(app, test_config)
    register_extensions(app)
    register_blueprints(app)
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
    from .realtime import handlers  # noqa: F401

    db.init_app(app)
    # Same-origin websockets only (the default); REDIS_URL lets several processes share broadcasts.
    socketio.init_app(app, async_mode=app.config["SOCKETIO_ASYNC_MODE"], message_queue=app.config.get("REDIS_URL"))


def register_blueprints(app: Flask) -> None:
    from .views import auth, host

    app.register_blueprint(auth.bp)
    app.register_blueprint(host.bp)
    app.add_url_rule("/", "index", lambda: redirect(url_for("host.dashboard")))
    app.add_url_rule("/healthz", "healthz", lambda: {"status": "ok"})


def register_realtime(app: Flask) -> None:
    from .realtime.live import Live

    app.extensions["vtt.live"] = Live(app, socketio, db.factory(app))


def register_template_helpers(app: Flask) -> None:
    from analysis.taxonomy import Module

    app.jinja_env.globals.update(cogme_modules=list(Module))
