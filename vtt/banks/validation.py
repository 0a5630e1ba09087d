"""Validation of native fields: one item at a time into a :class:`QuestionRecord`, or problems.

Every problem names its row and field as the file itself calls them; a file with any problem yields no records.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from analysis.taxonomy import Module, TagSet, parse_tags
from analysis.textio import value_text

from ..models import Question
from ..problems import Problem
from ..protocol.vocabulary import MAX_SQL_INTEGER
from .records import QuestionRecord

NO_KEYS = "no question has a key"
# How a host gets such a file in, said as the form's box says it (the command line adds its option).
NO_KEYS_REMEDY = "take questions without a key to import them"

FIELD_OF_MODULE = {Module.TARGET: "targets", Module.CONTENT: "contents", Module.THINKING: "thinking"}

# The database's column limits, so that `check` refuses what `import` would fail on.
_QUESTION_COLUMNS = Question.__table__.c
MAX_LENGTHS = {
    "qid": _QUESTION_COLUMNS.qid.type.length,
    "category": _QUESTION_COLUMNS.category.type.length,
    "video": _QUESTION_COLUMNS.clip_source.type.length,
}


@dataclass
class FileCheck:
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

    def item(self, row: int) -> RowCheck:
        return RowCheck(self, row)

    def one_line_for_no_keys(self, count: int) -> None:
        """No item has a key: one problem that names the way forward instead of one per item."""
        keyless = set(self.missing_keys)
        self.problems[:] = [problem for problem in self.problems if problem not in keyless]
        key_name = self.missing_keys[0].field
        self.problems.append(
            Problem(
                self.name,
                None,
                key_name,
                f"{NO_KEYS} ({count:,} {self.unit}s; a test split?): "
                f"{NO_KEYS_REMEDY}, and their answers are then graded by hand or left out of accuracy",
            )
        )


class RowCheck:
    """Validates the native fields of one item, recording problems against its file and row."""

    def __init__(self, file: FileCheck, row: int):
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
            self.problem(field_name, f"{message} (a quirk, refused as asked)")
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
        if number is None or not 1 <= number <= MAX_SQL_INTEGER:
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
