"""Problems with user input, located by file, row and field, reported all at once."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input file, located so a person can find and fix it."""

    file: str
    row: int | None  # spreadsheet row for CSV (header = 1), item number for JSON, line for JSONL
    field: str | None
    message: str
    unit: str = "row"

    def __str__(self) -> str:
        where = [self.file]
        if self.row is not None:
            where.append(f"{self.unit} {self.row}")
        if self.field:
            where.append(f"field '{self.field}'")
        return f"{': '.join(where)}: {self.message}"


class InputError(ValueError):
    """An input that cannot be imported; carries every problem found, not just the first."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        count = len(problems)
        super().__init__(f"{count} problem{'s' if count != 1 else ''}:\n" + "\n".join(f"  {p}" for p in problems))


def load_json(path: Path) -> Any:
    """A JSON file's content; a syntax error becomes an :class:`InputError` naming the line."""
    try:
        with path.open(encoding="utf-8-sig") as handle:
            return json.load(handle)
    except json.JSONDecodeError as exc:
        raise InputError([Problem(path.name, exc.lineno, None, f"not valid JSON: {exc.msg}", unit="line")]) from None
