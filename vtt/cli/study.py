"""``vtt study``: group sessions into a study, list the studies, report a study (per session and pooled).

Imports only from :mod:`vtt.cli.tools` and below; heavy imports stay inside the commands.
"""

from __future__ import annotations

from pathlib import Path

import click

from .tools import db_factory, fail, language_option, out_dir_option


@click.group()
def study() -> None:
    """Studies: several sessions read together (a session per school, per AI program, per year)."""


@study.command("create")
@click.argument("name")
@click.argument("codes", nargs=-1, required=True)
@click.option("--description", default="", help="What the study is (shown on its page and report cover).")
def study_create(name: str, codes: tuple[str, ...], description: str) -> None:
    """Make the study NAME of the sessions with join codes CODES (each keeps its own design and hash)."""
    from ..db import transaction
    from ..studies import StudyProblem, create_study

    try:
        with transaction(db_factory()) as db:
            made = create_study(db, name, list(codes), description)
            held = [member.session.join_code for member in made.members]
    except StudyProblem as problem:
        fail(str(problem))
    click.echo(f"study {name.strip()!r}: {len(held)} sessions ({', '.join(held)})")


@study.command("add")
@click.argument("name")
@click.argument("codes", nargs=-1, required=True)
def study_add(name: str, codes: tuple[str, ...]) -> None:
    """Add the sessions with join codes CODES to the study NAME."""
    from ..db import transaction
    from ..studies import StudyProblem, add_sessions

    try:
        with transaction(db_factory()) as db:
            added = add_sessions(db, name, list(codes))
    except StudyProblem as problem:
        fail(str(problem))
    click.echo(f"added {', '.join(added)} to {name.strip()!r}")


@study.command("list")
def study_list() -> None:
    """One line per study: its name, how many sessions and their join codes."""
    from ..studies import all_studies

    with db_factory()() as db:
        rows = all_studies(db)
    if not rows:
        click.echo("no studies yet (vtt study create NAME CODE...)")
    for row in rows:
        click.echo(f"{row.name}\t{len(row.sessions)} sessions\t{' '.join(row.sessions)}")


@study.command("report")
@click.argument("name")
@out_dir_option("Write study_report.pdf, a CSV per table and the all-sessions export here.", required=True)
@language_option()
def study_report(name: str, out_dir: Path, language: str) -> None:
    """The study NAME's report, per session and pooled: CogME profiles by stage and by AI program, AI detection
    and the sessions' verdicts under their own rules, juror facets, exposure, composition; with every table as CSV
    and answers_all.csv, votes_all.csv (every session's export rows, the join code in front)."""
    from ..reports.study import write_study

    with db_factory()() as db:
        try:
            written = write_study(db, name, out_dir, language)
        except ValueError as problem:  # StudyProblem: no such study, or nothing to report
            fail(str(problem))
    click.echo(f"wrote {len(written)} files to {out_dir}")
