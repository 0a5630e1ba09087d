"""Reading a question-bank file: the native CSV/JSON (or an .xlsx sheet) and DramaQA, TVQA, CinePile, MovieCORE.

Every format (:mod:`.formats`) turns its file into ``(row number, native fields)`` pairs; one validator
(:mod:`.validation`) then turns native fields into :class:`QuestionRecord` s and collects every problem with its row
and field, naming the field as the file itself calls it.  A file with any problem yields no records at all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from analysis.taxonomy import TagSet

from ..problems import InputError, Problem
from .detection import detect_format
from .fields import KNOWN_COLUMNS, TAG_FILE_REQUIRED
from .formats import FORMATS, SOURCE_NAMES, native_items
from .formats.json_files import TOO_DEEP
from .formats.tables import table_rows
from .records import QuestionRecord
from .validation import FileCheck

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


@contextmanager
def _collecting_problems(path: Path, problems: list[Problem]) -> Iterator[None]:
    """A problem that stops the reading of a file joins those found before it."""
    try:
        yield
    except InputError as error:
        problems.extend(error.problems)
    except UnicodeDecodeError as exc:
        problems.append(Problem(path.name, None, None, f"is not UTF-8 text ({exc.reason} at byte {exc.start})"))
    except RecursionError:  # json.load of the whole file, or an item's nested source
        problems.append(Problem(path.name, None, None, TOO_DEEP))


def read_tag_file(path: str | Path) -> dict[str, tuple[int, TagSet]]:
    """A tagging CSV (``qid,targets,contents,thinking`` as in the native format): qid -> (row, tags).

    Every row must carry a complete, valid tag set; raise :class:`InputError` listing every problem.
    """
    path = Path(path)
    check = FileCheck(path.name, "row", [])
    tags: dict[str, tuple[int, TagSet]] = {}
    with _collecting_problems(path, check.problems):
        for row, fields in table_rows(path, TAG_FILE_REQUIRED, KNOWN_COLUMNS):
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
    with _collecting_problems(path, problems):
        fmt = detect_format(path) if fmt == "auto" else fmt
        if fmt not in FORMATS:
            raise InputError([Problem(path.name, None, None, f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")])
        items, unit = native_items(path, fmt)
        check = FileCheck(
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
            check.one_line_for_no_keys(count)
    if problems:
        raise InputError(problems)
    if not records:
        raise InputError([Problem(path.name, None, None, "contains no questions")])
    return ReadResult(path, fmt, records, check.warnings)
