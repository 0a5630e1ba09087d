"""What every ``vtt`` command group shares: settings, a database session factory, error output.

Heavy imports stay inside the functions so ``vtt serve`` can monkey-patch for gevent first.
"""

from __future__ import annotations

import sys

import click


def settings():
    from .config import Settings

    return Settings.from_env()


def session_factory():
    from .db import make_engine, make_session_factory

    return make_session_factory(make_engine(settings().database_url))


def fail(error, consequence: str = "nothing was written") -> None:
    """Print an input error with every problem it lists, and exit 1."""
    problems = getattr(error, "problems", None)
    if problems:
        click.echo(f"error: {len(problems)} problem{'s' if len(problems) != 1 else ''}; {consequence}", err=True)
        for problem in problems:
            click.echo(f"  {problem}", err=True)
    else:
        click.echo(f"error: {error}", err=True)
    sys.exit(1)


def redact(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def login_banner(url: str) -> str:
    """Where the host signs in and with which password (``make run``, ``vtt serve``, ``vtt host-login``)."""
    current = settings()
    return (f"Host console: {url}/host/login\n"
            f"Host password: {current.host_password}   (from {current.host_password_source})")
