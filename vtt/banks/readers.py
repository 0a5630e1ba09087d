"""Readers for question-bank files: the native CSV/JSON and DramaQA, TVQA, CinePile, MovieCORE.

Every reader turns its file into ``(row number, native fields)`` pairs; one validator then turns
native fields into :class:`QuestionRecord` s and collects every problem with its row and field.
A file with any problem yields no records at all.
"""

from __future__ import annotations

import ast
import csv
import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis.taxonomy import TagSet, parse_tags

from ..problems import InputError, Problem
from .records import QuestionRecord

FORMATS = ("csv", "json", "dramaqa", "tvqa", "cinepile", "moviecore")
NATIVE_COLUMNS = ("qid", "question", "type", "choices", "answer", "video", "start", "end", "clip",
                  "targets", "contents", "thinking", "category", "round")
REQUIRED_COLUMNS = ("qid", "question", "answer")
CINEPILE_REQUIRED = ("question", "choices")
TAG_FIELDS = ("targets", "contents", "thinking", "key_target")

Progress = Callable[[int], None]  # called with the number of items read so far


@dataclass
class ReadResult:
    path: Path
    format: str
    records: list[QuestionRecord] = field(default_factory=list)

    @property
    def untagged(self) -> list[str]:
        return [r.qid for r in self.records if r.tags.is_empty]


# --- format detection -------------------------------------------------------------------------

def detect_format(path: Path) -> str:
    """Guess a file's format from its extension and first record."""
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv"):
        with path.open(newline="", encoding="utf-8-sig") as handle:
            header = {h.strip().lower() for h in next(csv.reader(handle), [])}
        return "cinepile" if {"answer_key", "choices"} <= header else "csv"
    if suffix == ".jsonl":
        first = _first_jsonl(path)
        return "tvqa" if "a0" in first else "cinepile" if "answer_key" in first else "json"
    if suffix == ".json":
        data = _load_json(path)
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
    raise InputError([Problem(path.name, None, None,
                             f"cannot tell the format from the extension {suffix or '(none)'}; pass --format")])


def _first_jsonl(path: Path) -> dict:
    with path.open(encoding="utf-8-sig") as handle:
        for line in handle:
            if line.strip():
                try:
                    item = json.loads(line)
                except json.JSONDecodeError:
                    return {}
                return item if isinstance(item, dict) else {}
    return {}


def _load_json(path: Path) -> Any:
    try:
        with path.open(encoding="utf-8-sig") as handle:
            return json.load(handle)
    except json.JSONDecodeError as exc:
        raise InputError([Problem(path.name, exc.lineno, None, f"not valid JSON: {exc.msg}", unit="line")]) from None


# --- raw items per format: (row, native fields) -------------------------------------------------

def _csv_rows(path: Path, required: tuple[str, ...]) -> Iterator[tuple[int, dict]]:
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle, delimiter="\t" if path.suffix.lower() == ".tsv" else ",")
        header = [h.strip().lower() for h in reader.fieldnames or []]
        missing = [c for c in required if c not in header]
        if missing:
            raise InputError([Problem(path.name, 1, c, "required column is missing") for c in missing])
        reader.fieldnames = header
        for row_number, row in enumerate(reader, start=2):
            if None in row:
                yield row_number, {"_extra": row.pop(None), **row}
            else:
                yield row_number, row


def _json_items(path: Path) -> Iterator[tuple[int, dict]]:
    data = _load_json(path)
    if not isinstance(data, list):
        raise InputError([Problem(path.name, None, None, "expected a JSON list of question objects")])
    for number, item in enumerate(data, start=1):
        yield number, item


def _jsonl_items(path: Path) -> Iterator[tuple[int, dict]]:
    with path.open(encoding="utf-8-sig") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as exc:
                yield number, {"_error": f"not valid JSON: {exc.msg}"}


def _dramaqa(item: dict) -> dict:
    shots = item.get("shot_contained")
    return {
        "qid": item.get("qid"), "question": item.get("que"), "type": "mcq", "choices": item.get("answers"),
        "answer": item.get("correct_idx"), "video": item.get("vid"), "clip": item.get("videoType"),
        "category": _levels(item), "source": {"shot_contained": shots, "q_level_mem": item.get("q_level_mem"),
                                             "q_level_logic": item.get("q_level_logic")},
    }


def _levels(item: dict) -> str | None:
    mem, logic = item.get("q_level_mem"), item.get("q_level_logic")
    return None if mem is None and logic is None else f"memory {mem} / logic {logic}"


def _tvqa(item: dict) -> dict:
    start = end = None
    ts = str(item.get("ts") or "")
    if ts:
        start, _, end = ts.partition("-")
    return {
        "qid": item.get("qid"), "question": item.get("q"), "type": "mcq",
        "choices": [item.get(f"a{i}") for i in range(5) if f"a{i}" in item],
        "answer": item.get("answer_idx"), "video": item.get("vid_name"), "start": start, "end": end,
        "category": item.get("show_name"), "source": {"ts": ts},
    }


def _cinepile(item: dict, number: int) -> dict:
    position = item.get("answer_key_position")
    key = item.get("answer_key")
    return {
        "qid": item.get("qid") or item.get("question_id") or f"cinepile-{number:06d}",
        "question": item.get("question"), "type": "mcq", "choices": _choice_list(item.get("choices")),
        "answer": position if position not in (None, "") else key, "video": item.get("yt_clip_link"),
        "category": item.get("question_category"),
        "source": {k: item.get(k) for k in ("movie_name", "answer_key", "hard_split", "visual_reliance")
                   if item.get(k) not in (None, "")},
    }


def _choice_list(value: Any) -> Any:
    """CinePile choices arrive as a list, or in CSV as a Python/JSON list literal or a |-list."""
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            return ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            return value
    return value


def _moviecore(path: Path) -> Iterator[tuple[int, dict]]:
    data = _load_json(path)
    if not isinstance(data, dict):
        raise InputError([Problem(path.name, None, None, "expected {video_file: [questions]}")])
    number = 0
    for video, items in data.items():
        if not isinstance(items, list):
            number += 1
            yield number, {"_error": f"video {video!r} should map to a list of questions"}
            continue
        stem = Path(video).stem
        for index, item in enumerate(items, start=1):
            number += 1
            if not isinstance(item, dict):
                yield number, {"_error": "expected a question object"}
                continue
            yield number, {
                "qid": item.get("qid") or f"{stem}-{index:02d}", "question": item.get("question"), "type": "open",
                "answer": item.get("answer"), "video": video, "category": item.get("classification"),
                **{k: item[k] for k in TAG_FIELDS if k in item},
            }


def _with_tags(native: dict, item: dict) -> dict:
    """Benchmark files may carry CogME tags already (a tagged export): keep them."""
    for key in TAG_FIELDS:
        if key in item and key not in native:
            native[key] = item[key]
    return native


def _items(path: Path, fmt: str) -> tuple[Iterator[tuple[int, dict]], str]:
    """Native-field items for a file, and what its numbers count (row, item or line)."""
    if fmt == "csv":
        return _csv_rows(path, REQUIRED_COLUMNS), "row"
    if fmt == "moviecore":
        return _moviecore(path), "item"
    if fmt == "cinepile" and path.suffix.lower() in (".csv", ".tsv"):
        return ((n, _with_tags(_cinepile(row, n), row)) for n, row in _csv_rows(path, CINEPILE_REQUIRED)), "row"
    source, unit = (_jsonl_items(path), "line") if path.suffix.lower() == ".jsonl" else (_json_items(path), "item")
    convert = {"json": lambda item, n: item, "dramaqa": lambda item, n: _dramaqa(item),
               "tvqa": lambda item, n: _tvqa(item), "cinepile": _cinepile}[fmt]

    def native() -> Iterator[tuple[int, dict]]:
        for number, item in source:
            if not isinstance(item, dict) or "_error" in item:
                yield number, {"_error": item.get("_error") if isinstance(item, dict) else "expected an object"}
            else:
                yield number, _with_tags(convert(item, number), item)
    return native(), unit


# --- validation of native fields ---------------------------------------------------------------

class _RowCheck:
    """Validates the native fields of one item, recording problems against its file and row."""

    def __init__(self, file: str, row: int, unit: str, problems: list[Problem]):
        self.file, self.row, self.unit, self.problems = file, row, unit, problems

    def problem(self, field_name: str | None, message: str) -> None:
        self.problems.append(Problem(self.file, self.row, field_name, message, self.unit))

    def record(self, fields: dict) -> QuestionRecord | None:
        before = len(self.problems)
        if "_error" in fields:
            self.problem(None, fields["_error"])
            return None
        if fields.get("_extra"):
            self.problem(None, f"has {len(fields['_extra'])} more value(s) than the header has columns")
        qid = _text(fields.get("qid"))
        if not qid:
            self.problem("qid", "is empty")
        question = _text(fields.get("question"))
        if not question:
            self.problem("question", "is empty")
        choices = self.choices(fields.get("choices"))
        qtype = self.question_type(fields.get("type"), choices)
        answer_index, reference = self.answer(qtype, choices, fields.get("answer"))
        start, end = self.number(fields, "start"), self.number(fields, "end")
        if start is not None and end is not None and end <= start:
            self.problem("end", f"must be after start ({end:g} <= {start:g})")
        clip = _text(fields.get("clip")).lower() or None
        if clip not in (None, "shot", "scene"):
            self.problem("clip", f"must be 'shot' or 'scene', not {clip!r}")
        tags = parse_tags(fields.get("targets"), fields.get("contents"), fields.get("thinking"),
                          _text(fields.get("key_target")) or None)
        for message in tags.problems:
            self.problem(_tag_field(message), message)
        round_number = self.round(fields.get("round"))
        if len(self.problems) > before:
            return None
        return QuestionRecord(
            qid=qid, text=question, type=qtype, choices=choices, answer_index=answer_index,
            reference_answer=reference, video=_text(fields.get("video")) or None, start=start, end=end,
            clip=clip, category=_text(fields.get("category")) or None, round=round_number, tags=tags,
            source=_jsonable(fields.get("source") or {}),
        )

    def choices(self, value: Any) -> list[str]:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return []
        if isinstance(value, (list, tuple)):
            items = [_text(v) for v in value]
        elif isinstance(value, str):
            items = [part.strip() for part in value.split("|")] if value.strip() else []
        else:
            self.problem("choices", f"expected a list or '|'-separated text, got {type(value).__name__}")
            return []
        if any(not item for item in items):
            self.problem("choices", "has an empty option")
        return items

    def question_type(self, value: Any, choices: list[str]) -> str:
        qtype = _text(value).lower() or ("mcq" if choices else "open")
        qtype = {"multiple-choice": "mcq", "multiple choice": "mcq", "mc": "mcq", "open-ended": "open"}.get(qtype, qtype)
        if qtype not in ("mcq", "open"):
            self.problem("type", f"must be 'mcq' or 'open', not {qtype!r}")
        elif qtype == "mcq" and len(choices) < 2:
            self.problem("choices", f"a multiple-choice question needs at least 2 options, has {len(choices)}")
        elif qtype == "open" and choices:
            self.problem("choices", "an open question has no options")
        return qtype

    def answer(self, qtype: str, choices: list[str], value: Any) -> tuple[int | None, str]:
        text = _text(value)
        if qtype != "mcq":
            if not text:
                self.problem("answer", "an open question needs a reference answer")
            return None, text
        if len(choices) < 2:
            return None, ""
        if not text:
            self.problem("answer", "is empty; give the 0-based index or the text of the correct option")
            return None, ""
        if text.lstrip("-").isdigit():
            index = int(text)
            if 0 <= index < len(choices):
                return index, ""
            self.problem("answer", f"index {index} is out of range 0-{len(choices) - 1}")
            return None, ""
        folded = [c.casefold() for c in choices]
        if text.casefold() in folded:
            return folded.index(text.casefold()), ""
        self.problem("answer", f"{text!r} is neither an option index nor the text of an option")
        return None, ""

    def number(self, fields: dict, name: str) -> float | None:
        text = _text(fields.get(name))
        if not text:
            return None
        try:
            value = float(text)
        except ValueError:
            self.problem(name, f"must be seconds (a number), not {text!r}")
            return None
        if not math.isfinite(value) or value < 0:
            self.problem(name, f"must be a non-negative number of seconds, not {text!r}")
            return None
        return value

    def round(self, value: Any) -> int | None:
        text = _text(value)
        if not text:
            return None
        if not text.isdigit() or int(text) < 1:
            self.problem("round", f"must be a round number 1, 2, ..., not {text!r}")
            return None
        return int(text)


def _tag_field(message: str) -> str:
    lowered = message.lower()
    for module, name in (("thinking", "thinking"), ("content", "contents")):
        if module in lowered:
            return name
    return "targets"


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _jsonable(value: dict) -> dict:
    return json.loads(json.dumps(value, default=str))


TAG_FILE_REQUIRED = ("qid", "targets", "contents", "thinking")


def read_tag_file(path: str | Path) -> dict[str, tuple[int, TagSet]]:
    """A tagging CSV (``qid,targets,contents,thinking`` as in the native format): qid -> (row, tags).

    Every row must carry a complete, valid tag set; raise :class:`InputError` listing every problem.
    """
    path = Path(path)
    problems: list[Problem] = []
    tags: dict[str, tuple[int, TagSet]] = {}
    try:
        for row, fields in _csv_rows(path, TAG_FILE_REQUIRED):
            qid = _text(fields.get("qid"))
            check = _RowCheck(path.name, row, "row", problems)
            if not qid:
                check.problem("qid", "is empty")
            tagset = parse_tags(fields.get("targets"), fields.get("contents"), fields.get("thinking"),
                                _text(fields.get("key_target")) or None)
            for message in tagset.problems:
                check.problem(_tag_field(message), message)
            if tagset.is_empty and not tagset.problems:
                check.problem("targets", "no tags given")
            if qid in tags:
                check.problem("qid", f"{qid!r} repeats row {tags[qid][0]}")
            elif qid:
                tags[qid] = (row, tagset)
    except UnicodeDecodeError as exc:
        problems.append(Problem(path.name, None, None, f"is not UTF-8 text ({exc.reason} at byte {exc.start})"))
    if problems:
        raise InputError(problems)
    return tags


def read_bank(path: str | Path, fmt: str = "auto", progress: Progress | None = None) -> ReadResult:
    """Read and validate a whole bank file; raise :class:`InputError` with every problem found."""
    path = Path(path)
    if not path.is_file():
        raise InputError([Problem(str(path), None, None, "no such file")])
    problems: list[Problem] = []
    records: list[QuestionRecord] = []
    seen: dict[str, int] = {}
    try:
        fmt = detect_format(path) if fmt == "auto" else fmt
        if fmt not in FORMATS:
            raise InputError([Problem(path.name, None, None, f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")])
        items, unit = _items(path, fmt)
        for count, (row, fields) in enumerate(items, start=1):
            record = _RowCheck(path.name, row, unit, problems).record(fields)
            if record is not None:
                if record.qid in seen:
                    problems.append(Problem(path.name, row, "qid",
                                            f"{record.qid!r} repeats {unit} {seen[record.qid]}", unit))
                else:
                    seen[record.qid] = row
                    records.append(record)
            if progress and count % 1000 == 0:
                progress(count)
    except UnicodeDecodeError as exc:
        problems.append(Problem(path.name, None, None, f"is not UTF-8 text ({exc.reason} at byte {exc.start})"))
    except csv.Error as exc:
        problems.append(Problem(path.name, None, None, f"is not valid CSV: {exc}"))
    if problems:
        raise InputError(problems)
    if not records:
        raise InputError([Problem(path.name, None, None, "contains no questions")])
    return ReadResult(path, fmt, records)
