"""The results page (tallies per round with the verdict, a CogME radar per player) and the report downloads.

The downloads are part 2's files as ``vtt report`` and ``vtt export`` write them, made afresh on
each request so that they carry the latest final marks.
"""

from __future__ import annotations

import io
import tempfile
import zipfile
from pathlib import Path

from flask import Blueprint, abort, flash, redirect, render_template, send_file, url_for
from flask_babel import get_locale
from flask_babel import gettext as _

from ..cli_reports import NothingToReport, write_session_reports
from ..extensions import db
from ..models import VttSession
from ..session_data import export_tables
from ..session_results import session_results
from .auth import host_required

bp = Blueprint("results", __name__, url_prefix="/host/sessions/<int:session_id>/results")

PDF_FILES = ("report.pdf", "profiles.pdf", "tallies.pdf")


@bp.get("/")
@host_required
def page(session_id: int):
    vtt_session = _session(session_id)
    return render_template("results/page.html", s=vtt_session, results=session_results(db.session, vtt_session),
                           pdf_files=PDF_FILES)


@bp.get("/files/<name>")
@host_required
def report_file(session_id: int, name: str):
    """One PDF of the report (``report.pdf``, ``profiles.pdf``, ``tallies.pdf``) or all its CSVs (``report-csv.zip``).

    The PDFs are in the page's language (``?lang=``, else the remembered or the browser's one); the CSVs are English.
    """
    vtt_session = _session(session_id)
    if name not in (*PDF_FILES, "report-csv.zip"):
        abort(404)
    with tempfile.TemporaryDirectory() as folder:
        try:
            written = write_session_reports(db.session, vtt_session, Path(folder), language=str(get_locale())).written
        except NothingToReport:
            flash(_("%(file)s: no graded answer yet, so nothing to report (grade the open answers first).",
                    file=name), "error")
            return redirect(url_for(".page", session_id=vtt_session.id))
        if name.endswith(".pdf") and name not in written:  # tallies.pdf needs votes or a judgment sheet
            flash(_("%(file)s: no votes and no judgment sheet yet, so no tallies.", file=name), "error")
            return redirect(url_for(".page", session_id=vtt_session.id))
        if name.endswith(".pdf"):
            data = written[name].read_bytes()
        else:
            data = _zip({file: path.read_bytes() for file, path in sorted(written.items()) if file.endswith(".csv")})
    return _download(data, f"{vtt_session.join_code}_{name}")


@bp.get("/export.zip")
@host_required
def export(session_id: int):
    """Every table of the session as CSV, plus the wide file (as ``vtt export`` writes them)."""
    vtt_session = _session(session_id)
    tables = export_tables(db.session, vtt_session)
    data = _zip({file: frame.to_csv(index=False).encode("utf-8") for file, frame in tables.items()})
    return _download(data, f"{vtt_session.join_code}_export.zip")


def _session(session_id: int) -> VttSession:
    return db.session.get(VttSession, session_id) or abort(404)


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _download(data: bytes, filename: str):
    return send_file(io.BytesIO(data), as_attachment=True, download_name=filename,
                     mimetype="application/pdf" if filename.endswith(".pdf") else "application/zip")
