"""MovieCORE (a JSON object ``{video_file: [questions]}``): its open questions as native-field items."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ...problems import InputError, Problem, load_json
from ..fields import passed_through, renamed

# Native field -> MovieCORE's own, which names the field in problems as the file does.
RENAMED_FIELDS = {"category": "classification"}
SOURCE_NAMES = RENAMED_FIELDS


def items(path: Path) -> Iterator[tuple[int, dict]]:
    """Every question of the file as ``(number, native fields)``, numbered across the videos."""
    data = load_json(path)
    if not isinstance(data, dict):
        raise InputError([Problem(path.name, None, None, "expected {video_file: [questions]}")])
    number = 0
    for video, questions in data.items():
        if not isinstance(questions, list):
            number += 1
            yield number, {"_error": f"video {video!r} should map to a list of questions"}
            continue
        stem = Path(video).stem
        for index, item in enumerate(questions, start=1):
            number += 1
            if not isinstance(item, dict):
                yield number, {"_error": "expected a question object"}
                continue
            yield (
                number,
                passed_through(
                    {
                        **renamed(item, RENAMED_FIELDS),
                        "qid": item.get("qid") or f"{stem}-{index:02d}",
                        "question": item.get("question"),
                        "type": "open",
                        "answer": item.get("answer"),
                        "video": video,
                    },
                    item,
                ),
            )
