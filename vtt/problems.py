"""Problems with user input, located by file, row and field, reported all at once."""

from __future__ import annotations

import csv
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis.textio import read_json

SHOWN_ROWS = 5  # rows named on a summary line of a problem that repeats
SUMMARY_LINES = 30  # at most this many kinds of problem on the terminal; the rest go to --problems-out


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input file, located so a person can find and fix it."""

    file: str
    row: int | None  # spreadsheet row for CSV (header = 1), item number for JSON, line for JSONL
    field: str | None
    message: str
    unit: str = "row"
    value: str | None = None  # what the field held, when there was something (for --problems-out)

    def __str__(self) -> str:
        where = [self.file]
        if self.row is not None:
            where.append(f"{self.unit} {self.row}")
        if self.field:
            where.append(f"field '{self.field}'")
        return f"{': '.join(where)}: {self.message}"


def unique(problems: list[Problem]) -> list[Problem]:
    """The same problem of the same row once (a TVQA ``ts`` of ``NaN-NaN`` is one field, not two problems)."""
    return list(dict.fromkeys(problems))


def summarize(problems: list[Problem], more_hint: str) -> list[str]:
    """Problems as a person reads them: each kind of problem (file, field, message) on one line, with its
    count and first rows when it repeats; at most ``SUMMARY_LINES`` kinds.  ``more_hint``: where the reader finds
    the rest, in the caller's words (a file, an option, a form's box)."""
    rows_by_kind: dict[tuple[str, str | None, str, str], list[int | None]] = defaultdict(list)
    for problem in unique(problems):
        rows_by_kind[(problem.file, problem.field, problem.message, problem.unit)].append(problem.row)
    lines = []
    for (file, field, message, unit), rows in list(rows_by_kind.items())[:SUMMARY_LINES]:
        if len(rows) == 1:
            lines.append(str(Problem(file, rows[0], field, message, unit)))
            continue
        shown = ", ".join(str(row) for row in rows[:SHOWN_ROWS])
        if len(rows) > SHOWN_ROWS:
            shown += f", ...; {more_hint}"
        lines.append(f"{file}: {len(rows):,} {unit}s ({shown}): " + (f"field '{field}': " if field else "") + message)
    hidden = len(rows_by_kind) - SUMMARY_LINES
    if hidden > 0:
        lines.append(f"... and {hidden:,} more kinds of problem ({more_hint})")
    return lines


def write_problems_csv(problems: list[Problem], path: Path) -> None:
    """Every problem, one row each: file, row, field, value, message (UTF-8, for a spreadsheet)."""
    with Path(path).open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["file", "row", "field", "value", "message"])
        for problem in problems:
            writer.writerow(
                [
                    problem.file,
                    problem.row if problem.row is not None else "",
                    problem.field or "",
                    problem.value if problem.value is not None else "",
                    problem.message,
                ]
            )


class InputError(ValueError):
    """An input that cannot be imported; carries every problem found, not just the first."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        count = len(problems)
        super().__init__(f"{count} problem{'s' if count != 1 else ''}:\n" + "\n".join(f"  {p}" for p in problems))


def load_json(path: Path) -> Any:
    """A JSON file's content; a syntax error becomes an :class:`InputError` naming the line."""
    return read_json(path, lambda line, message: InputError([Problem(path.name, line, None, message, unit="line")]))
