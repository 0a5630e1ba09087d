"""``python -m vtt.workers.printouts cards|sheets SESSION_ID BASE_URL LANGUAGE OUT_FILE [JUROR_ID ...]``: a session's
join cards or paper judgment sheets drawn by a process of its own.

The host's printout links ask for them (:func:`vtt.offloop.in_process`): ReportLab drawing a card per person (a
thousand jurors: seconds) would hold the server's event loop.  The PDF goes to ``OUT_FILE``; nothing is printed.
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(kind: str, session_id: str, base: str, language: str, out: str, *juror_ids: str) -> None:
    from ..app import create_app
    from ..extensions import database
    from ..models import Juror, VttSession
    from ..on_behalf.paper_jurors import paper_jurors, sheet_rounds
    from ..printouts.documents import join_cards_pdf, paper_sheets_pdf

    app = create_app({"SOCKETIO_ASYNC_MODE": "threading"})
    with app.app_context(), database.factory(app)() as db:
        vtt_session = db.get(VttSession, int(session_id))
        if kind == "cards":
            pdf = join_cards_pdf(vtt_session, base, language)
        else:
            jurors = [db.get(Juror, int(juror)) for juror in juror_ids] if juror_ids else paper_jurors(vtt_session)
            pdf = paper_sheets_pdf(vtt_session, jurors, sheet_rounds(db, vtt_session), base, language)
    Path(out).write_bytes(pdf)


if __name__ == "__main__":
    main(*sys.argv[1:])
