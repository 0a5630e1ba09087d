"""JSON files of questions: a JSON list of objects, or JSON Lines (an object a line), as ``(number, item)`` pairs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from ...problems import InputError, Problem, load_json

# JSON nested deeper than Python's recursion limit (~1,000 levels) cannot be read: a problem, not a crash.
TOO_DEEP = "is nested too deeply to read (JSON deeper than about 1,000 levels)"


def json_items(path: Path) -> Iterator[tuple[int, dict]]:
    """The items of a JSON list, numbered from 1."""
    data = load_json(path)
    if not isinstance(data, list):
        raise InputError([Problem(path.name, None, None, "expected a JSON list of question objects")])
    yield from enumerate(data, start=1)


def jsonl_items(path: Path) -> Iterator[tuple[int, dict]]:
    """The objects of a JSON Lines file, numbered by line; a line that is no JSON becomes an ``_error`` item."""
    with path.open(encoding="utf-8-sig") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as exc:
                yield number, {"_error": f"not valid JSON: {exc.msg}"}
            except RecursionError:
                yield number, {"_error": TOO_DEEP}


def first_jsonl_item(path: Path) -> dict:
    """The first object of a JSON Lines file, or {} when it does not start with one."""
    with path.open(encoding="utf-8-sig") as handle:
        for line in handle:
            if line.strip():
                try:
                    item = json.loads(line)
                except (json.JSONDecodeError, RecursionError):
                    return {}
                return item if isinstance(item, dict) else {}
    return {}
