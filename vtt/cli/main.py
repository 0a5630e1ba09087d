"""The ``vtt`` command group: every command group is a module of this package, registered here.

Heavy imports stay inside the commands so ``vtt serve`` can monkey-patch for gevent first.
"""

from __future__ import annotations

import click

from .agent import agent
from .analyze import analyze
from .database import db
from .demo import demo
from .grade import grade
from .jury import jury
from .media import media
from .plan import plan
from .questions import questions
from .reports import export, report
from .serve import host_login, host_token_command, serve
from .session import session
from .simulate import simulate
from .study import study
from .tools import redact, settings


class _Commands(click.Group):
    """Turns a missing or unreachable database into one line instead of a traceback."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except Exception as error:
            message = _environment_problem(error)
            if message is None:
                raise
            raise click.ClickException(message) from error


def _environment_problem(error: Exception) -> str | None:
    from alembic.util.exc import CommandError
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError, OperationalError, ProgrammingError

    url = redact(settings().database_url)
    if isinstance(error, (ArgumentError, NoSuchModuleError)):
        return f"DATABASE_URL is not a usable database URL ({url}): {error}"
    if isinstance(error, OperationalError | ProgrammingError):
        reason = str(error.orig).strip().splitlines()[0] if error.orig else str(error)
        if "no such table" in reason or ("relation" in reason and "does not exist" in reason):
            return f"the database at {url} has no vtt tables yet: run `vtt db upgrade` ({reason})"
        return f"cannot use the database at {url}: {reason}"
    if isinstance(error, CommandError):
        return f"migration: {error}"
    return None


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """vtt: run a live Video Turing Test and report CogME profiles and vote tallies."""


for command in (
    serve,
    host_login,
    host_token_command,
    db,
    questions,
    demo,
    analyze,
    session,
    media,
    report,
    export,
    simulate,
    agent,
    grade,
    jury,
    study,
    plan,
):
    main.add_command(command)
