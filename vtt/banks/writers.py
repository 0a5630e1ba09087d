"""Writing records back out in the native CSV (the format every other reader maps to)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from .fields import NATIVE_COLUMNS
from .records import QuestionRecord


def native_row(record: QuestionRecord) -> dict[str, str]:
    def number(value: float | None) -> str:
        return "" if value is None else f"{value:g}"

    return {
        "qid": record.qid,
        "question": record.text,
        "type": record.type,
        "choices": _choices_cell(record.choices),
        "answer": str(record.answer_index) if record.type == "mcq" else record.reference_answer,
        "video": record.video or "",
        "start": number(record.start),
        "end": number(record.end),
        "clip": record.clip or "",
        **record.tags.as_text(),
        "category": record.category or "",
        "round": "" if record.round is None else str(record.round),
    }


def _choices_cell(choices: list[str]) -> str:
    """``a|b|c``, or a JSON list when an option itself contains '|' (the reader takes both)."""
    return json.dumps(choices, ensure_ascii=False) if any("|" in c for c in choices) else "|".join(choices)


def write_native_csv(records: list[QuestionRecord], path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=NATIVE_COLUMNS)
        writer.writeheader()
        writer.writerows(native_row(r) for r in records)
