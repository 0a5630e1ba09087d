"""What a question set is made of: CogME element counts, question types and clip kinds."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .frames import CLIP_KINDS, QUESTION_TYPES, require_columns, tag_table
from .taxonomy import element_order


@dataclass(frozen=True)
class Composition:
    elements: pd.DataFrame  # module, element, questions (every element of the taxonomy, zeros included)
    types: dict[str, int]   # mcq / open -> count
    clips: dict[str, int]   # shot / scene / none -> count
    total: int
    untagged: list[str]     # qids without any CogME tag

    def element_counts(self) -> dict[str, int]:
        return dict(zip(self.elements["element"], self.elements["questions"].astype(int)))


def composition(questions: pd.DataFrame) -> Composition:
    require_columns(questions, ("qid", "type", "clip", "targets", "key_target", "contents", "thinking"), "questions")
    tags = tag_table(questions)
    counts = tags.groupby(["module", "element"]).size()
    order = pd.MultiIndex.from_tuples([(m.value, e) for m, e in element_order()], names=["module", "element"])
    elements = counts.reindex(order, fill_value=0).rename("questions").reset_index()
    types = {t: int((questions["type"] == t).sum()) for t in QUESTION_TYPES}
    clips = {c: int((questions["clip"] == c).sum()) for c in CLIP_KINDS}
    clips["none"] = len(questions) - sum(clips.values())
    tagged = set(tags["qid"])
    untagged = [q for q in questions["qid"].astype(str) if q not in tagged]
    return Composition(elements, types, clips, len(questions), untagged)
