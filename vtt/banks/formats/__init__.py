"""The bank formats vtt reads, each turned into ``(number, native fields)`` items for one validator.

The native format is a table (:mod:`.tables`) or a JSON list (:mod:`.json_files`) of native fields; each benchmark
has an adapter that renames or derives its own fields: :mod:`.dramaqa`, :mod:`.tvqa`, :mod:`.cinepile`,
:mod:`.moviecore`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..fields import KNOWN_COLUMNS, REQUIRED_COLUMNS, passed_through
from . import cinepile, dramaqa, moviecore, tvqa
from .json_files import json_items, jsonl_items
from .tables import TABLE_SUFFIXES, table_rows

FORMATS = ("csv", "json", "dramaqa", "tvqa", "cinepile", "moviecore")
# Per format, native field -> the file's own name for it, so that problems name the field as the file does.
SOURCE_NAMES: dict[str, dict[str, str]] = {
    "csv": {},
    "json": {},
    "dramaqa": dramaqa.SOURCE_NAMES,
    "tvqa": tvqa.SOURCE_NAMES,
    "cinepile": cinepile.SOURCE_NAMES,
    "moviecore": moviecore.SOURCE_NAMES,
}


def native_items(path: Path, fmt: str) -> tuple[Iterator[tuple[int, dict]], str]:
    """Native-field items for a file, and what its numbers count (row, item or line)."""
    if fmt == "csv":
        return table_rows(path, REQUIRED_COLUMNS, KNOWN_COLUMNS), "row"
    if fmt == "moviecore":
        return moviecore.items(path), "item"
    if fmt == "cinepile" and path.suffix.lower() in TABLE_SUFFIXES:
        rows = table_rows(path, cinepile.REQUIRED_COLUMNS)
        return ((n, passed_through(cinepile.native_fields(row, n), row)) for n, row in rows), "row"
    source, unit = (jsonl_items(path), "line") if path.suffix.lower() == ".jsonl" else (json_items(path), "item")
    convert = {
        "json": lambda item, n: item,
        "dramaqa": lambda item, n: dramaqa.native_fields(item),
        "tvqa": lambda item, n: tvqa.native_fields(item),
        "cinepile": cinepile.native_fields,
    }[fmt]

    def native() -> Iterator[tuple[int, dict]]:
        for number, item in source:
            if not isinstance(item, dict) or "_error" in item:
                yield number, {"_error": item.get("_error") if isinstance(item, dict) else "expected an object"}
            else:
                yield number, passed_through(convert(item, number), item)

    return native(), unit
