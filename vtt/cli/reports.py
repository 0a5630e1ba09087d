"""``vtt report CODE`` and ``vtt export CODE``: a live session's reports and raw tables.

Registered on the ``vtt`` group by ``vtt/cli/main.py``; this module imports ``vtt.cli.tools`` and lower
modules only.  Heavy imports stay inside the commands.
"""

from __future__ import annotations

from pathlib import Path

import click

from .tools import db_factory, fail, language_option, out_dir_option, session_or_fail, settings, warn_missing_glyphs


@click.command("report")
@click.argument("code")
@out_dir_option("Write profiles.pdf, tallies.pdf, report.pdf and a CSV per table here.", required=True)
@click.option("--title", help="The PDFs' title (default: the session's name).")
@language_option()
def report(code: str, out_dir: Path, title: str | None, language: str) -> None:
    """The report's PDFs and CSVs from the data of the session with join code CODE.

    Scoring method and pass rule are the session's own.  Open answers not graded yet are left out
    of accuracy, listed in ungraded.csv and named on the terminal.
    """
    from ..reports.session import NothingToReport, write_session_reports

    with db_factory()() as db:
        session = session_or_fail(db, code)
        try:
            reports = write_session_reports(db, session, out_dir, title, language=language)
        except NothingToReport as exc:
            fail(str(exc))
    written, tables = reports.written, reports.tables
    click.echo(f"wrote {len(written)} files to {out_dir}: {', '.join(sorted(written))}")
    if not reports.has_votes:
        click.echo(
            "no votes yet: tallies without vote statistics" if reports.has_sheet else "no votes yet: profiles only"
        )
    if len(tables.ungraded):
        click.echo(_ungraded_line(tables.ungraded))
    warn_missing_glyphs(written)


def _ungraded_line(ungraded) -> str:
    count = len(ungraded)
    named = ", ".join(f"{row.player} {row.qid}" for row in ungraded.itertuples(index=False))
    return (
        f"{count} answer{'s' if count != 1 else ''} not graded yet (open, or to a question without a key), "
        f"left out of accuracy: {named}"
    )


@click.command("export")
@click.argument("code")
@out_dir_option("Write one CSV per table and CODE_wide.csv here.", required=True)
@click.option(
    "--recordings-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where the spoken answers' recordings are (default: VTT_RECORDINGS_DIR, else instance/recordings).",
)
def export(code: str, out_dir: Path, recordings_dir: Path | None) -> None:
    """Every table of the session with join code CODE as CSV, plus one wide file (oTree style), and the kept
    recordings of spoken answers in recordings/ (recordings.csv lists every take).

    Each file carries the session's join code and design hash; login tokens are never written.
    """
    from ..recordings import copy_all
    from ..results.export import export_tables

    folder = recordings_dir or Path(settings().flask_config()["RECORDINGS_DIR"])
    with db_factory()() as db:
        session = session_or_fail(db, code)
        tables = export_tables(db, session)
        copied = copy_all(db, folder, session.id, out_dir / "recordings")
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, frame in tables.items():
        frame.to_csv(out_dir / name, index=False, encoding="utf-8")
    counts = ", ".join(f"{name} ({len(frame)})" for name, frame in tables.items())
    click.echo(f"wrote {len(tables)} files to {out_dir}: {counts}" + (f"; {copied} recordings" if copied else ""))
