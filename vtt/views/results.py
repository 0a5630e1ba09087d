"""The results page (tallies per round with the verdict, a CogME radar per player) and the report downloads.

The downloads are part 2's files as ``vtt report`` and ``vtt export`` write them, made afresh on
each request so that they carry the latest final marks.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from flask import Blueprint, abort, current_app, flash, redirect, render_template, url_for
from flask_babel import get_locale
from flask_babel import gettext as _

from ..extensions import request_db
from ..judge.agreement import judge_card
from ..models import VttSession
from ..offloop import in_process
from ..results.summary import session_results
from .auth import host_required
from .downloads import download, zip_files

bp = Blueprint("results", __name__, url_prefix="/host/sessions/<int:session_id>/results")

PDF_FILES = ("report.pdf", "profiles.pdf", "tallies.pdf")


@bp.get("/")
@host_required
def page(session_id: int):
    vtt_session = _session(session_id)
    return render_template(
        "results/page.html",
        s=vtt_session,
        results=session_results(request_db(), vtt_session),
        judge=judge_card(request_db(), vtt_session),
        pdf_files=PDF_FILES,
    )


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
        result = _in_worker("vtt.workers.reports", vtt_session.join_code, folder, str(get_locale()))
        if "nothing" in result:
            flash(
                _("%(file)s: no graded answer yet, so nothing to report (grade the open answers first).", file=name),
                "error",
            )
            return redirect(url_for(".page", session_id=vtt_session.id))
        written = {file: Path(folder) / file for file in result["written"]}
        if name.endswith(".pdf") and name not in written:  # tallies.pdf needs votes or a judgment sheet
            flash(_("%(file)s: no votes and no judgment sheet yet, so no tallies.", file=name), "error")
            return redirect(url_for(".page", session_id=vtt_session.id))
        if name.endswith(".pdf"):
            data = written[name].read_bytes()
        else:
            data = zip_files(
                {file: path.read_bytes() for file, path in sorted(written.items()) if file.endswith(".csv")}
            )
    return download(data, f"{vtt_session.join_code}_{name}")


def _in_worker(module: str, *args: str) -> dict:
    """A worker's one JSON line (:func:`vtt.offloop.in_process`); a worker that fails is this request's 500."""
    done = in_process(module, *args, database_url=current_app.config["DATABASE_URL"])
    if done.returncode != 0:
        raise RuntimeError(f"{module} failed ({done.returncode}): {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


@bp.get("/export.zip")
@host_required
def export(session_id: int):
    """Every table of the session as CSV, plus the wide file and the kept recordings of spoken answers (as
    ``vtt export`` writes them)."""
    vtt_session = _session(session_id)
    with tempfile.TemporaryDirectory() as folder:
        done = in_process(
            "vtt.cli",
            "export",
            vtt_session.join_code,
            "--out",
            folder,
            "--recordings-dir",
            current_app.config["RECORDINGS_DIR"],
            database_url=current_app.config["DATABASE_URL"],
        )
        if done.returncode != 0:
            raise RuntimeError(f"vtt export failed ({done.returncode}): {done.stderr[-2000:]}")
        root = Path(folder)
        data = zip_files(
            {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}
        )
    return download(data, f"{vtt_session.join_code}_export.zip")


def _session(session_id: int) -> VttSession:
    return request_db().get(VttSession, session_id) or abort(404)
