"""The common shape every importer produces, and the problems it reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from analysis.tables import QUESTION_COLUMNS
from analysis.taxonomy import TagSet


@dataclass
class QuestionRecord:
    qid: str
    text: str
    type: str  # "mcq" | "open"
    choices: list[str] = field(default_factory=list)
    answer_index: int | None = None
    reference_answer: str = ""
    video: str | None = None
    start: float | None = None
    end: float | None = None
    clip: str | None = None  # "shot" | "scene"
    category: str | None = None
    round: int | None = None
    tags: TagSet = field(default_factory=TagSet)
    source: dict[str, Any] = field(default_factory=dict)

    @property
    def answer_text(self) -> str:
        if self.type == "mcq" and self.answer_index is not None:
            return self.choices[self.answer_index]
        return self.reference_answer


def records_table(records: list[QuestionRecord]) -> pd.DataFrame:
    """The ``questions`` table of ``analysis.tables`` for these records."""
    rows = [
        {
            "qid": r.qid,
            "question": r.text,
            "type": r.type,
            "choices": list(r.choices),
            "answer": r.answer_text,
            "answer_index": r.answer_index,
            "clip": r.clip,
            "category": r.category,
            "round": r.round,
            "targets": r.tags.targets,
            "key_target": r.tags.key_target,
            "contents": r.tags.contents,
            "thinking": r.tags.thinking,
        }
        for r in records
    ]
    frame = pd.DataFrame(rows, columns=list(QUESTION_COLUMNS))
    return frame.astype({"answer_index": "Int64", "round": "Int64", "qid": str})
