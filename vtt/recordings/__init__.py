"""Spoken answers' recordings on disk: written whole before the engine hears of them, stored once, served to the
host only, exported with the session and deleted on request (consent), leaving nothing behind.

The folder is a setting (``VTT_RECORDINGS_DIR``, default ``instance/recordings``).  A file's name says whose take it
is (session, question, player and the upload's action id): a take has one name, and a file once there is never
replaced.  Every upload writes a temporary file of its own (``.NAME.RANDOM.part``) and links it to the take's name
only where no file has that name yet.  What a kill leaves (a temporary file, a take whose row was never written, an
export being built) is swept when the server starts and when the session's recordings are deleted.  Nothing here
imports Flask or Socket.IO.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from ..kinds import Phase
from ..models import Event, Recording, VttSession
from ..protocol.vocabulary import MAX_RECORDING_BYTES, RECORDING_TYPES

ACTION_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
CHUNK = 64 * 1024
# What the project writes of a session, and nothing else (the folders are settings: a file of someone else's there is
# never touched): in the recordings folder a take, or an upload's temporary file (a dot, the take's name, mkstemp's
# letters, .part); in the exports folder a worker's export or report folder (vtt.offloop.scratch_path), or its
# temporary file.
TAKE_OR_UPLOAD = re.compile(
    r"^(?P<dot>\.)?(?P<session>[0-9]+)-[0-9]+-[0-9]+-[A-Za-z0-9_-]{1,64}\.[a-z0-9]{2,5}(?(dot)\.[a-z0-9_]+\.part)$"
)
EXPORT_OR_REPORT = re.compile(r"^\.?(?P<session>[0-9]+)-[0-9a-f]{16}-[a-z.-]+$")
# A file younger than this may be an upload or an export that another process is finishing: the sweep at start
# leaves it (an upload's temporary file is written to as the bytes arrive, and a take's row follows its file within
# the action's round trip, seconds at most).
SWEEP_GRACE_SECONDS = 3600


class RecordingProblem(ValueError):
    """An upload that cannot be kept: ``code`` for the reply, ``message`` names the problem."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


# A take is sound whatever its recorder called the container (Safari's, asked for no type, says video/mp4): kept and
# served to the host's <audio> under the audio type.
AUDIO_TYPE = {"video/webm": "audio/webm", "video/mp4": "audio/mp4", "audio/x-wav": "audio/wav"}


def media_type(declared: str | None) -> str:
    """The upload's audio type without parameters (``audio/webm;codecs=opus`` is ``audio/webm``, ``video/mp4`` is
    ``audio/mp4``), if it is a recording's."""
    base = (declared or "").split(";")[0].strip().lower()
    if base not in RECORDING_TYPES:
        known = ", ".join(sorted(RECORDING_TYPES))
        raise RecordingProblem("bad_type", f"a recording must be one of {known}, not {declared or 'untyped'!r}")
    return AUDIO_TYPE.get(base, base)


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


class Stored(NamedTuple):
    size: int  # bytes of the file under the take's name
    created: bool  # this upload put it there; False: a file of that name was there (the same take, sent again)


def store(folder: Path, name: str, chunks: Iterable[bytes]) -> Stored:
    """Write the recording to ``folder/name`` whole or not at all: a temporary file of this upload's own, flushed to
    the disk, then linked to ``name`` unless a file has that name already (a file once there is never replaced).
    RecordingProblem when it is empty, too large, or does not begin as its type's files do."""
    folder.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".part")
    partial = Path(temporary)
    signed = SUFFIX_SIGNS[Path(name).suffix]
    size = 0
    try:
        with os.fdopen(handle, "wb") as out:
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
        return _link(partial, folder, name, size)
    finally:
        partial.unlink(missing_ok=True)


def _link(partial: Path, folder: Path, name: str, size: int) -> Stored:
    for _attempt in range(3):  # a file of that name may go between the link and its size (a refused send's)
        try:
            os.link(partial, folder / name)
        except FileExistsError:
            try:
                return Stored((folder / name).stat().st_size, created=False)
            except FileNotFoundError:
                continue
        except FileNotFoundError:  # the session's recordings were deleted (it finished) while this one came in
            raise RecordingProblem("answering_closed", "the session has finished") from None
        directory = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(directory)  # the link itself survives a crash
        finally:
            os.close(directory)
        return Stored(size, created=True)
    raise RecordingProblem("answering_closed", "the take was refused while it was being sent")


def takes(db: Session, session_id: int, player_id: int) -> tuple[int, int]:
    """How many takes the player and the whole session have sent (the caps count every take, deleted or not)."""
    # One row, no GROUP BY: PostgreSQL refuses a select list that repeats a grouped expression with new parameters.
    mine, everyone = db.execute(
        select(func.count().filter(Recording.player_id == player_id), func.count()).where(
            Recording.session_id == session_id
        )
    ).one()
    return mine, everyone


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


def delete_all(db: Session, folder: Path, vtt_session: VttSession, by: str, exports: Path | None = None) -> int:
    """Delete every recording of a finished (or never started) session: the files, and ``deleted_at`` on the rows
    (the record keeps that a take existed; confirmed transcripts are answers and stay).  Whatever else the project
    wrote of the session's audio goes too: temporary and unacknowledged uploads, exports and reports being built or
    left by a kill (``exports``, the instance's exports folder).  How many takes went; the caller commits.  A running
    session is refused: its console still plays them."""
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
    # No upload of a finished session gets a row, so nothing of it here is about to be named by one.
    for path in [
        *session_files(folder, TAKE_OR_UPLOAD, vtt_session.id),
        *session_files(exports, EXPORT_OR_REPORT, vtt_session.id),
    ]:
        _remove(path)
    db.execute(
        update(Recording)
        .where(Recording.session_id == vtt_session.id, Recording.deleted_at.is_(None))
        .values(deleted_at=now)
    )
    db.add(Event(session_id=vtt_session.id, at=now, kind="recordings.deleted", actor=by, payload={"files": len(names)}))
    return len(names)


def session_files(place: Path | None, kind: re.Pattern, session_id: int | None = None) -> list[Path]:
    """The project's files (and report folders) of ``kind`` in ``place``: of one session, or of every session."""
    if place is None or not place.is_dir():
        return []
    found = []
    for path in place.iterdir():
        named = kind.match(path.name)
        if named and (session_id is None or int(named["session"]) == session_id):
            found.append(path)
    return found


def sweep_orphans(db: Session, folder: Path, exports: Path, grace_seconds: float = SWEEP_GRACE_SECONDS) -> int:
    """What a kill left, older than ``grace_seconds``: uploads' temporary files, takes no kept row names (their row
    was never written, or their audio was deleted), exports and reports.  How many went (the server's start)."""
    named = set(db.scalars(select(Recording.file).where(Recording.deleted_at.is_(None))))
    cutoff = time.time() - grace_seconds
    gone = 0
    for path in [*session_files(folder, TAKE_OR_UPLOAD), *session_files(exports, EXPORT_OR_REPORT)]:
        if _last_written(path) >= cutoff or (path.parent == folder and path.name in named):
            continue
        _remove(path)
        gone += 1
    return gone


def _last_written(path: Path) -> float:
    """When ``path`` (or, for a report's folder, a file in it) was last written; a file gone since: now."""
    try:
        inside = list(path.iterdir()) if path.is_dir() and not path.is_symlink() else []
        return max([path.lstat().st_mtime, *(child.lstat().st_mtime for child in inside)])
    except FileNotFoundError:
        return time.time()


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def kept_files(db: Session, folder: Path, session_id: int) -> list[Path]:
    """The session's kept recordings that are on disk, by name."""
    names = db.scalars(
        select(Recording.file)
        .where(Recording.session_id == session_id, Recording.deleted_at.is_(None))
        .order_by(Recording.file)
    ).all()
    return [folder / name for name in names if (folder / name).is_file()]


def copy_all(db: Session, folder: Path, session_id: int, out: Path) -> int:
    """Copy the session's kept recordings into ``out`` (the export's ``recordings/``); how many were there."""
    files = kept_files(db, folder, session_id)
    for path in files:
        out.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, out / path.name)
    return len(files)
