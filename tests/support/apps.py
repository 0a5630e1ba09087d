"""The app as the tests run it in their own process, and the host's ways in (the password form, the API token)."""

from __future__ import annotations

import re

from flask import Flask

from vtt.app import create_app

HOST_PASSWORD = "correct horse battery"


def threaded_app(database_url: str, **config) -> Flask:
    """The app on ``database_url`` for a test: Flask-SocketIO in threading mode (no gevent in the test process).
    Its writer thread runs until ``app.extensions["vtt.hub"].stop()``."""
    return create_app({"TESTING": True, "DATABASE_URL": database_url, "SOCKETIO_ASYNC_MODE": "threading", **config})


def form_token(client, path: str = "/host/login") -> str:
    """The CSRF token a page's forms carry (Flask-WTF's, signed)."""
    page = client.get(path).get_data(as_text=True)
    return re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)


def login(client, password: str = HOST_PASSWORD):
    return client.post("/host/login", data={"password": password, "csrf_token": form_token(client)})


def host_api_token() -> str:
    """The host's API token of this test's instance (the one a server started by the test accepts)."""
    from vtt.access.host_token import host_token
    from vtt.config import Settings

    settings = Settings.from_env()
    return host_token(settings.secret_key, settings.host_password)
