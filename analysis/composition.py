"""What a question set is made of: CogME element counts, question types and clip kinds."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .tables import CLIP_KINDS, QUESTION_TYPES, require_columns, tag_table
from .taxonomy import element_order


@dataclass(frozen=True)
class Composition:
    elements: pd.DataFrame  # module, element, questions (every element of the taxonomy, zeros included)
    types: dict[str, int]  # mcq / open -> count
    clips: dict[str, int]  # shot / scene / none -> count
    total: int
    untagged: list[str]  # qids without any CogME tag

    def element_counts(self) -> dict[str, int]:
        return dict(zip(self.elements["element"], self.elements["questions"].astype(int)))

    @classmethod
    def from_counts(
        cls, element_counts: pd.Series, types: dict[str, int], clips: dict[str, int], total: int, untagged: list[str]
    ) -> Composition:
        """From counts made elsewhere (e.g. SQL): ``element_counts`` indexed by (module, element)."""
        order = pd.MultiIndex.from_tuples([(m.value, e) for m, e in element_order()], names=["module", "element"])
        elements = element_counts.reindex(order, fill_value=0).rename("questions").reset_index()
        counted_types = {t: int(types.get(t, 0)) for t in QUESTION_TYPES}
        counted_clips = {c: int(clips.get(c, 0)) for c in CLIP_KINDS}
        counted_clips["none"] = total - sum(counted_clips.values())
        return cls(elements, counted_types, counted_clips, total, untagged)


def composition(questions: pd.DataFrame) -> Composition:
    require_columns(questions, ("qid", "type", "clip", "targets", "key_target", "contents", "thinking"), "questions")
    tags = tag_table(questions)
    tagged = set(tags["qid"])
    return Composition.from_counts(
        tags.groupby(["module", "element"]).size(),
        types=questions["type"].value_counts().to_dict(),
        clips=questions["clip"].value_counts().to_dict(),
        total=len(questions),
        untagged=[q for q in questions["qid"].astype(str) if q not in tagged],
    )
