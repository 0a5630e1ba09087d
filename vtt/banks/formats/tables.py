"""Tables of questions: a CSV/TSV file or an .xlsx workbook's first sheet, read into the same ``(row, fields)`` pairs.

The header is checked first (required columns, repeats, typos of known columns); a file with a bad header yields
nothing.
"""

from __future__ import annotations

import csv
import difflib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...problems import InputError, Problem

TABLE_SUFFIXES = (".csv", ".tsv", ".xlsx")
DELIMITER_NAMES = {",": "comma", ";": "';'", "\t": "tab"}
# Close enough to a known column to be its typo ('target', 'choice', 'id'), not a column of its own.
TYPO_CUTOFF = 0.8


def table_rows(path: Path, required: tuple[str, ...], known: tuple[str, ...] = ()) -> Iterator[tuple[int, dict]]:
    """The rows of a CSV/TSV file or an .xlsx workbook's first sheet, as the same ``(row, fields)`` pairs."""
    if path.suffix.lower() == ".xlsx":
        return _xlsx_rows(path, required, known)
    return _csv_rows(path, required, known)


def table_header(path: Path) -> set[str]:
    """The column names of a table's header (stripped, lower case), read without checking them."""
    if path.suffix.lower() == ".xlsx":
        return {h.strip().lower() for h in next(_xlsx_table(path), (1, []))[1]}
    with path.open(newline="", encoding="utf-8-sig") as handle:
        return {h.strip().lower() for h in next(csv.reader(handle, delimiter=_delimiter(path)), [])}


def _delimiter(path: Path) -> str:
    return "\t" if path.suffix.lower() == ".tsv" else ","


def _xlsx_table(path: Path) -> Iterator[tuple[int, list[str]]]:
    """The first sheet's non-empty rows as ``(spreadsheet row number, cell texts)``, the header first.

    Cells become the text a CSV export would hold (3, not 3.0), so both give the same records.
    """
    from zipfile import BadZipFile

    from openpyxl import load_workbook

    try:
        book = load_workbook(path, read_only=True, data_only=True)
    except (BadZipFile, KeyError, OSError, ValueError) as exc:
        raise InputError([Problem(path.name, None, None, f"is not an .xlsx workbook ({exc})")]) from None
    try:
        sheet = book.worksheets[0]
        for number, cells in enumerate(sheet.iter_rows(values_only=True), start=1):
            texts = [_cell_text(value) for value in cells]
            while texts and not texts[-1].strip():  # formatting often stretches a sheet past its data
                texts.pop()
            if texts or number == 1:
                yield number, texts
    finally:
        book.close()


def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def _xlsx_rows(path: Path, required: tuple[str, ...], known: tuple[str, ...]) -> Iterator[tuple[int, dict]]:
    """The rows of an .xlsx workbook's first sheet (header in row 1), numbered as the spreadsheet shows them."""
    table = _xlsx_table(path)
    _, header_cells = next(table, (1, []))  # an empty sheet: every required column is missing
    header = [h.strip().lower() for h in header_cells]
    header_problems = _header_problems(path.name, header, ",", required, known)
    if header_problems:
        raise InputError(header_problems)
    for number, texts in table:
        row = dict(zip(header, texts + [""] * (len(header) - len(texts))))
        extra = texts[len(header) :]
        yield number, ({"_extra": extra, **row} if extra else row)


def _csv_rows(path: Path, required: tuple[str, ...], known: tuple[str, ...] = ()) -> Iterator[tuple[int, dict]]:
    """The rows of a CSV/TSV file after a header check; ``known`` columns, when given, catch typos.

    Strict parsing: a stray quote would otherwise swallow the rest of the file into one value.
    """
    delimiter = _delimiter(path)
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle, delimiter=delimiter, strict=True)
        first_line = 1  # of the row being read; a quoted value may span lines
        try:
            header = [h.strip().lower() for h in reader.fieldnames or []]
            header_problems = _header_problems(path.name, header, delimiter, required, known)
            if header_problems:
                raise InputError(header_problems)
            reader.fieldnames = header
            first_line = reader.line_num + 1
            for row_number, row in enumerate(reader, start=2):
                if None in row:
                    yield row_number, {"_extra": row.pop(None), **row}
                else:
                    yield row_number, row
                first_line = reader.line_num + 1
        except csv.Error as exc:
            message = (
                "a quoted value in the row starting on this line is never closed (a stray '\"'?)"
                if str(exc) == "unexpected end of data"
                else f"is not valid CSV: {exc}"
            )
            raise InputError([Problem(path.name, first_line, None, message, unit="line")]) from None


def _header_problems(
    file: str, header: list[str], delimiter: str, required: tuple[str, ...], known: tuple[str, ...]
) -> list[Problem]:
    problems = []
    missing = [c for c in required if c not in header]
    if missing:
        line = delimiter.join(header)
        for other, name in DELIMITER_NAMES.items():
            if other != delimiter and set(required) <= {cell.strip() for cell in line.split(other)}:
                problems.append(
                    Problem(
                        file,
                        1,
                        None,
                        f"the header looks {name}-separated; vtt reads comma-separated .csv and tab-separated .tsv",
                    )
                )
        problems += [Problem(file, 1, c, "required column is missing") for c in missing]
    problems += [
        Problem(file, 1, column, f"column appears {count} times")
        for column, count in Counter(header).items()
        if column and count > 1
    ]
    absent = [c for c in known if c not in header]
    for column in (c for c in header if known and c not in known):
        typo_of = difflib.get_close_matches(column, absent, n=1, cutoff=TYPO_CUTOFF)
        if typo_of:
            problems.append(Problem(file, 1, None, f"unknown column {column!r} (did you mean {typo_of[0]!r}?)"))
    return problems
