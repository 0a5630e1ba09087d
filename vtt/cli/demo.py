"""``vtt demo load``: the demo bank, session and clips, so a first run has something to play."""

from __future__ import annotations

import click

from .tools import db_factory, settings


@click.group()
def demo() -> None:
    """The demo question bank and session."""


@demo.command("load")
def demo_load() -> None:
    """Load the demo bank and session, and make its clips in the media folder (a second run changes nothing)."""
    from ..db import transaction
    from ..sessions.demo import load_demo
    from ..sessions.demo.clips import ensure_demo_clips

    with transaction(db_factory()) as db:
        for line in load_demo(db):
            click.echo(line)
    click.echo(ensure_demo_clips(settings().media_dir))
