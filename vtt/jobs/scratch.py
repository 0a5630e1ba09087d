"""Files built for a download (an export, a report's folder) live in the instance's exports folder until they are
downloaded (:func:`vtt.views.downloads.send_built` removes them) or until ``VTT_DOWNLOAD_KEEP_SECONDS`` have passed:
the running server's job workers remove older ones (:func:`remove_expired`), whatever left them (a host who never
downloaded, a process killed while building or sending one)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..recordings import EXPORT_OR_REPORT
from .model import ACTIVE, Job


def in_use(db: Session, folder: Path) -> set[str]:
    """The names in ``folder`` that a queued or running job is building (their age is no sign they are left)."""
    names = set()
    for args in db.scalars(select(Job.args).where(Job.state.in_(ACTIVE))):
        for arg in (args or {}).get("argv", []):
            path = Path(str(arg))
            if path.parent == folder:
                names.update({path.name, f".{path.name}.part"})
    return names


def remove_expired(db: Session, folder: Path, keep_seconds: float, at: float | None = None) -> int:
    """Remove vtt's files in ``folder`` (``SESSION-RANDOM-name``, :data:`vtt.recordings.EXPORT_OR_REPORT`; anything
    else there is someone else's) older than ``keep_seconds`` (last written) that no job is building; how many."""
    if not folder.is_dir():
        return 0
    busy, limit, removed = in_use(db, folder), (at or time.time()) - keep_seconds, 0
    for path in folder.iterdir():
        try:
            if not EXPORT_OR_REPORT.match(path.name) or path.name in busy or path.stat().st_mtime > limit:
                continue
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()
        except FileNotFoundError:  # downloaded meanwhile
            continue
        removed += 1
    return removed
