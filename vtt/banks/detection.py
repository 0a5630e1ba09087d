"""Which format a bank file is in, told from its extension and its first record."""

from __future__ import annotations

from pathlib import Path

from ..problems import InputError, Problem, load_json
from .formats.json_files import first_jsonl_item
from .formats.tables import TABLE_SUFFIXES, table_header

UNKNOWN_FORMAT = "cannot tell the format"


def detect_format(path: Path) -> str:
    """Guess a file's format from its extension and first record."""
    suffix = path.suffix.lower()
    if suffix in TABLE_SUFFIXES:
        return "cinepile" if {"answer_key", "choices"} <= table_header(path) else "csv"
    if suffix == ".jsonl":
        first = first_jsonl_item(path)
        return "tvqa" if "a0" in first else "cinepile" if "answer_key" in first else "json"
    if suffix == ".json":
        data = load_json(path)
        if isinstance(data, dict):
            return "moviecore"
        first = data[0] if isinstance(data, list) and data and isinstance(data[0], dict) else {}
        if "que" in first:
            return "dramaqa"
        if "a0" in first:
            return "tvqa"
        if "answer_key" in first:
            return "cinepile"
        return "json"
    raise InputError(
        [Problem(path.name, None, None, f"{UNKNOWN_FORMAT} from the extension {suffix or '(none)'}; name its format")]
    )
