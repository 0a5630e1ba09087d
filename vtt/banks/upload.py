"""A bank file uploaded through the host console: read it as ``vtt questions import`` would, store it whole or not at all."""

from __future__ import annotations

import tempfile
from pathlib import Path, PurePath
from typing import IO

from sqlalchemy.orm import Session

from ..problems import InputError, Problem
from .readers import FORMATS, ReadResult, read_bank
from .store import import_bank

UPLOAD_SUFFIXES = (".csv", ".tsv", ".json", ".jsonl", ".xlsx")
KOREAN_EXCEL_ENCODING = "cp949"


class UploadError(InputError):
    """The upload's problems, and the encoding the file seems to be in when it is not UTF-8 (else None)."""

    def __init__(self, problems: list[Problem], encoding: str | None = None):
        super().__init__(problems)
        self.encoding = encoding


def upload_name(filename: str | None) -> str:
    """The file's own name (no folders; browsers on Windows may send them), as problems will name it."""
    name = PurePath((filename or "").replace("\\", "/")).name.strip()
    return name if name not in ("", ".", "..") else "upload"


def import_upload(db: Session, stream: IO[bytes], filename: str, bank_name: str, *, fmt: str = "auto",
                  strict: bool = False, allow_missing_keys: bool = False, actor: str = "host") -> ReadResult:
    """Read an uploaded bank file and add it to ``bank_name``; raise :class:`UploadError` naming every problem.

    The caller owns the transaction. The error of a text file saved in Korean Excel's encoding names it
    (``encoding``), since the readers only say "not UTF-8".  ``actor``: who uploaded it (the event's actor).
    """
    name = upload_name(filename)
    if PurePath(name).suffix.lower() not in UPLOAD_SUFFIXES:
        raise UploadError([Problem(name, None, None, f"is not a bank file; upload one of {', '.join(UPLOAD_SUFFIXES)}")])
    if fmt not in ("auto", *FORMATS):
        raise UploadError([Problem(name, None, None, f"unknown format {fmt!r}; one of auto, {', '.join(FORMATS)}")])
    with tempfile.TemporaryDirectory(prefix="vtt-upload-") as folder:
        path = Path(folder) / name  # the upload's own name: readers name the file in problems and pick by suffix
        path.write_bytes(stream.read())
        try:
            result = read_bank(path, fmt, strict=strict, allow_missing_keys=allow_missing_keys)
        except InputError as error:
            raise UploadError(error.problems, legacy_encoding(path)) from None
        try:
            import_bank(db, result, bank_name, actor=actor)
        except InputError as error:
            raise UploadError(error.problems) from None
    return result


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
