"""The native fields every bank format is read into: the columns of the native CSV, and what adapters share."""

from __future__ import annotations

NATIVE_COLUMNS = (
    "qid",
    "question",
    "type",
    "choices",
    "answer",
    "video",
    "start",
    "end",
    "clip",
    "targets",
    "contents",
    "thinking",
    "category",
    "round",
)
TAG_FIELDS = ("targets", "contents", "thinking", "key_target")
# Readers may add private native fields: _error (the item cannot be read), _extra (a CSV row's surplus
# values) and _answer_text (the text of the correct option, given beside its index).
KNOWN_COLUMNS = NATIVE_COLUMNS + ("key_target",)
REQUIRED_COLUMNS = ("qid", "question", "answer")
TAG_FILE_REQUIRED = ("qid", "targets", "contents", "thinking")


def renamed(item: dict, renamed_fields: dict[str, str]) -> dict:
    """The native fields a benchmark only renames (``renamed_fields``: native name -> the benchmark's own)."""
    return {native: item.get(own) for native, own in renamed_fields.items()}


def passed_through(native: dict, item: dict) -> dict:
    """Keep what every format may carry as is: CogME tags (a tagged export) and a CSV row's surplus values."""
    for key in TAG_FIELDS + ("_extra",):
        if key in item and key not in native:
            native[key] = item[key]
    return native
