"""``python -m vtt.workers.session_reports CODE FOLDER LANGUAGE``: a session's reports written by a process of its own.

The results page asks for them (:func:`vtt.offloop.in_process`): drawing the PDFs is seconds of pandas and
ReportLab, which in the server's process would hold the event loop.  Their CSVs are zipped here too, as
``report-csv.zip`` (written whole: the server streams it from the folder).  Prints one JSON line: ``{"written":
[file names]}``, or ``{"nothing": why}`` when there is nothing to report yet.
"""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

from sqlalchemy import select

from ..db import db_factory_from_env
from ..models import VttSession
from ..offloop import written_whole
from ..reports.session import NothingToReport, write_session_reports

CSV_ZIP = "report-csv.zip"


def main(code: str, folder: str, language: str) -> dict:
    with db_factory_from_env()() as db:
        session = db.scalar(select(VttSession).where(VttSession.join_code == code))
        if session is None:
            return {"nothing": f"no session with join code {code!r}"}
        try:
            written = write_session_reports(db, session, Path(folder), language=language).written
        except NothingToReport as exc:
            return {"nothing": str(exc)}
    tables = sorted(name for name in written if name.endswith(".csv"))
    with written_whole(Path(folder) / CSV_ZIP) as partial, zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as out:
        for name in tables:
            out.write(Path(folder) / name, name)
    return {"written": sorted([*written, CSV_ZIP])}


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:4])))
