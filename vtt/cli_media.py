"""``vtt media``: check that every clip of a bank will play at the venue; build browser-ready clips from what a
benchmark publishes.

Imports only from :mod:`vtt.clitools` and below (never from :mod:`vtt.cli`, which registers this group).
Heavy imports stay inside the commands so ``vtt serve`` can monkey-patch for gevent first.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from .clitools import fail, session_factory, settings


@click.group()
def media() -> None:
    """Clips: check them before the venue does; prepare them from a benchmark's frames or videos."""


@media.command("check")
@click.argument("file", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--bank", "bank_name", help="Check the clips of this bank in the database (instead of FILE).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object: every question's clip and verdict.")
@click.option("--problems-out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write every problem and warning to this CSV file (file, row, field, value, message).")
def media_check(file: Path | None, bank_name: str | None, as_json: bool, problems_out: Path | None) -> None:
    """Every question's clip, in the media folder (VTT_MEDIA_DIR): there, decodes, long enough for its span, in a
    format every browser plays. Exits 1 when any clip has a problem (warnings alone: 0)."""
    from .media.check import ClipRef, check_clips
    from .media.preflight import as_problems, counts, summary_line
    from .problems import InputError, summarize, write_problems_csv

    if (file is None) == (bank_name is None):
        raise click.UsageError("give a bank file or --bank NAME (one of them)")
    media_dir = settings().media_dir
    if bank_name is not None:
        from .banks import bank_by_name
        from .media.preflight import bank_refs

        with session_factory()() as db:
            bank = bank_by_name(db, bank_name)
            if bank is None:
                fail(f"no question bank named {bank_name!r} (`vtt questions list` names them)")
            refs, label = bank_refs(db, bank.id), bank_name
    else:
        from .banks import read_bank

        try:
            records = read_bank(file, allow_missing_keys=True).records
        except InputError as error:
            fail(error, "nothing was checked")
        refs, label = [ClipRef(r.qid, r.video, r.start, r.end) for r in records], file.name
    verdicts = check_clips(media_dir, refs)
    problems, warnings = as_problems(label, verdicts)
    if problems_out:
        write_problems_csv(problems + warnings, problems_out)
    if as_json:
        click.echo(json.dumps({"bank": label, "media_dir": str(media_dir), "counts": counts(verdicts),
                               "clips": [v.as_dict() for v in verdicts]}, ensure_ascii=False))
    else:
        click.echo(f"{label}: {summary_line(verdicts)} (media folder {media_dir})")
        hint = f"all of them in {problems_out}" if problems_out else "--problems-out FILE lists them all"
        for heading, found in (("problem", problems), ("warning", warnings)):
            if found:
                click.echo(f"{len(found):,} {heading}{'s' if len(found) != 1 else ''}:")
                for line in summarize(found, hint):
                    click.echo(f"  {line}")
    sys.exit(1 if problems else 0)
