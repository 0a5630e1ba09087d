"""``python -m vtt.workers.reports CODE FOLDER LANGUAGE``: a session's reports written by a process of its own.

The results page asks for them (:func:`vtt.offloop.in_process`): drawing the PDFs is seconds of pandas and
ReportLab, which in the server's process would hold the event loop.  Prints one JSON line: ``{"written": [file
names]}``, or ``{"nothing": why}`` when there is nothing to report yet.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from sqlalchemy import select

from ..cli.reports import NothingToReport, write_session_reports
from ..cli.tools import db_factory
from ..models import VttSession


def main(code: str, folder: str, language: str) -> dict:
    with db_factory()() as db:
        session = db.scalar(select(VttSession).where(VttSession.join_code == code))
        if session is None:
            return {"nothing": f"no session with join code {code!r}"}
        try:
            written = write_session_reports(db, session, Path(folder), language=language).written
        except NothingToReport as exc:
            return {"nothing": str(exc)}
    return {"written": sorted(written)}


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:4])))
