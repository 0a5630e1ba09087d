"""Serving with gevent; the caller has already monkey-patched (see ``run.py`` and ``vtt serve``)."""

from __future__ import annotations

import click

from .app import create_app
from .db import current_revision, head_revision
from .extensions import socketio


def serve(host: str = "127.0.0.1", port: int = 5000) -> None:
    from .cli import login_banner

    app = create_app({"SOCKETIO_ASYNC_MODE": "gevent"})
    found, expected = current_revision(app.config["DATABASE_URL"]), head_revision()
    if found != expected:
        # Serving an old schema would answer every page with a 500; say what to do instead.
        raise click.ClickException(f"the database is at revision {found or 'base (empty)'}, this code needs "
                                   f"{expected}: run `vtt db upgrade` first (make run does)")
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    click.echo(login_banner(f"http://{shown}:{port}"))
    click.echo(f"Serving on http://{host}:{port} (gevent, {socketio.server.eio.async_mode}); Ctrl-C stops.")
    socketio.run(app, host=host, port=port, log_output=False, use_reloader=False)
