"""DramaQA (a JSON list of items): its fields as native fields."""

from __future__ import annotations

from ..fields import renamed

# Native field -> DramaQA's own, which names the field in problems as the file does.
RENAMED_FIELDS = {"question": "que", "choices": "answers", "answer": "correct_idx", "video": "vid", "clip": "videoType"}
SOURCE_NAMES = RENAMED_FIELDS


def native_fields(item: dict) -> dict:
    return {
        **renamed(item, RENAMED_FIELDS),
        "qid": item.get("qid"),
        "type": "mcq",
        "category": _levels(item),
        "source": {k: item.get(k) for k in ("shot_contained", "q_level_mem", "q_level_logic")},
    }


def _levels(item: dict) -> str | None:
    mem, logic = item.get("q_level_mem"), item.get("q_level_logic")
    return None if mem is None and logic is None else f"memory {mem} / logic {logic}"
