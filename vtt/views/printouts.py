"""The host's printouts of a session (join cards, paper judgment sheets) and the form that types a paper
juror's marks and vote in, through the live engine as that juror's own actions."""

from __future__ import annotations

import secrets
import tempfile
from pathlib import Path

from flask import Blueprint, Response, abort, current_app, flash, redirect, render_template, request, url_for
from flask_babel import get_locale
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from ..extensions import request_db
from ..models import Juror, VttSession
from ..offloop import in_process
from ..on_behalf.paper_jurors import (
    ABSTAIN,
    BLANK_LINE,
    PAPER_GROUP,
    line_field,
    paper_jurors,
    read_typed,
    sheet_rounds,
    stored_sheet,
    submit_typed,
    vote_field,
)
from ..realtime.hub import current_hub
from .auth import host_required
from .joinurl import join_base_url

bp = Blueprint("printouts", __name__, url_prefix="/host/sessions/<int:session_id>")

# The engine's refusals a host meets on this form, said in the page's language (others show the engine's words).
REFUSALS = {
    "vote_closed": _l("The vote of this round is not open, so the vote was not saved."),
    "round_closed": _l("This round's vote is closed: its sheet is final."),
    "not_revealed": _l("Marks can be saved only for questions whose answers the jury has been shown."),
    "finished": _l("The session has finished: sheets and votes are final."),
}


def _session(session_id: int) -> VttSession:
    return request_db().get(VttSession, session_id) or abort(404)


def _drawn(kind: str, vtt_session: VttSession, *juror_ids: str) -> bytes:
    """Join cards or paper sheets, drawn by ``vtt.workers.printouts`` in a process of its own (off the loop)."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "printout.pdf"
        done = in_process(
            "vtt.workers.printouts",
            kind,
            str(vtt_session.id),
            join_base_url(),
            str(get_locale()),
            str(out),
            *juror_ids,
            database_url=current_app.config["DATABASE_URL"],
        )
        if done.returncode != 0:
            raise RuntimeError(f"vtt.workers.printouts failed ({done.returncode}): {done.stderr[-2000:]}")
        return out.read_bytes()


def _pdf(data: bytes, name: str) -> Response:
    return Response(data, mimetype="application/pdf", headers={"Content-Disposition": f'inline; filename="{name}"'})


@bp.get("/join-cards.pdf")
@host_required
def join_cards(session_id: int):
    vtt_session = _session(session_id)
    pdf = _drawn("cards", vtt_session)
    return _pdf(pdf, f"join-cards-{vtt_session.join_code}.pdf")


@bp.get("/paper-sheets.pdf")
@host_required
def paper_sheets(session_id: int):
    """``?juror=<id>``: that juror's sheet; else every paper juror's (every juror's when none is marked paper)."""
    vtt_session = _session(session_id)
    jurors = [_juror(vtt_session, request.args["juror"])] if request.args.get("juror") else paper_jurors(vtt_session)
    if not jurors:
        abort(404, description=_("This session has no jurors yet: add some to print their sheets."))
    pdf = _drawn("sheets", vtt_session, *(str(juror.id) for juror in jurors))
    suffix = f"-{jurors[0].label}" if len(jurors) == 1 else ""
    return _pdf(pdf, f"paper-sheets-{vtt_session.join_code}{suffix}.pdf")


def _juror(vtt_session: VttSession, text: str) -> Juror:
    juror = next((j for j in vtt_session.live_jurors if str(j.id) == text.strip()), None)
    return juror or abort(404, description=_("This session has no juror %(juror)s.", juror=text))


@bp.route("/paper", methods=["GET", "POST"])
@host_required
def paper_entry(session_id: int):
    vtt_session = _session(session_id)
    jurors = sorted(vtt_session.live_jurors, key=lambda j: j.juror_group != PAPER_GROUP)  # paper jurors first
    rounds = sheet_rounds(request_db(), vtt_session)
    if not jurors or not rounds:
        return render_template("printouts/paper_entry.html", s=vtt_session, jurors=jurors, rounds=rounds)
    source = request.form if request.method == "POST" else request.args
    juror = _juror(vtt_session, source["juror"]) if source.get("juror") else jurors[0]
    number = _round_number(source.get("round", ""), vtt_session.current_round or 1, len(rounds))
    sheet_round = rounds[number - 1]
    stored = stored_sheet(request_db(), vtt_session, juror, number)
    page = {
        "s": vtt_session,
        "jurors": jurors,
        "rounds": rounds,
        "juror": juror,
        "sheet_round": sheet_round,
        "slots": range(1, vtt_session.ai_votes_per_juror + 1),
        "values": stored,
        "problems": [],
    }
    if request.method == "GET":
        return _entry_page(page)

    typed = read_typed(request.form, sheet_round, vtt_session.ai_votes_per_juror)
    if typed.unpicked_slots:
        problems = [
            _("Vote %(slot)s: choose who is the AI (or nobody) before its confidence or reason.", slot=slot)
            for slot in typed.unpicked_slots
        ]
        return _entry_page({**page, "values": typed, "problems": problems}, 422)
    result = submit_typed(
        current_hub(), juror, number, typed, stored, request.form.get("entry") or secrets.token_hex(8)
    )
    if result.refusals:
        problems = [_refusal_text(refusal) for refusal in result.refusals]
        return _entry_page({**page, "values": typed, "problems": problems, "saved": result}, 409)
    if result.lines_saved or result.votes_saved:
        flash(
            _(
                "Saved for juror %(label)s, round %(round)s: %(lines)s sheet lines, %(votes)s votes.",
                label=juror.label,
                round=number,
                lines=result.lines_saved,
                votes=result.votes_saved,
            ),
            "success",
        )
    else:
        flash(_("Nothing changed, so nothing was sent."), "info")
    return redirect(url_for(".paper_entry", session_id=vtt_session.id, juror=juror.id, round=number))


def _round_number(text: str, default: int, rounds: int) -> int:
    number = int(text) if text.isascii() and text.isdigit() and len(text) < 4 else default
    return min(max(number, 1), rounds)


def _refusal_text(refusal: dict[str, str]) -> str:
    part = refusal["part"]
    what = _("Sheet") if part == "sheet" else _("Vote %(slot)s", slot=part.split("-", 1)[1])
    known = REFUSALS.get(refusal["code"])
    reason = f"{known} ({refusal['message']})" if known else refusal["message"]
    return _("%(what)s not saved: %(reason)s", what=what, reason=reason)


def _entry_page(page: dict, status: int = 200):
    return render_template(
        "printouts/paper_entry.html",
        **page,
        entry=secrets.token_hex(8),
        blank=BLANK_LINE,
        line_field=line_field,
        vote_field=vote_field,
        abstain=ABSTAIN,
        paper_group=PAPER_GROUP,
    ), status
