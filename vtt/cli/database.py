"""``vtt db``: the database's schema, migrated with Alembic."""

from __future__ import annotations

import click

from .tools import redact, settings


@click.group()
def db() -> None:
    """Database schema (Alembic migrations)."""


@db.command("upgrade")
@click.argument("revision", default="head")
def db_upgrade(revision: str) -> None:
    """Apply migrations up to REVISION (default: the newest)."""
    from ..db import current_revision, upgrade

    url = settings().database_url
    upgrade(url, revision)
    click.echo(f"database at revision {current_revision(url)} ({redact(url)})")


@db.command("downgrade")
@click.argument("revision")
def db_downgrade(revision: str) -> None:
    """Revert migrations down to REVISION ("base" empties the database)."""
    from ..db import current_revision, downgrade

    url = settings().database_url
    downgrade(url, revision)
    click.echo(f"database at revision {current_revision(url) or 'base'}")


@db.command("current")
def db_current() -> None:
    """Print the database's revision."""
    from ..db import current_revision

    click.echo(current_revision(settings().database_url) or "base (empty)")
