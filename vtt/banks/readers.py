"""Readers for question-bank files: the native CSV/JSON (or an .xlsx sheet) and DramaQA, TVQA, CinePile, MovieCORE.

Every reader turns its file into ``(row number, native fields)`` pairs; one validator then turns
native fields into :class:`QuestionRecord` s and collects every problem with its row and field,
naming the field as the file itself calls it.  A file with any problem yields no records at all.
"""

from __future__ import annotations

import ast
import csv
import difflib
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis.taxonomy import Module, TagSet, parse_tags
from analysis.textio import value_text

from ..models import Question
from ..problems import InputError, Problem, load_json
from .records import QuestionRecord

FORMATS = ("csv", "json", "dramaqa", "tvqa", "cinepile", "moviecore")
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
CINEPILE_REQUIRED = ("question", "choices")
TAG_FILE_REQUIRED = ("qid", "targets", "contents", "thinking")
FIELD_OF_MODULE = {Module.TARGET: "targets", Module.CONTENT: "contents", Module.THINKING: "thinking"}

# The database's column limits, so that `check` refuses what `import` would fail on.
_QUESTION_COLUMNS = Question.__table__.c
MAX_LENGTHS = {
    "qid": _QUESTION_COLUMNS.qid.type.length,
    "category": _QUESTION_COLUMNS.category.type.length,
    "video": _QUESTION_COLUMNS.clip_source.type.length,
}
MAX_INTEGER = 2**31 - 1  # an INTEGER column on PostgreSQL

# Native field -> the benchmark's own field that a converter only renames ...
RENAMED_FIELDS: dict[str, dict[str, str]] = {
    "dramaqa": {"question": "que", "choices": "answers", "answer": "correct_idx", "video": "vid", "clip": "videoType"},
    "tvqa": {"question": "q", "answer": "answer_idx", "video": "vid_name", "category": "show_name"},
    # CinePile names the key twice, by position and by text; the validator checks that they agree.
    "cinepile": {
        "answer": "answer_key_position",
        "_answer_text": "answer_key",
        "video": "yt_clip_link",
        "category": "question_category",
    },
    "moviecore": {"category": "classification"},
}
# ... or derives from one of its own; together they name the fields in problems as the file does.
DERIVED_FIELDS: dict[str, dict[str, str]] = {"tvqa": {"choices": "a0..a4", "start": "ts", "end": "ts"}}
SOURCE_NAMES = {fmt: {**RENAMED_FIELDS.get(fmt, {}), **DERIVED_FIELDS.get(fmt, {})} for fmt in FORMATS}

DELIMITER_NAMES = {",": "comma", ";": "';'", "\t": "tab"}
# Close enough to a known column to be its typo ('target', 'choice', 'id'), not a column of its own.
TYPO_CUTOFF = 0.8
# JSON nested deeper than Python's recursion limit (~1,000 levels) cannot be read: a problem, not a crash.
TOO_DEEP = "is nested too deeply to read (JSON deeper than about 1,000 levels)"

Progress = Callable[[int], None]  # called with the number of items read so far


@dataclass
class ReadResult:
    path: Path
    format: str
    records: list[QuestionRecord] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)  # known quirks of published files, imported anyway

    @property
    def untagged(self) -> list[str]:
        return [r.qid for r in self.records if r.tags.is_empty]

    @property
    def unkeyed(self) -> list[str]:
        """Questions without a key (imported with --allow-missing-keys): graded by hand or left out."""
        return [r.qid for r in self.records if (r.answer_index is None if r.type == "mcq" else not r.reference_answer)]


# --- format detection -------------------------------------------------------------------------


def detect_format(path: Path) -> str:
    """Guess a file's format from its extension and first record."""
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv", ".xlsx"):
        if suffix == ".xlsx":
            header = {h.strip().lower() for h in next(_xlsx_table(path), (1, []))[1]}
        else:
            with path.open(newline="", encoding="utf-8-sig") as handle:
                header = {h.strip().lower() for h in next(csv.reader(handle, delimiter=_delimiter(path)), [])}
        return "cinepile" if {"answer_key", "choices"} <= header else "csv"
    if suffix == ".jsonl":
        first = _first_jsonl(path)
        return "tvqa" if "a0" in first else "cinepile" if "answer_key" in first else "json"
    if suffix == ".json":
        data = load_json(path)
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
    raise InputError(
        [
            Problem(
                path.name, None, None, f"cannot tell the format from the extension {suffix or '(none)'}; pass --format"
            )
        ]
    )


def _delimiter(path: Path) -> str:
    return "\t" if path.suffix.lower() == ".tsv" else ","


def _first_jsonl(path: Path) -> dict:
    with path.open(encoding="utf-8-sig") as handle:
        for line in handle:
            if line.strip():
                try:
                    item = json.loads(line)
                except (json.JSONDecodeError, RecursionError):
                    return {}
                return item if isinstance(item, dict) else {}
    return {}


# --- raw items per format: (row, native fields) -------------------------------------------------


def _table_rows(path: Path, required: tuple[str, ...], known: tuple[str, ...] = ()) -> Iterator[tuple[int, dict]]:
    """The rows of a CSV/TSV file or an .xlsx workbook's first sheet, as the same ``(row, fields)`` pairs."""
    if path.suffix.lower() == ".xlsx":
        return _xlsx_rows(path, required, known)
    return _csv_rows(path, required, known)


def _xlsx_table(path: Path) -> Iterator[tuple[int, list[str]]]:
    """The first sheet's non-empty rows as ``(spreadsheet row number, cell texts)``, the header first.

    Cells become the text a CSV export would hold (3, not 3.0), so both give the same records.
    """
    from zipfile import BadZipFile

    from openpyxl import load_workbook

    try:
        book = load_workbook(path, read_only=True, data_only=True)
    except (BadZipFile, KeyError, OSError, ValueError) as exc:
        raise InputError([Problem(path.name, None, None, f"is not an .xlsx workbook ({exc})")]) from None
    try:
        sheet = book.worksheets[0]
        for number, cells in enumerate(sheet.iter_rows(values_only=True), start=1):
            texts = [_cell_text(value) for value in cells]
            while texts and not texts[-1].strip():  # formatting often stretches a sheet past its data
                texts.pop()
            if texts or number == 1:
                yield number, texts
    finally:
        book.close()


def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def _xlsx_rows(path: Path, required: tuple[str, ...], known: tuple[str, ...]) -> Iterator[tuple[int, dict]]:
    """The rows of an .xlsx workbook's first sheet (header in row 1), numbered as the spreadsheet shows them."""
    table = _xlsx_table(path)
    _, header_cells = next(table, (1, []))  # an empty sheet: every required column is missing
    header = [h.strip().lower() for h in header_cells]
    header_problems = _header_problems(path.name, header, ",", required, known)
    if header_problems:
        raise InputError(header_problems)
    for number, texts in table:
        row = dict(zip(header, texts + [""] * (len(header) - len(texts))))
        extra = texts[len(header) :]
        yield number, ({"_extra": extra, **row} if extra else row)


def _csv_rows(path: Path, required: tuple[str, ...], known: tuple[str, ...] = ()) -> Iterator[tuple[int, dict]]:
    """The rows of a CSV/TSV file after a header check; ``known`` columns, when given, catch typos.

    Strict parsing: a stray quote would otherwise swallow the rest of the file into one value.
    """
    delimiter = _delimiter(path)
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle, delimiter=delimiter, strict=True)
        first_line = 1  # of the row being read; a quoted value may span lines
        try:
            header = [h.strip().lower() for h in reader.fieldnames or []]
            header_problems = _header_problems(path.name, header, delimiter, required, known)
            if header_problems:
                raise InputError(header_problems)
            reader.fieldnames = header
            first_line = reader.line_num + 1
            for row_number, row in enumerate(reader, start=2):
                if None in row:
                    yield row_number, {"_extra": row.pop(None), **row}
                else:
                    yield row_number, row
                first_line = reader.line_num + 1
        except csv.Error as exc:
            message = (
                "a quoted value in the row starting on this line is never closed (a stray '\"'?)"
                if str(exc) == "unexpected end of data"
                else f"is not valid CSV: {exc}"
            )
            raise InputError([Problem(path.name, first_line, None, message, unit="line")]) from None


def _header_problems(
    file: str, header: list[str], delimiter: str, required: tuple[str, ...], known: tuple[str, ...]
) -> list[Problem]:
    problems = []
    missing = [c for c in required if c not in header]
    if missing:
        line = delimiter.join(header)
        for other, name in DELIMITER_NAMES.items():
            if other != delimiter and set(required) <= {cell.strip() for cell in line.split(other)}:
                problems.append(
                    Problem(
                        file,
                        1,
                        None,
                        f"the header looks {name}-separated; vtt reads comma-separated .csv and tab-separated .tsv",
                    )
                )
        problems += [Problem(file, 1, c, "required column is missing") for c in missing]
    problems += [
        Problem(file, 1, column, f"column appears {count} times")
        for column, count in Counter(header).items()
        if column and count > 1
    ]
    absent = [c for c in known if c not in header]
    for column in (c for c in header if known and c not in known):
        typo_of = difflib.get_close_matches(column, absent, n=1, cutoff=TYPO_CUTOFF)
        if typo_of:
            problems.append(Problem(file, 1, None, f"unknown column {column!r} (did you mean {typo_of[0]!r}?)"))
    return problems


def _json_items(path: Path) -> Iterator[tuple[int, dict]]:
    data = load_json(path)
    if not isinstance(data, list):
        raise InputError([Problem(path.name, None, None, "expected a JSON list of question objects")])
    yield from enumerate(data, start=1)


def _jsonl_items(path: Path) -> Iterator[tuple[int, dict]]:
    with path.open(encoding="utf-8-sig") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as exc:
                yield number, {"_error": f"not valid JSON: {exc.msg}"}
            except RecursionError:
                yield number, {"_error": TOO_DEEP}


def _renamed(item: dict, fmt: str) -> dict:
    return {native: item.get(own) for native, own in RENAMED_FIELDS[fmt].items()}


def _dramaqa(item: dict) -> dict:
    return {
        **_renamed(item, "dramaqa"),
        "qid": item.get("qid"),
        "type": "mcq",
        "category": _levels(item),
        "source": {k: item.get(k) for k in ("shot_contained", "q_level_mem", "q_level_logic")},
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
        **_renamed(item, "tvqa"),
        "qid": item.get("qid"),
        "type": "mcq",
        "choices": [item.get(f"a{i}") for i in range(5) if f"a{i}" in item],
        "start": start,
        "end": end,
        "source": {"ts": ts},
    }


def _cinepile(item: dict, number: int) -> dict:
    return {
        **_renamed(item, "cinepile"),
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


def _moviecore(path: Path) -> Iterator[tuple[int, dict]]:
    data = load_json(path)
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
            yield (
                number,
                _passed_through(
                    {
                        **_renamed(item, "moviecore"),
                        "qid": item.get("qid") or f"{stem}-{index:02d}",
                        "question": item.get("question"),
                        "type": "open",
                        "answer": item.get("answer"),
                        "video": video,
                    },
                    item,
                ),
            )


def _passed_through(native: dict, item: dict) -> dict:
    """Keep what every format may carry as is: CogME tags (a tagged export) and a CSV row's surplus values."""
    for key in TAG_FIELDS + ("_extra",):
        if key in item and key not in native:
            native[key] = item[key]
    return native


def _items(path: Path, fmt: str) -> tuple[Iterator[tuple[int, dict]], str]:
    """Native-field items for a file, and what its numbers count (row, item or line)."""
    if fmt == "csv":
        return _table_rows(path, REQUIRED_COLUMNS, KNOWN_COLUMNS), "row"
    if fmt == "moviecore":
        return _moviecore(path), "item"
    if fmt == "cinepile" and path.suffix.lower() in (".csv", ".tsv", ".xlsx"):
        rows = _table_rows(path, CINEPILE_REQUIRED)
        return ((n, _passed_through(_cinepile(row, n), row)) for n, row in rows), "row"
    source, unit = (_jsonl_items(path), "line") if path.suffix.lower() == ".jsonl" else (_json_items(path), "item")
    convert = {
        "json": lambda item, n: item,
        "dramaqa": lambda item, n: _dramaqa(item),
        "tvqa": lambda item, n: _tvqa(item),
        "cinepile": _cinepile,
    }[fmt]

    def native() -> Iterator[tuple[int, dict]]:
        for number, item in source:
            if not isinstance(item, dict) or "_error" in item:
                yield number, {"_error": item.get("_error") if isinstance(item, dict) else "expected an object"}
            else:
                yield number, _passed_through(convert(item, number), item)

    return native(), unit


# --- validation of native fields ---------------------------------------------------------------


@dataclass
class _FileCheck:
    """What the checks of one file's items share: where problems go, field names, the qids seen."""

    name: str
    unit: str  # what row numbers count: row, item or line
    problems: list[Problem]
    source_names: Mapping[str, str] = field(default_factory=dict)  # native field -> the file's own name
    qid_rows: dict[str, int] = field(default_factory=dict)
    warnings: list[Problem] = field(default_factory=list)
    strict: bool = False  # quirks are problems
    allow_missing_keys: bool = False  # a test split: questions without a key are taken
    missing_keys: list[Problem] = field(default_factory=list)  # the problems that only say "no key"
    question_rows: dict[str, int] = field(default_factory=dict)  # question text (casefolded) -> first row

    def item(self, row: int) -> _RowCheck:
        return _RowCheck(self, row)


class _RowCheck:
    """Validates the native fields of one item, recording problems against its file and row."""

    def __init__(self, file: _FileCheck, row: int):
        self.file, self.row = file, row
        self.fields: dict = {}

    def problem(self, field_name: str | None, message: str) -> None:
        source_name = self.file.source_names.get(field_name, field_name) if field_name else None
        raw = self.fields.get(field_name) if field_name else None
        value = None if raw is None or raw == "" else str(raw)[:200]
        self.file.problems.append(Problem(self.file.name, self.row, source_name, message, self.file.unit, value))

    def warn(self, field_name: str | None, message: str) -> None:
        """A known quirk of published files: counted and named, imported anyway (a problem under --strict)."""
        if self.file.strict:
            self.problem(field_name, f"{message} (refused by --strict)")
            return
        source_name = self.file.source_names.get(field_name, field_name) if field_name else None
        raw = self.fields.get(field_name) if field_name else None
        self.file.warnings.append(
            Problem(
                self.file.name, self.row, source_name, message, self.file.unit, None if raw is None else str(raw)[:200]
            )
        )

    def record(self, fields: dict) -> QuestionRecord | None:
        self.fields = fields
        before = len(self.file.problems)
        if "_error" in fields:
            self.problem(None, fields["_error"])
            return None
        if fields.get("_extra"):
            self.problem(None, f"has {len(fields['_extra'])} more value(s) than the header has columns")
        if isinstance(fields.get("qid"), int) and not isinstance(fields.get("qid"), bool):
            self.warn("qid", "is a number; kept as text")
        qid = self.qid(fields)
        question = self.text(fields, "question")
        if not question:
            self.problem("question", "is empty")
        else:
            self.same_text_as_before(question)
        choices = self.choices(fields.get("choices"))
        qtype = self.question_type(fields.get("type"), choices)
        answer_index, reference = self.answer(qtype, choices, fields)
        video = self.text(fields, "video") or None
        start, end = self.span(fields)
        clip = value_text(fields.get("clip")).lower() or None
        if clip not in (None, "shot", "scene"):
            self.problem("clip", f"must be 'shot' or 'scene', not {clip!r}")
        tags = self.tags(fields)
        category = self.text(fields, "category") or None
        round_number = self.round(fields.get("round"))
        if len(self.file.problems) > before:
            return None
        return QuestionRecord(
            qid=qid,
            text=question,
            type=qtype,
            choices=choices,
            answer_index=answer_index,
            reference_answer=reference,
            video=video,
            start=start,
            end=end,
            clip=clip,
            category=category,
            round=round_number,
            tags=tags,
            source=_jsonable(fields.get("source") or {}),
        )

    def span(self, fields: dict) -> tuple[float | None, float | None]:
        """Start and end seconds; NaN (TVQA's ``NaN-NaN``) or a zero-length span means the whole clip."""
        if any(value_text(fields.get(name)).casefold() == "nan" for name in ("start", "end")):
            self.warn("start", "is NaN: no localised span, the whole clip plays")
            return None, None
        start, end = self.number(fields, "start"), self.number(fields, "end")
        if start is not None and end is not None and end == start:
            self.warn("end", f"a zero-length span ({start:g}-{end:g}): the whole clip plays")
            return None, None
        if start is not None and end is not None and end < start:
            self.problem("end", f"must be after start ({end:g} <= {start:g})")
        return start, end

    def same_text_as_before(self, question: str) -> None:
        key = " ".join(question.casefold().split())
        first = self.file.question_rows.setdefault(key, self.row)
        if first != self.row:
            self.warn("question", f"the same text as {self.file.unit} {first}")

    def text(self, fields: dict, name: str) -> str:
        """A text field, checked against what the database stores."""
        text = value_text(fields.get(name))
        if "\0" in text:
            self.problem(name, "contains a NUL character")
        limit = MAX_LENGTHS.get(name)
        if limit is not None and len(text) > limit:
            self.problem(name, f"is {len(text)} characters long; at most {limit}")
        return text

    def qid(self, fields: dict) -> str:
        """The item's qid; a repeat is reported even when either item has other problems."""
        qid = self.text(fields, "qid")
        if not qid:
            self.problem("qid", "is empty")
        elif qid in self.file.qid_rows:
            self.problem("qid", f"{qid!r} repeats {self.file.unit} {self.file.qid_rows[qid]}")
        else:
            self.file.qid_rows[qid] = self.row
        return qid

    def tags(self, fields: dict) -> TagSet:
        tags = parse_tags(
            fields.get("targets"),
            fields.get("contents"),
            fields.get("thinking"),
            value_text(fields.get("key_target")) or None,
        )
        for tag_problem in tags.problems:
            self.problem(FIELD_OF_MODULE[tag_problem.module], tag_problem.message)
        return tags

    def choices(self, value: Any) -> list[str] | None:
        """The options; None when they cannot be read (reported here, so nothing else is said about them)."""
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return []
        if isinstance(value, str) and value.strip().startswith("["):
            parsed = _list_literal(value.strip())
            if parsed is not None:
                value = parsed
            elif "|" not in value:  # else a '|'-list whose first option starts with '['
                self.problem("choices", "could not be parsed as a list")
                return None
        if isinstance(value, (list, tuple)):
            items = [value_text(v) for v in value]
            if any(isinstance(v, str) and v != v.strip() for v in value):
                self.warn("choices", "options had stray whitespace (trimmed)")
        elif isinstance(value, str):
            items = [part.strip() for part in value.split("|")] if value.strip() else []
        else:
            self.problem("choices", f"expected a list or '|'-separated text, got {type(value).__name__}")
            return None
        if any(not item for item in items):
            self.problem("choices", "has an empty option")
        if any("\0" in item for item in items):
            self.problem("choices", "contains a NUL character")
        return items

    def question_type(self, value: Any, choices: list[str] | None) -> str:
        # unreadable options are still options
        qtype = value_text(value).lower() or ("open" if choices == [] else "mcq")
        qtype = {"multiple-choice": "mcq", "multiple choice": "mcq", "mc": "mcq", "open-ended": "open"}.get(
            qtype, qtype
        )
        if qtype not in ("mcq", "open"):
            self.problem("type", f"must be 'mcq' or 'open', not {qtype!r}")
        elif choices is not None:  # unreadable options are reported already
            if qtype == "mcq" and len(choices) < 2:
                self.problem("choices", f"a multiple-choice question needs at least 2 options, has {len(choices)}")
            elif qtype == "open" and choices:
                self.problem("choices", "an open question has no options")
        return qtype

    def answer(self, qtype: str, choices: list[str] | None, fields: dict) -> tuple[int | None, str]:
        """``(index of the key, reference answer)``; an mcq's key may be its index or its text, or both."""
        text = self.text(fields, "answer")
        if qtype != "mcq":
            if not text:
                self.missing_key("an open question needs a reference answer")
            return None, text
        if choices is None or len(choices) < 2:
            return None, ""
        key_text = value_text(fields.get("_answer_text"))
        if not text and key_text:
            index = _option_with_text(choices, key_text)
            if index is None:
                self.problem("_answer_text", f"{key_text!r} is not the text of an option")
            return index, ""
        if not text:
            self.missing_key("is empty; give the 0-based index or the text of the correct option")
            return None, ""
        index = self.option_index(choices, text)
        if index is not None and key_text and key_text.casefold() != choices[index].casefold():
            key_name = self.file.source_names.get("_answer_text", "_answer_text")
            self.problem("answer", f"option {index} is {choices[index]!r}, but {key_name} is {key_text!r}")
        return index, ""

    def missing_key(self, message: str) -> None:
        """No key: a problem, unless the file is read as a split whose keys are withheld."""
        if self.file.allow_missing_keys:
            return
        self.problem("answer", message)
        self.file.missing_keys.append(self.file.problems[-1])

    def option_index(self, choices: list[str], text: str) -> int | None:
        """The option an mcq's ``answer`` names by its 0-based index or, failing that, by its text."""
        index = _integer(text)
        if index is None:
            index = _option_with_text(choices, text)
            if index is None:
                self.problem("answer", f"{text!r} is neither an option index nor the text of an option")
        elif not 0 <= index < len(choices):
            self.problem("answer", f"index {index} is out of range 0-{len(choices) - 1}")
            index = None
        return index

    def number(self, fields: dict, name: str) -> float | None:
        text = value_text(fields.get(name))
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
        text = value_text(value)
        if not text:
            return None
        number = _integer(text)
        if number is None or not 1 <= number <= MAX_INTEGER:
            self.problem("round", f"must be a round number 1, 2, ..., not {text!r}")
            return None
        return number


def _option_with_text(choices: list[str], text: str) -> int | None:
    folded = [c.casefold() for c in choices]
    return folded.index(text.casefold()) if text.casefold() in folded else None


def _integer(text: str) -> int | None:
    """The whole number ``text`` spells in ASCII digits, else None.

    Not ``str.isdigit``: it accepts '²', which ``int`` then refuses.  '2.0' counts: pandas writes an
    integer column that has a gap that way.
    """
    match = re.fullmatch(r"(-?[0-9]+)(?:\.0+)?", text)
    return int(match.group(1)) if match else None


# A quoted string of a Python, JSON or numpy list repr; numpy's has no commas: ['A gun' 'A phone'].
_QUOTED = r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\""
_STRING_LIST = re.compile(rf"\[\s*(?:(?:{_QUOTED})\s*,?\s*)*\]")


def _list_literal(text: str) -> list | None:
    """The items of a list written out as text (as pandas exports one), or None if it is no list."""
    try:
        if _STRING_LIST.fullmatch(text):
            # Token by token: Python would join numpy's adjacent strings into one option.
            return [ast.literal_eval(token) for token in re.findall(_QUOTED, text)]
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, RecursionError):
        return None
    return list(value) if isinstance(value, (list, tuple)) else None


def _jsonable(value: dict) -> dict:
    return json.loads(json.dumps(value, default=str))


@contextmanager
def _collecting(path: Path, problems: list[Problem]) -> Iterator[None]:
    """A problem that stops the reading of a file joins those found before it."""
    try:
        yield
    except InputError as error:
        problems.extend(error.problems)
    except UnicodeDecodeError as exc:
        problems.append(Problem(path.name, None, None, f"is not UTF-8 text ({exc.reason} at byte {exc.start})"))
    except RecursionError:  # json.load of the whole file, or an item's nested source
        problems.append(Problem(path.name, None, None, TOO_DEEP))


def _one_line_for_a_keyless_file(check: _FileCheck, count: int) -> None:
    """No item has a key: one problem that names the way forward instead of one per item."""
    keyless = set(check.missing_keys)
    check.problems[:] = [problem for problem in check.problems if problem not in keyless]
    key_name = check.missing_keys[0].field
    check.problems.append(
        Problem(
            check.name,
            None,
            key_name,
            f"no question has a key ({count:,} {check.unit}s; a test split?): "
            "--allow-missing-keys imports them without keys, and their answers are then graded by hand or left "
            "out of accuracy",
        )
    )


def read_tag_file(path: str | Path) -> dict[str, tuple[int, TagSet]]:
    """A tagging CSV (``qid,targets,contents,thinking`` as in the native format): qid -> (row, tags).

    Every row must carry a complete, valid tag set; raise :class:`InputError` listing every problem.
    """
    path = Path(path)
    check = _FileCheck(path.name, "row", [])
    tags: dict[str, tuple[int, TagSet]] = {}
    with _collecting(path, check.problems):
        for row, fields in _table_rows(path, TAG_FILE_REQUIRED, KNOWN_COLUMNS):
            item = check.item(row)
            qid = item.qid(fields)
            tagset = item.tags(fields)
            if tagset.is_empty and not tagset.problems:
                item.problem("targets", "no tags given")
            tags[qid] = (row, tagset)
    if check.problems:
        raise InputError(check.problems)
    return tags


def read_bank(
    path: str | Path,
    fmt: str = "auto",
    progress: Progress | None = None,
    strict: bool = False,
    allow_missing_keys: bool = False,
) -> ReadResult:
    """Read and validate a whole bank file; raise :class:`InputError` with every problem found.

    Known quirks of published files (NaN or zero-length spans, options with stray whitespace, integer
    qids, a question text twice) come back as ``warnings``; ``strict`` makes them problems.
    ``allow_missing_keys`` takes questions without a key (a test split); otherwise a file where no
    question has one gets one problem that says so, and a file where some lack one, a problem per row.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError([Problem(str(path), None, None, "no such file")])
    problems: list[Problem] = []
    records: list[QuestionRecord] = []
    with _collecting(path, problems):
        fmt = detect_format(path) if fmt == "auto" else fmt
        if fmt not in FORMATS:
            raise InputError([Problem(path.name, None, None, f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")])
        items, unit = _items(path, fmt)
        check = _FileCheck(
            path.name, unit, problems, SOURCE_NAMES[fmt], strict=strict, allow_missing_keys=allow_missing_keys
        )
        count = 0
        for count, (row, fields) in enumerate(items, start=1):
            record = check.item(row).record(fields)
            if record is not None:
                records.append(record)
            if progress and count % 500 == 0:
                progress(count)
        if count > 1 and len({p.row for p in check.missing_keys}) == count:
            _one_line_for_a_keyless_file(check, count)
    if problems:
        raise InputError(problems)
    if not records:
        raise InputError([Problem(path.name, None, None, "contains no questions")])
    return ReadResult(path, fmt, records, check.warnings)
