"""``vtt media``: check that every clip of a bank will play at the venue; build browser-ready clips from what a
benchmark publishes.

Imports only from :mod:`vtt.cli.tools` and below (never from :mod:`vtt.cli.main`, which registers this group).
Heavy imports stay inside the commands so ``vtt serve`` can monkey-patch for gevent first.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import click

from .tools import db_factory, fail, settings


@click.group()
def media() -> None:
    """Clips: check them before the venue does; prepare them from a benchmark's frames or videos."""


@media.command("check")
@click.argument("file", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--bank", "bank_name", help="Check the clips of this bank in the database (instead of FILE).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object: every question's clip and verdict.")
@click.option(
    "--problems-out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write every problem and warning to this CSV file (file, row, field, value, message).",
)
def media_check(file: Path | None, bank_name: str | None, as_json: bool, problems_out: Path | None) -> None:
    """Every question's clip, in the media folder (VTT_MEDIA_DIR): there, decodes, long enough for its span, in a
    format every browser plays. Exits 1 when any clip has a problem (warnings alone: 0)."""
    from ..media.check import ClipRef, check_clips
    from ..media.preflight import as_problems, counts, summary_line
    from ..problems import InputError, summarize, write_problems_csv

    if (file is None) == (bank_name is None):
        raise click.UsageError("give a bank file or --bank NAME (one of them)")
    media_dir = settings().media_dir
    if bank_name is not None:
        from ..banks import bank_by_name
        from ..media.preflight import bank_refs

        with db_factory()() as db:
            bank = bank_by_name(db, bank_name)
            if bank is None:
                fail(f"no question bank named {bank_name!r} (`vtt questions list` names them)")
            refs, label = bank_refs(db, bank.id), bank_name
    else:
        from ..banks import read_bank

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
        click.echo(
            json.dumps(
                {
                    "bank": label,
                    "media_dir": str(media_dir),
                    "counts": counts(verdicts),
                    "clips": [v.as_dict() for v in verdicts],
                },
                ensure_ascii=False,
            )
        )
    else:
        click.echo(f"{label}: {summary_line(verdicts)} (media folder {media_dir})")
        hint = f"all of them in {problems_out}" if problems_out else "--problems-out FILE lists them all"
        for heading, found in (("problem", problems), ("warning", warnings)):
            if found:
                click.echo(f"{_count(len(found), heading)}:")
                for line in summarize(found, hint):
                    click.echo(f"  {line}")
    sys.exit(1 if problems else 0)


@media.command("prepare")
@click.option("--bank", "bank_name", required=True, help="The bank whose clips to build (and point at them).")
@click.option(
    "--from",
    "source_dir",
    required=True,
    metavar="SOURCE",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="What the benchmark publishes: TVQA's frames folder (holding bbt_frames/, ...), DramaQA's "
    "AnotherMissOh_images/, or a folder of video files.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["tvqa", "dramaqa", "video"]),
    help="How SOURCE is laid out. Default: the bank's format when it is tvqa or dramaqa, else video.",
)
@click.option(
    "--out",
    "out_dir",
    metavar="DIR",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where the clips go, inside the media folder. Default: a folder named after the bank there.",
)
@click.option(
    "--fps",
    type=click.FloatRange(min=0, min_open=True),
    help="The rate the frames were sampled at (TVQA and DramaQA: 3).",
)
@click.option(
    "--problems-out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write every question whose clip could not be made to this CSV file.",
)
def media_prepare(
    bank_name: str,
    source_dir: Path,
    fmt: str | None,
    out_dir: Path | None,
    fps: float | None,
    problems_out: Path | None,
) -> None:
    """One browser-ready clip per question (H.264 MP4 with faststart, a phone rendition beside it) from a benchmark's
    frame folders or video files, cut to the question's span; then the bank's questions point at them. A clip made
    from the same source before is left as it is. Exits 1 when any question's clip could not be made."""
    from ..banks import bank_by_name
    from ..banks.store import repoint_clips
    from ..db import transaction
    from ..media.prepare import prepare_clips
    from ..media.sources import FRAME_RATES, plan_clips, slug
    from ..problems import summarize, write_problems_csv

    media_dir = settings().media_dir
    fmt, questions = _original_clips(bank_name, fmt)
    if fps is not None and fmt not in FRAME_RATES:
        raise click.UsageError("--fps is for frame folders (--format tvqa or dramaqa)")
    out_dir = (out_dir or media_dir / slug(bank_name)).resolve()
    if not out_dir.is_relative_to(media_dir.resolve()):
        fail(
            f"--out {out_dir} is outside the media folder ({media_dir}), and the server serves clips only from "
            "there: give a folder inside it, or set VTT_MEDIA_DIR"
        )
    plan = plan_clips(fmt, source_dir.resolve(), questions, fps)
    with _progress(len(plan.recipes), "preparing clips", " clips") as advance:
        outcomes = prepare_clips(out_dir, plan.recipes, on_done=advance)
    prepared, problems = _sorted_out(
        bank_name, questions, plan, outcomes, out_dir.relative_to(media_dir.resolve()).as_posix()
    )
    with transaction(db_factory()) as db:  # after every clip is done: the bank changes once, or not at all
        changed = repoint_clips(db, bank_by_name(db, bank_name), prepared)

    statuses = Counter(outcome.status for outcome in outcomes.values())
    rate = f" at {fps or FRAME_RATES[fmt]:g} fps" if fmt in FRAME_RATES else ""
    click.echo(
        f"{bank_name}: {_count(len(outcomes), 'clip')} for {_count(len(plan.clip_of), 'question')} ({fmt}"
        f"{rate} from {source_dir}) in {out_dir}: {statuses['made']} made, {statuses['unchanged']} already "
        f"prepared, {statuses['failed']} failed"
    )
    without_clip = f"; {len(plan.without_clip)} without a clip (nothing to prepare)" if plan.without_clip else ""
    click.echo(
        f"{len(prepared)} of {_count(len(questions), 'question')} play a prepared clip ({changed} repointed "
        f"now){without_clip}"
    )
    if problems_out:
        write_problems_csv(problems, problems_out)
    if problems:
        hint = f"all of them in {problems_out}" if problems_out else "--problems-out FILE lists them all"
        click.echo(f"{_count(len(problems), 'question')} kept the clip they had:", err=True)
        for line in summarize(problems, hint):
            click.echo(f"  {line}", err=True)
    sys.exit(1 if problems else 0)


def _original_clips(bank_name: str, fmt: str | None):
    """The ``--format`` (given, or the bank's own) and every question's clip as imported, with the fields its importer
    kept (DramaQA's ``shot_contained``), in the bank's order."""
    from sqlalchemy import select

    from ..banks import bank_by_name
    from ..banks.store import original_clip
    from ..media.check import ClipRef
    from ..media.sources import default_format
    from ..models import Question

    with db_factory()() as db:
        bank = bank_by_name(db, bank_name)
        if bank is None:
            fail(f"no question bank named {bank_name!r} (`vtt questions list` names them)")
        questions = db.scalars(select(Question).where(Question.bank_id == bank.id).order_by(Question.id))
        return fmt or default_format(bank.source_format), [
            (ClipRef(q.qid, *original_clip(q)), dict(q.source)) for q in questions
        ]


def _sorted_out(bank_name: str, questions, plan, outcomes, folder: str):
    """Which questions now have a prepared clip (qid -> its path in the media folder), and the problem of each of the
    others, in the bank's order."""
    from ..problems import Problem

    problems = [
        Problem(bank_name, qid, "clip", str(problem), unit="question", value=problem.path)
        for qid, problem in plan.problems.items()
    ]
    prepared = {}
    for qid, name in plan.clip_of.items():
        outcome = outcomes[name]
        if outcome.status == "failed":
            problems.append(Problem(bank_name, qid, "clip", outcome.problem, unit="question", value=outcome.path))
        else:
            prepared[qid] = name if folder == "." else f"{folder}/{name}"
    in_bank_order = {ref.qid: position for position, (ref, _kept) in enumerate(questions)}
    return prepared, sorted(problems, key=lambda problem: in_bank_order[problem.row])


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


@contextmanager
def _progress(total: int, description: str, unit: str):
    """A step counter: a progress bar on a terminal (gone when done), nothing in a log or a pipe."""
    if not sys.stderr.isatty():
        yield lambda _done: None
        return
    from tqdm import tqdm

    with tqdm(
        total=total, unit=unit, desc=description, leave=False, file=sys.stderr, dynamic_ncols=True, mininterval=0.2
    ) as bar:
        yield lambda _done: bar.update(1)
