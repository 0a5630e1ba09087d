"""A bank file uploaded through the host console: read as ``vtt questions import`` would, stored whole or not at all.

The console's upload runs :func:`run_upload` beside the event loop (:func:`import_beside_loop`): reading and
checking a 40,000-row file is seconds of Python, and on the loop every live socket would wait for it.  A small file
is read in a native thread (:func:`vtt.offloop.off_loop`); a file over :data:`IN_THREAD_BYTES` in a worker process
(``python -m vtt.banks.upload``), since a thread that runs Python for seconds still takes the loop's GIL from it
every few milliseconds (healthz stalls of 100-1,000 ms on a busy 2-core machine, against ~15 ms from a process).
The work is bounded (:data:`MAX_UPLOAD_BYTES`, :data:`MAX_UPLOAD_ITEMS`, an .xlsx's unpacked size, one upload at a
time), and the database is written on a connection of the thread's own, in one transaction that holds SQLite's write
lock only for the copy into the real tables (:func:`_write_sqlite`), so the live writer waits for that, not for the
checking.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePath
from typing import IO

from sqlalchemy import Column, MetaData, Table, insert, select, text
from sqlalchemy.orm import Session

from ..models import Question, QuestionBank, QuestionTag
from ..problems import InputError, Problem
from .formats import FORMATS
from .readers import ReadResult, read_bank
from .store import import_bank, log_import, question_row, tag_rows

UPLOAD_SUFFIXES = (".csv", ".tsv", ".json", ".jsonl", ".xlsx")
KOREAN_EXCEL_ENCODING = "cp949"
MAX_UPLOAD_BYTES = 20 * 1024 * 1024  # a bank file; 40,000 native CSV rows are ~9 MB
MAX_UPLOAD_ITEMS = 100_000  # rows, items or lines read before the upload is refused
MAX_XLSX_UNPACKED_BYTES = 200 * 1024 * 1024  # a workbook's parts, unzipped (a zip bomb is refused unread)
COPY_CHUNK = 1024 * 1024
IN_THREAD_BYTES = 256 * 1024  # larger uploads are read in a worker process
WORKER_SECONDS = 300  # a worker process that takes longer is stopped


class UploadError(InputError):
    """The upload's problems, and the encoding the file seems to be in when it is not UTF-8 (else None)."""

    def __init__(self, problems: list[Problem], encoding: str | None = None):
        super().__init__(problems)
        self.encoding = encoding


class UploadBusy(RuntimeError):
    """Another bank upload is being imported in this process."""


@dataclass
class UploadOutcome:
    """What an imported upload added (plain values: it crosses from the worker thread to the request)."""

    bank_id: int
    bank_name: str
    format: str
    questions: int
    untagged: int
    warnings: list[Problem] = field(default_factory=list)


_one_at_a_time = threading.Lock()  # under gevent a gevent lock, taken on the loop without waiting


@contextmanager
def upload_slot() -> Iterator[None]:
    """The process's one bank-upload slot; :class:`UploadBusy` at once when it is taken."""
    if not _one_at_a_time.acquire(blocking=False):
        raise UploadBusy()
    try:
        yield
    finally:
        _one_at_a_time.release()


def upload_name(filename: str | None) -> str:
    """The file's own name (no folders; browsers on Windows may send them), as problems will name it."""
    name = PurePath((filename or "").replace("\\", "/")).name.strip()
    return name if name not in ("", ".", "..") else "upload"


def import_beside_loop(database_url: str, stream: IO[bytes], filename: str, bank_name: str, **options) -> UploadOutcome:
    """:func:`run_upload` off the event loop: in a native thread for a small file, else in a worker process."""
    from ..offloop import off_loop

    stream.seek(0, 2)
    size = stream.tell()
    stream.seek(0)
    name = upload_name(filename)
    if size > MAX_UPLOAD_BYTES:
        raise UploadError([too_large(name)])
    if size <= IN_THREAD_BYTES:
        return off_loop(run_upload, database_url, stream, filename, bank_name, **options)
    with tempfile.TemporaryDirectory(prefix="vtt-upload-") as folder:
        saved = Path(folder) / "upload"
        off_loop(_copy, stream, saved)
        job = {
            "database_url": database_url,
            "path": str(saved),
            "filename": filename,
            "bank_name": bank_name,
            "options": options,
        }
        try:  # gevent's subprocess under `vtt serve`: the loop goes on while the worker runs
            done = subprocess.run(
                [sys.executable, "-m", "vtt.banks.upload"],
                input=json.dumps(job),
                capture_output=True,
                text=True,
                timeout=WORKER_SECONDS,
            )
        except subprocess.TimeoutExpired:
            raise UploadError(
                [Problem(name, None, None, f"took longer than {WORKER_SECONDS} s to import; nothing was imported")]
            ) from None
    lines = done.stdout.strip().splitlines()
    reply = json.loads(lines[-1]) if done.returncode == 0 and lines else None
    if reply is None:
        raise RuntimeError(f"the bank upload worker failed ({done.returncode}): {done.stderr[-2000:]}")
    if "problems" in reply:
        raise UploadError([Problem(**problem) for problem in reply["problems"]], reply["encoding"])
    outcome = reply["outcome"]
    return UploadOutcome(**{**outcome, "warnings": [Problem(**warning) for warning in outcome["warnings"]]})


def _copy(stream: IO[bytes], path: Path) -> None:
    with path.open("wb") as out:
        while chunk := stream.read(COPY_CHUNK):
            out.write(chunk)


def _worker_main() -> int:
    """``python -m vtt.banks.upload``: one job (JSON on stdin), its outcome or its problems (JSON on stdout)."""
    import os

    os.nice(10)  # below the server: on a busy 2-core machine the loop's process gets the CPU first
    job = json.loads(sys.stdin.read())
    try:
        with open(job["path"], "rb") as stream:
            outcome = run_upload(job["database_url"], stream, job["filename"], job["bank_name"], **job["options"])
    except UploadError as error:
        print(json.dumps({"problems": [asdict(problem) for problem in error.problems], "encoding": error.encoding}))
        return 0
    print(json.dumps({"outcome": asdict(outcome)}))
    return 0


def run_upload(
    database_url: str,
    stream: IO[bytes],
    filename: str,
    bank_name: str,
    *,
    fmt: str = "auto",
    strict: bool = False,
    allow_missing_keys: bool = False,
    actor: str = "host",
) -> UploadOutcome:
    """Read, check and import an uploaded bank file on a database connection of this thread's own; committed.

    Meant for :func:`vtt.offloop.off_loop` (a native thread under gevent): it touches neither the request's
    session nor its pool.  Raises :class:`UploadError` naming every problem; nothing is imported then.
    """
    from sqlalchemy.pool import NullPool

    from ..db import make_engine

    with _saved(stream, filename) as path:
        result = _read(path, fmt, strict, allow_missing_keys)
        engine = make_engine(database_url, poolclass=NullPool)
        try:  # one connection throughout: the staging tables of _write_sqlite live as long as it does
            with engine.connect() as connection, Session(bind=connection, expire_on_commit=False) as db:
                try:
                    if engine.dialect.name == "sqlite":
                        bank_id = _write_sqlite(db, result, bank_name, actor)
                    else:  # row locks: the live writer does not wait for an import on PostgreSQL
                        bank_id = import_bank(db, result, bank_name, actor=actor).id
                    db.commit()
                except InputError as error:
                    db.rollback()
                    raise UploadError(error.problems) from None
                except RecursionError:  # a source too deep for the database's JSON
                    db.rollback()
                    raise UploadError([Problem(path.name, None, None, "is nested too deeply to store")]) from None
        finally:
            engine.dispose()
    return UploadOutcome(
        bank_id, bank_name, result.format, len(result.records), len(result.untagged), list(result.warnings)
    )


def import_upload(
    db: Session,
    stream: IO[bytes],
    filename: str,
    bank_name: str,
    *,
    fmt: str = "auto",
    strict: bool = False,
    allow_missing_keys: bool = False,
    actor: str = "host",
) -> ReadResult:
    """Read an uploaded bank file and add it to ``bank_name`` in ``db``; :class:`UploadError` names every problem.

    The caller owns the transaction (the console uses :func:`run_upload` instead, beside the loop). The error of a
    text file saved in Korean Excel's encoding names it (``encoding``).  ``actor``: who uploaded it.
    """
    with _saved(stream, filename) as path:
        result = _read(path, fmt, strict, allow_missing_keys)
        try:
            import_bank(db, result, bank_name, actor=actor)
        except InputError as error:
            raise UploadError(error.problems) from None
    return result


@contextmanager
def _saved(stream: IO[bytes], filename: str) -> Iterator[Path]:
    """The upload in a file of its own name (readers name the file in problems and pick by suffix), size-checked."""
    name = upload_name(filename)
    if PurePath(name).suffix.lower() not in UPLOAD_SUFFIXES:
        raise UploadError(
            [Problem(name, None, None, f"is not a bank file; upload one of {', '.join(UPLOAD_SUFFIXES)}")]
        )
    with tempfile.TemporaryDirectory(prefix="vtt-upload-") as folder:
        path = Path(folder) / name
        with path.open("wb") as out:
            copied = 0
            while chunk := stream.read(COPY_CHUNK):
                copied += len(chunk)
                if copied > MAX_UPLOAD_BYTES:
                    raise UploadError([too_large(name)])
                out.write(chunk)
        yield path


def too_large(name: str) -> Problem:
    return Problem(name, None, None, f"is too large: a bank file may have at most {MAX_UPLOAD_BYTES // 2**20} MB")


def _read(path: Path, fmt: str, strict: bool, allow_missing_keys: bool) -> ReadResult:
    if fmt not in ("auto", *FORMATS):
        raise UploadError(
            [Problem(path.name, None, None, f"unknown format {fmt!r}; one of auto, {', '.join(FORMATS)}")]
        )
    if path.suffix.lower() == ".xlsx":
        _check_workbook(path)

    def bounded(count: int) -> None:  # read_bank reports progress every 500 items
        if count > MAX_UPLOAD_ITEMS:
            raise InputError(
                [
                    Problem(
                        path.name,
                        None,
                        None,
                        f"is too large: more than {MAX_UPLOAD_ITEMS:,} questions; split it into several banks",
                    )
                ]
            )

    try:
        return read_bank(path, fmt, progress=bounded, strict=strict, allow_missing_keys=allow_missing_keys)
    except InputError as error:
        raise UploadError(error.problems, legacy_encoding(path)) from None


def _check_workbook(path: Path) -> None:
    """Refuse a workbook whose parts unzip to more than :data:`MAX_XLSX_UNPACKED_BYTES` (openpyxl would inflate it)."""
    try:
        with zipfile.ZipFile(path) as book:
            unpacked = sum(part.file_size for part in book.infolist())
    except (zipfile.BadZipFile, OSError):
        return  # the reader says it is not a workbook
    if unpacked > MAX_XLSX_UNPACKED_BYTES:
        raise UploadError(
            [
                Problem(
                    path.name,
                    None,
                    None,
                    f"is too large: the workbook unpacks to {unpacked // 2**20:,} "
                    f"MB (at most {MAX_XLSX_UNPACKED_BYTES // 2**20} MB)",
                )
            ]
        )


def _write_sqlite(db: Session, result: ReadResult, bank_name: str, actor: str) -> int:
    """:func:`vtt.banks.store.import_bank` for SQLite with a short hold of the write lock; the new bank's id.

    The rows are first written to TEMP tables (SQLite keeps them apart: no lock on the database), with the
    same column types and values as ``import_bank`` writes; then one ``BEGIN IMMEDIATE`` transaction checks the
    qids, adds the bank, copies the rows across with ``INSERT ... SELECT`` (in SQLite's C, no Python per row) and
    logs the event.
    """
    stage_questions, stage_tags = _stage_tables()
    connection = db.connection()
    stage_questions.create(connection)
    stage_tags.create(connection)
    db.execute(
        insert(stage_questions),
        [
            {name: value for name, value in question_row(0, record).items() if name != "bank_id"}
            for record in result.records
        ],
    )
    tags = [{"qid": record.qid, **tag} for record in result.records for tag in tag_rows(record.tags)]
    if tags:
        db.execute(insert(stage_tags), tags)
    db.commit()  # the staging only: nothing of the database's own is written yet
    connection = db.connection()
    connection.exec_driver_sql("BEGIN IMMEDIATE")  # the lock first: no writer slips in between check and write
    bank = db.scalar(select(QuestionBank).where(QuestionBank.name == bank_name))
    if bank is None:
        bank = QuestionBank(name=bank_name, description="", source_format=result.format, source_file=result.path.name)
        db.add(bank)
        db.flush()
    else:
        clashes = db.scalars(
            select(stage_questions.c.qid)
            .join(Question.__table__, (Question.bank_id == bank.id) & (Question.qid == stage_questions.c.qid))
            .order_by(stage_questions.c.qid)
        ).all()
        if clashes:
            raise InputError(
                [Problem(result.path.name, None, "qid", f"{qid!r} is already in bank {bank_name!r}") for qid in clashes]
            )
    columns = [c.name for c in stage_questions.c]
    listed = ", ".join(columns)
    # SQL built with f-strings from the staging tables' own names and columns, never from the upload
    db.execute(
        text(
            f"INSERT INTO question (bank_id, {listed}) SELECT :bank, {listed} "
            f"FROM temp.{stage_questions.name} ORDER BY rowid"
        ),
        {"bank": bank.id},
    )
    # CROSS JOIN: SQLite then walks the staged tags in order and finds each question by its (bank_id, qid) index
    # (0.5 s for 120,000 tags here; it chose the other order, 0.9 s)
    db.execute(
        text(
            f"INSERT INTO question_tag (question_id, module, element, position, is_key) "
            f"SELECT q.id, t.module, t.element, t.position, t.is_key FROM temp.{stage_tags.name} t CROSS "
            f"JOIN question q ON q.bank_id = :bank AND q.qid = t.qid"
        ),
        {"bank": bank.id},
    )
    log_import(db, bank_name, result, actor)
    return bank.id


def _stage_tables() -> tuple[Table, Table]:
    """TEMP tables shaped like ``question`` (less id and bank_id) and ``question_tag`` (by qid), same types."""
    metadata = MetaData()
    question = Question.__table__.c
    stage_questions = Table(
        "upload_question",
        metadata,
        *(Column(c.name, c.type.copy()) for c in question if c.name not in ("id", "bank_id")),
        prefixes=["TEMPORARY"],
    )
    tag = QuestionTag.__table__.c
    stage_tags = Table(
        "upload_tag",
        metadata,
        Column("qid", question.qid.type.copy()),
        *(Column(c.name, c.type.copy()) for c in tag if c.name != "question_id"),
        prefixes=["TEMPORARY"],
    )
    return stage_questions, stage_tags


def legacy_encoding(path: Path) -> str | None:
    """``"CP949"`` for a text file that is not UTF-8 but reads as CP949 (Korean Excel's "CSV"), else None."""
    if path.suffix.lower() == ".xlsx":
        return None
    raw = path.read_bytes()
    try:
        raw.decode("utf-8")
        return None
    except UnicodeDecodeError:
        pass
    try:
        raw.decode(KOREAN_EXCEL_ENCODING)
    except UnicodeDecodeError:
        return None
    return KOREAN_EXCEL_ENCODING.upper()


if __name__ == "__main__":
    sys.exit(_worker_main())

__all__ = [
    "MAX_UPLOAD_BYTES",
    "UPLOAD_SUFFIXES",
    "UploadBusy",
    "UploadError",
    "UploadOutcome",
    "import_beside_loop",
    "import_upload",
    "run_upload",
    "too_large",
    "upload_name",
    "upload_slot",
]
