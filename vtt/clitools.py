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


def fail(error, consequence: str = "nothing was written", problems_out=None) -> None:
    """Print an input error, each kind of problem once (``vtt.problems.summarize``), and exit 1.

    ``problems_out``: also write every problem to this CSV file (file, row, field, value, message).
    """
    from .problems import Problem, summarize, unique, write_problems_csv

    problems = unique(getattr(error, "problems", None) or [])
    if problems:
        click.echo(f"error: {len(problems):,} problem{'s' if len(problems) != 1 else ''}; {consequence}", err=True)
        located = all(isinstance(problem, Problem) for problem in problems)  # analysis' are lines already
        hint = f"all of them in {problems_out}" if problems_out else "--problems-out FILE lists them all"
        for line in summarize(problems, hint) if located else problems:
            click.echo(f"  {line}", err=True)
        if problems_out and located:
            write_problems_csv(problems, problems_out)
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
