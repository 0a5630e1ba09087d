"""``python -m vtt.workers.export CODE RECORDINGS_DIR OUT_FILE``: a session's export as one zip, built by a process
of its own.

The results page's ``export.zip`` (:func:`vtt.offloop.in_process`): every table as CSV (as ``vtt export`` writes them)
and the kept recordings under ``recordings/``.  Hundreds of megabytes of takes zipped in the server would hold its
event loop for seconds; here the zip is written to ``OUT_FILE`` whole (a temporary name until it is complete) and the
server streams it from the disk.  The takes are stored as they are (Opus and AAC are compressed already), the tables
deflated.  Prints one JSON line: ``{"recordings": count}``, or ``{"nothing": why}``.
"""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path


def main(code: str, recordings: str, out: str) -> dict:
    from sqlalchemy import select

    from ..db import db_factory_from_env
    from ..models import VttSession
    from ..offloop import written_whole
    from ..recordings import kept_files
    from ..results.export import export_tables

    with db_factory_from_env()() as db:
        session = db.scalar(select(VttSession).where(VttSession.join_code == code))
        if session is None:
            return {"nothing": f"no session with join code {code!r}"}
        tables = export_tables(db, session)
        takes = kept_files(db, Path(recordings), session.id)
    with written_whole(Path(out)) as partial, zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, frame in tables.items():
            archive.writestr(name, frame.to_csv(index=False))
        for take in takes:
            archive.write(take, f"recordings/{take.name}", compress_type=zipfile.ZIP_STORED)
    return {"recordings": len(takes)}


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:4])))
