"""TVQA (JSON Lines, or a JSON list): its fields as native fields."""

from __future__ import annotations

from ..fields import renamed

# Native field -> TVQA's own field that is only renamed ...
RENAMED_FIELDS = {"question": "q", "answer": "answer_idx", "video": "vid_name", "category": "show_name"}
# ... or derived from one of its own; together they name the fields in problems as the file does.
DERIVED_FIELDS = {"choices": "a0..a4", "start": "ts", "end": "ts"}
SOURCE_NAMES = {**RENAMED_FIELDS, **DERIVED_FIELDS}


def native_fields(item: dict) -> dict:
    start = end = None
    ts = str(item.get("ts") or "")
    if ts:
        start, _, end = ts.partition("-")
    return {
        **renamed(item, RENAMED_FIELDS),
        "qid": item.get("qid"),
        "type": "mcq",
        "choices": [item.get(f"a{i}") for i in range(5) if f"a{i}" in item],
        "start": start,
        "end": end,
        "source": {"ts": ts},
    }
