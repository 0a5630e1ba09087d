"""Extension objects, created unbound and attached to an app in ``create_app``."""

from __future__ import annotations

from flask import Flask, current_app, g
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_socketio import SocketIO
from flask_wtf.csrf import CSRFProtect
from sqlalchemy.orm import Session, sessionmaker

from .db import make_db_factory, make_engine


class Database:
    """One engine per app and one SQLAlchemy session per request (closed at teardown)."""

    def init_app(self, app: Flask) -> None:
        engine = make_engine(app.config["DATABASE_URL"])
        factory = make_db_factory(engine)
        app.extensions["vtt.db"] = (engine, factory)
        app.teardown_appcontext(self._close_session)

    @staticmethod
    def factory(app: Flask) -> sessionmaker[Session]:
        return app.extensions["vtt.db"][1]

    @staticmethod
    def _close_session(_exc: BaseException | None) -> None:
        db = g.pop("request_db", None)
        if db is not None:
            db.close()


def request_db() -> Session:
    """The current request's SQLAlchemy session (``db`` wherever it is used), closed at the request's end."""
    if "request_db" not in g:
        g.request_db = Database.factory(current_app)()
    return g.request_db


database = Database()
socketio = SocketIO()
csrf = CSRFProtect()
# Limits are per client address; with REDIS_URL every process counts together (RATELIMIT_STORAGE_URI).
limiter = Limiter(get_remote_address, default_limits=[])
