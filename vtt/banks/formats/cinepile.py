"""CinePile (a CSV/TSV/XLSX table, JSON Lines or a JSON list): its fields as native fields."""

from __future__ import annotations

from ..fields import renamed

REQUIRED_COLUMNS = ("question", "choices")
# Native field -> CinePile's own, which names the field in problems as the file does.  CinePile names the key
# twice, by position and by text; the validator checks that they agree.
RENAMED_FIELDS = {
    "answer": "answer_key_position",
    "_answer_text": "answer_key",
    "video": "yt_clip_link",
    "category": "question_category",
}
SOURCE_NAMES = RENAMED_FIELDS


def native_fields(item: dict, number: int) -> dict:
    """The native fields of the item numbered ``number`` (which names it when it has no qid of its own)."""
    return {
        **renamed(item, RENAMED_FIELDS),
        "qid": item.get("qid") or item.get("question_id") or f"cinepile-{number:06d}",
        "question": item.get("question"),
        "type": "mcq",
        "choices": item.get("choices"),
        "source": {
            k: item.get(k)
            for k in ("movie_name", "answer_key", "hard_split", "visual_reliance")
            if item.get(k) not in (None, "")
        },
    }
