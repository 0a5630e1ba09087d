"""Spoken answers' recordings on disk: written whole before the engine hears of them, served to the host only,
exported with the session and deleted on request (consent).

The folder is a setting (``VTT_RECORDINGS_DIR``, default ``instance/recordings``).  A file's name says whose take it
is (session, question, player and the upload's action id), so a resent upload lands on the same name and a take is
never stored twice.  Nothing here imports Flask or Socket.IO.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from ..kinds import Phase
from ..models import Event, Recording, VttSession
from ..protocol.vocabulary import MAX_RECORDING_BYTES, RECORDING_TYPES

ACTION_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
CHUNK = 64 * 1024


class RecordingProblem(ValueError):
    """An upload that cannot be kept: ``code`` for the reply, ``message`` names the problem."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


def media_type(declared: str | None) -> str:
    """The upload's type without parameters (``audio/webm;codecs=opus`` is ``audio/webm``), if it is a recording's."""
    base = (declared or "").split(";")[0].strip().lower()
    if base not in RECORDING_TYPES:
        known = ", ".join(sorted(RECORDING_TYPES))
        raise RecordingProblem("bad_type", f"a recording must be one of {known}, not {declared or 'untyped'!r}")
    return base


def file_name(session_id: int, question_id: int, player_id: int, action_id: str, mime: str) -> str:
    if not ACTION_ID.fullmatch(action_id or ""):
        raise RecordingProblem("bad_field", "id must be 1 to 64 letters, digits, - or _ (the action's id)")
    return f"{session_id}-{question_id}-{player_id}-{action_id}{RECORDING_TYPES[mime]}"


# How each container's file begins: a file that does not begin so is not the audio it claims to be.
SUFFIX_SIGNS = {
    ".webm": lambda head: head[:4] == b"\x1a\x45\xdf\xa3",  # EBML (Matroska/WebM)
    ".ogg": lambda head: head[:4] == b"OggS",
    ".m4a": lambda head: head[4:8] == b"ftyp",  # ISO BMFF (MP4)
    ".wav": lambda head: head[:4] == b"RIFF" and head[8:12] == b"WAVE",
}


def store(folder: Path, name: str, chunks: Iterable[bytes]) -> int:
    """Write the recording to ``folder/name`` whole or not at all: a temporary file, flushed to the disk, renamed
    (a resent upload replaces the same take).  Its size; RecordingProblem when it is empty, too large, or does
    not begin as its type's files do."""
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f".{name}.{os.getpid()}.part"
    signed = SUFFIX_SIGNS[Path(name).suffix]
    size = 0
    try:
        with partial.open("wb") as out:
            for chunk in chunks:
                if size == 0 and chunk and not signed(chunk):
                    raise RecordingProblem("not_audio", f"the file is not {Path(name).suffix[1:]} audio")
                size += len(chunk)
                if size > MAX_RECORDING_BYTES:
                    raise RecordingProblem(
                        "too_large", f"a recording may be at most {MAX_RECORDING_BYTES // (1024 * 1024)} MB"
                    )
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        if size == 0:
            raise RecordingProblem("empty", "the recording is empty (nothing was recorded)")
        os.replace(partial, folder / name)
        directory = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(directory)  # the rename itself survives a crash
        finally:
            os.close(directory)
    finally:
        partial.unlink(missing_ok=True)
    return size


def discard(folder: Path, name: str) -> None:
    """Remove a file the engine refused (answering had closed...): no take without its row."""
    (folder / name).unlink(missing_ok=True)


def kept(db: Session, session_id: int, name: str) -> Recording | None:
    """The session's recording called ``name``, unless its audio was deleted."""
    return db.scalar(
        select(Recording).where(
            Recording.session_id == session_id, Recording.file == name, Recording.deleted_at.is_(None)
        )
    )


def delete_all(db: Session, folder: Path, vtt_session: VttSession, by: str) -> int:
    """Delete every recording of a finished (or never started) session: the files, and ``deleted_at`` on the rows
    (the record keeps that a take existed; confirmed transcripts are answers and stay).  How many files went; the
    caller commits.  A running session is refused: its console still plays them."""
    if vtt_session.phase not in (Phase.DRAFT, Phase.FINISHED):
        raise RecordingProblem(
            "running", "the session is running: finish it first, then delete its recordings (the console plays them)"
        )
    now = datetime.now(UTC)
    names = db.scalars(
        select(Recording.file).where(Recording.session_id == vtt_session.id, Recording.deleted_at.is_(None))
    ).all()
    for name in names:
        discard(folder, name)
    db.execute(
        update(Recording)
        .where(Recording.session_id == vtt_session.id, Recording.deleted_at.is_(None))
        .values(deleted_at=now)
    )
    db.add(Event(session_id=vtt_session.id, at=now, kind="recordings.deleted", actor=by, payload={"files": len(names)}))
    return len(names)


def copy_all(db: Session, folder: Path, session_id: int, out: Path) -> int:
    """Copy the session's kept recordings into ``out`` (the export's ``recordings/``); how many were there."""
    names = db.scalars(
        select(Recording.file).where(Recording.session_id == session_id, Recording.deleted_at.is_(None))
    ).all()
    copied = 0
    for name in names:
        if (folder / name).is_file():
            out.mkdir(parents=True, exist_ok=True)
            shutil.copy2(folder / name, out / name)
            copied += 1
    return copied
