"""``vtt questions``: check, import, tag, build and list question banks."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click

from .tools import db_factory, fail

FORMAT_CHOICES = ["auto", "csv", "json", "dramaqa", "tvqa", "cinepile", "moviecore"]


@click.group()
def questions() -> None:
    """Question banks: import, check, build a session set."""


def read_bank_file(file: Path, fmt: str, strict: bool, allow_missing_keys: bool = False):
    """Read a bank file (on a terminal with a progress bar, gone before any verdict); print its quirks."""
    import sys

    from ..banks import read_bank

    options = {"strict": strict, "allow_missing_keys": allow_missing_keys}
    if not sys.stderr.isatty():  # a log or a pipe gets no progress text at all
        result = read_bank(file, fmt, **options)
    else:
        from tqdm import tqdm

        with tqdm(
            total=_lines_in(file),
            unit=" questions",
            desc=f"reading {file.name}",
            leave=False,
            file=sys.stderr,
            dynamic_ncols=True,
            mininterval=0.2,
        ) as bar:
            result = read_bank(file, fmt, progress=lambda done: bar.update(done - bar.n), **options)
    _print_quirks(result.warnings)
    return result


def _unkeyed_line(result) -> str:
    count = len(result.unkeyed)
    if not count:
        return ""
    return f"; {count:,} without a key (their answers are graded by hand or left out of accuracy)"


def _with_hints(error, consequence: str) -> str:
    """``consequence``, and the options that answer the problems found (the domain names no option)."""
    from ..banks.detection import UNKNOWN_FORMAT
    from ..banks.validation import NO_KEYS

    hints = {NO_KEYS: "--allow-missing-keys takes questions without a key", UNKNOWN_FORMAT: "--format names it"}
    messages = [getattr(problem, "message", "") for problem in error.problems]
    found = [hint for start, hint in hints.items() if any(message.startswith(start) for message in messages)]
    return "; ".join([consequence, *found])


def _print_quirks(warnings) -> None:
    from ..problems import summarize, unique

    warnings = unique(warnings)
    if warnings:
        count = len(warnings)
        click.echo(
            f"warning: {count:,} known quirk{'s' if count != 1 else ''} of published files, imported as "
            f"noted (--strict refuses them):",
            err=True,
        )
        for line in summarize(warnings, "--strict lists them as problems"):
            click.echo(f"  {line}", err=True)


def _lines_in(file: Path) -> int | None:
    """About how many items a line-based file holds (the bar's total); None for a JSON document."""
    if file.suffix.lower() == ".json":
        return None
    with file.open("rb") as handle:
        return max(sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b"")), 1)


def _print_balance(records) -> None:
    from analysis.composition import composition

    from ..banks import records_table
    from ..banks.summary import balance_lines

    for line in balance_lines(composition(records_table(records))):
        click.echo(line)


problems_out_option = click.option(
    "--problems-out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write every problem to this CSV (file, row, field, value, message); the terminal shows each kind once.",
)
missing_keys_option = click.option(
    "--allow-missing-keys",
    is_flag=True,
    help="Take questions without a key (a benchmark's test split): their answers are graded by hand or left out "
    "of accuracy.",
)
strict_option = click.option(
    "--strict",
    is_flag=True,
    help="Refuse the known quirks of published files (NaN or zero-length spans, options "
    "with stray whitespace, integer qids, a question text twice) instead of warning.",
)


@questions.command("check")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(FORMAT_CHOICES), default="auto", show_default=True)
@problems_out_option
@strict_option
@missing_keys_option
def questions_check(file: Path, fmt: str, problems_out: Path | None, strict: bool, allow_missing_keys: bool) -> None:
    """Validate FILE and print its CogME balance; writes nothing (but --problems-out)."""
    from ..problems import InputError

    try:
        result = read_bank_file(file, fmt, strict, allow_missing_keys)
    except InputError as error:
        fail(error, _with_hints(error, "the file is not valid"), problems_out)
    click.echo(
        f"{file.name}: {len(result.records)} questions, format {result.format}, no problems" + _unkeyed_line(result)
    )
    _print_balance(result.records)


@questions.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(FORMAT_CHOICES), default="auto", show_default=True)
@click.option("--bank", "bank_name", help="Bank to add the questions to (default: the file's name).")
@problems_out_option
@strict_option
@missing_keys_option
def questions_import(
    file: Path, fmt: str, bank_name: str | None, problems_out: Path | None, strict: bool, allow_missing_keys: bool
) -> None:
    """Import FILE into a question bank: every question or none."""
    from ..banks import import_bank
    from ..db import transaction
    from ..problems import InputError

    bank_name = bank_name or file.stem
    try:
        result = read_bank_file(file, fmt, strict, allow_missing_keys)
        with transaction(db_factory()) as db:
            import_bank(db, result, bank_name)
    except InputError as error:
        fail(error, _with_hints(error, "nothing was imported"), problems_out)
    click.echo(
        f"imported {len(result.records)} questions ({result.format}) into bank {bank_name!r}; "
        f"{len(result.untagged)} without CogME tags" + _unkeyed_line(result)
    )
    _print_balance(result.records)


@questions.command("tag")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--bank", "bank_name", required=True, help="The bank whose questions to tag.")
def questions_tag(file: Path, bank_name: str) -> None:
    """Set CogME tags from a CSV qid,targets,contents,thinking (replaces those questions' tags)."""
    from ..banks import bank_by_name
    from ..banks.readers import read_tag_file
    from ..banks.store import apply_tags
    from ..db import transaction
    from ..problems import InputError

    try:
        tags = read_tag_file(file)
        with transaction(db_factory()) as db:
            bank = bank_by_name(db, bank_name)
            if bank is None:
                fail(f"no question bank named {bank_name!r}")
            count = apply_tags(db, bank, tags, file.name)
    except InputError as error:
        fail(error, "no tag was changed")
    click.echo(f"tagged {count} questions in bank {bank_name!r}")


@questions.command("build")
@click.option("--bank", "bank_name", required=True, help="The bank to pick from.")
@click.option("--count", default=30, show_default=True, type=click.IntRange(min=1))
@click.option("--rounds", default=5, show_default=True, type=click.IntRange(min=1))
@click.option("--mcq", type=click.IntRange(min=0), help="Exactly this many multiple-choice questions (rest open).")
@click.option("--shot", type=click.IntRange(min=0), help="Exactly this many shot clips (rest scene).")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the set as a native CSV with its round column.",
)
def questions_build(
    bank_name: str, count: int, rounds: int, mcq: int | None, shot: int | None, seed: int, out: Path | None
) -> None:
    """Pick a CogME-balanced set from a bank and deal it into rounds."""
    from analysis.builder import build_set

    from ..banks import bank_by_name, bank_records, records_table
    from ..banks.writers import write_native_csv

    with db_factory()() as db:
        bank = bank_by_name(db, bank_name)
        if bank is None:
            fail(f"no question bank named {bank_name!r}")
        records = {r.qid: r for r in bank_records(db, bank)}
    try:
        built = build_set(records_table(list(records.values())), count, rounds, mcq=mcq, shot=shot, seed=seed)
    except ValueError as error:
        fail(error)
    chosen = built.questions
    click.echo(f"{len(chosen)} questions from {bank_name!r} in {rounds} rounds (seed {seed})")
    for note in built.notes:
        click.echo(f"note: {note}")
    for row in chosen.itertuples():
        tags = records[row.qid].tags.as_text()
        click.echo(
            f"  round {row.round} #{row.position:<2} {row.qid:<12} {row.type:<4} {row.clip or '-':<5} "
            f"{tags['targets']} | {tags['contents']} | {tags['thinking']}"
        )
    click.echo(f"{'element':<14}{'bank':>7}{'bank %':>8}{'set':>6}{'set %':>8}")
    for row in built.comparison().itertuples():
        click.echo(f"{row.element:<14}{row.bank:>7}{row.bank_pct:>8.1f}{row.set:>6}{row.set_pct:>8.1f}")
    if out:
        write_native_csv([replace(records[row.qid], round=int(row.round)) for row in chosen.itertuples()], out)
        click.echo(f"wrote {out}")


@questions.command("list")
def questions_list() -> None:
    """List the banks and their sizes."""
    from sqlalchemy import func, select

    from ..models import Question, QuestionBank, QuestionType

    unkeyed = ((Question.type == QuestionType.MCQ) & Question.answer_index.is_(None)) | (
        (Question.type == QuestionType.OPEN) & (Question.reference_answer == "")
    )
    with db_factory()() as db:
        rows = db.execute(
            select(QuestionBank.name, func.count(Question.id), func.count(Question.id).filter(unkeyed))
            .outerjoin(Question)
            .group_by(QuestionBank.id)
            .order_by(QuestionBank.name)
        ).all()
    if not rows:
        click.echo("no banks yet")
    for name, count, without_key in rows:
        click.echo(f"{name}\t{count}" + (f"\t({without_key} without a key)" if without_key else ""))
