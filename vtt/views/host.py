"""The host console: question banks (browse, upload) and a session's configuration with everyone's link.

Creating a session is :mod:`vtt.views.setup`; running one is the live console.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Blueprint, abort, current_app, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from sqlalchemy import func, or_, select
from sqlalchemy.orm import selectinload
from werkzeug.exceptions import MethodNotAllowed, NotFound, RequestEntityTooLarge
from werkzeug.routing import RequestRedirect

from analysis.taxonomy import UnknownElement, element_order, lookup

from ..banks import FORMATS
from ..banks.store import bank_composition
from ..banks.upload import (
    MAX_UPLOAD_BYTES,
    UPLOAD_SUFFIXES,
    UploadBusy,
    UploadError,
    import_beside_loop,
    upload_name,
    upload_slot,
)
from ..engine.actions import HOST
from ..extensions import request_db
from ..kinds import AnswerMode
from ..models import (
    Player,
    Question,
    QuestionBank,
    QuestionTag,
    QuestionType,
    Recording,
    RoundStatus,
    SessionQuestion,
    VttSession,
)
from ..problems import summarize, unique
from ..realtime.hub import current_hub
from ..sessions.links import person_links
from ..studies import studies_of
from .auth import host_required
from .displaced import displaced_card
from .joinurl import join_base_url, only_this_machine, set_console_base_url, valid_base_url

bp = Blueprint("host", __name__, url_prefix="/host")

PAGE_SIZE = 50
# The other pages of a session, linked from its page when this app serves them (others build them).
SESSION_PAGES = (
    ("live", _l("Live console")),
    ("grading", _l("Grading")),
    ("results", _l("Results")),
    ("join-cards.pdf", _l("Join cards (PDF)")),
    ("paper-sheets.pdf", _l("Paper judgment sheets (PDF)")),
    ("paper", _l("Paper jurors' marks")),
)


@bp.get("/")
@host_required
def dashboard():
    return _dashboard()


def _dashboard(upload: dict | None = None, status: int = 200):
    db = request_db()
    counts = dict(db.execute(select(Question.bank_id, func.count()).group_by(Question.bank_id)).all())
    banks = db.scalars(select(QuestionBank).order_by(QuestionBank.name)).all()
    sessions = db.scalars(
        select(VttSession).options(selectinload(VttSession.players)).order_by(VttSession.created_at.desc())
    ).all()
    return render_template(
        "host/dashboard.html",
        banks=banks,
        counts=counts,
        sessions=sessions,
        upload=upload or {},
        formats=FORMATS,
        suffixes=UPLOAD_SUFFIXES,
    ), status


@bp.url_value_preprocessor
def _bound_bank_upload(endpoint: str | None, _values: dict | None) -> None:
    """A bank upload over :data:`MAX_UPLOAD_BYTES` is refused before its body is read.

    This runs before the app's ``before_request`` functions, and so before the CSRF check parses the form
    (on the event loop); a body without a Content-Length stops at the same limit as it is read.
    """
    if endpoint != "host.upload_bank":
        return
    request.max_content_length = MAX_UPLOAD_BYTES
    if request.content_length is not None and request.content_length > MAX_UPLOAD_BYTES:
        raise RequestEntityTooLarge(description=upload_too_large_message())


def upload_too_large_message() -> str:
    return _(
        "The bank file is too large: at most %(mb)d MB can be uploaded. Split it into several banks, or "
        "import it with “vtt questions import” on the server.",
        mb=MAX_UPLOAD_BYTES // 2**20,
    )


@bp.post("/banks/upload")
@host_required
def upload_bank():
    """Import an uploaded bank file whole, as ``vtt questions import`` does, or show every problem and import nothing.

    Reading, checking and writing run beside the event loop (:func:`vtt.banks.upload.import_beside_loop`: a
    thread, or a worker process for a large file), one upload at a time; the request's own session only reads.
    """
    upload = request.files.get("file")
    filename = upload.filename if upload else ""
    form = {
        "bank": request.form.get("bank", "").strip(),
        "format": request.form.get("format", "auto"),
        "strict": bool(request.form.get("strict")),
        "allow_missing_keys": bool(request.form.get("allow_missing_keys")),
    }
    if not filename:
        return _dashboard({**form, "problems": [_("Choose a file to upload.")]}, 422)
    bank_name = form["bank"] or upload_name(filename).rsplit(".", 1)[0]
    try:
        with upload_slot():
            outcome = import_beside_loop(
                current_app.config["DATABASE_URL"],
                upload.stream,
                filename,
                bank_name,
                fmt=form["format"],
                strict=form["strict"],
                allow_missing_keys=form["allow_missing_keys"],
                actor="host",
            )
    except UploadBusy:
        return _dashboard(
            {**form, "problems": [_("Another bank file is being imported. Send this one again when it is done.")]}, 409
        )
    except UploadError as error:
        problems = unique(error.problems)
        return _dashboard(
            {
                **form,
                "file": upload_name(filename),
                "count": len(problems),
                "encoding": error.encoding,
                "problems": summarize(problems, _("fix these first; the rest are alike")),
            },
            422,
        )
    flash(
        _(
            "Imported %(count)d questions (%(format)s) into bank %(bank)s; %(untagged)d without CogME tags.",
            count=outcome.questions,
            format=outcome.format,
            bank=bank_name,
            untagged=outcome.untagged,
        ),
        "success",
    )
    warnings = unique(outcome.warnings)
    if warnings:
        flash(_("%(count)d known quirks of published files, imported as noted:", count=len(warnings)), "info")
        for line in summarize(warnings, _("tick “refuse quirks” to list them all as problems")):
            flash(line, "info")
    return redirect(url_for("host.bank", bank_id=outcome.bank_id))


@bp.get("/banks/<int:bank_id>")
@host_required
def bank(bank_id: int):
    db = request_db()
    bank = db.get(QuestionBank, bank_id) or abort(404)
    filters = QuestionFilter.from_args(request.args)
    if filters.error:  # an unknown value filters out everything rather than being ignored
        questions, total, page, pages = [], 0, 1, 1
    else:
        query = filters.apply(select(Question).where(Question.bank_id == bank.id))
        total = db.scalar(select(func.count()).select_from(query.subquery()))
        pages = max(1, -(-total // PAGE_SIZE))
        page = min(max(1, _int_arg("page", 1)), pages)
        questions = db.scalars(
            query.options(selectinload(Question.tags))
            .order_by(Question.id)
            .limit(PAGE_SIZE)
            .offset((page - 1) * PAGE_SIZE)
        ).all()
    return render_template(
        "host/bank.html",
        bank=bank,
        questions=questions,
        total=total,
        page=page,
        pages=pages,
        filters=filters,
        comp=bank_composition(db, bank),
        element_names=[name for _module, name in element_order()],
    )


def _int_arg(name: str, default: int) -> int:
    text = request.args.get(name, "")
    return int(text) if text.isascii() and text.isdigit() and len(text) < 10 else default


class QuestionFilter:
    """The bank browser's filters: an element (any spelling), a type, a clip kind, a text search.

    ``error`` names a value that matches nothing (an unknown element, type or clip kind).
    """

    TYPES = ("mcq", "open")
    CLIPS = ("shot", "scene")

    def __init__(self, element: str, qtype: str, clip: str, text: str):
        self.element, self.type, self.clip, self.text = element, qtype, clip, text
        self.error = None
        self.canonical_element = None
        if element:
            try:
                self.canonical_element = lookup(element)[1]
            except UnknownElement:
                self.error = _("No questions match: %(value)s is not a CogME element.", value=f"“{element}”")
        if qtype and qtype not in self.TYPES:
            self.error = _("No questions match: the type %(value)s is unknown (mcq or open).", value=f"“{qtype}”")
        if clip and clip not in self.CLIPS:
            self.error = _("No questions match: the clip kind %(value)s is unknown (shot or scene).", value=f"“{clip}”")

    @classmethod
    def from_args(cls, args) -> QuestionFilter:
        return cls(
            args.get("element", "").strip(),
            args.get("type", "").strip(),
            args.get("clip", "").strip(),
            args.get("q", "").strip(),
        )

    def apply(self, query):
        if self.canonical_element:
            query = query.where(Question.tags.any(QuestionTag.element == self.canonical_element))
        if self.type:
            query = query.where(Question.type == QuestionType(self.type))
        if self.clip:
            query = query.where(Question.clip_kind == self.clip)
        if self.text:
            # autoescape: a search for "%" or "_" means those characters, not wildcards
            query = query.where(
                or_(
                    Question.text.icontains(self.text, autoescape=True),
                    Question.qid.icontains(self.text, autoescape=True),
                )
            )
        return query

    def args(self, **overrides) -> dict:
        current = {"element": self.element, "type": self.type, "clip": self.clip, "q": self.text}
        current.update(overrides)
        return {k: v for k, v in current.items() if v}


@bp.get("/sessions/<int:session_id>")
@host_required
def session_config(session_id: int):
    db = request_db()
    vtt_session = db.get(VttSession, session_id) or abort(404)
    placed = db.scalars(
        select(SessionQuestion)
        .where(SessionQuestion.session_id == vtt_session.id)
        .options(selectinload(SessionQuestion.question).selectinload(Question.tags))
        .order_by(SessionQuestion.round, SessionQuestion.position)
    ).all()
    rounds: dict[int, list[SessionQuestion]] = {}
    for item in placed:
        rounds.setdefault(item.round, []).append(item)
    round_states = {r.number: r for r in vtt_session.round_states}
    players = db.scalars(select(Player).where(Player.session_id == vtt_session.id).order_by(Player.id)).all()
    base = join_base_url()
    deleted = db.execute(select(Recording.deleted_at).where(Recording.session_id == vtt_session.id)).scalars().all()
    return render_template(
        "host/session.html",
        recordings={"kept": deleted.count(None), "deleted": len(deleted) - deleted.count(None)},
        spoken=any(AnswerMode.SPOKEN.value in p.answer_modes for p in players),
        studies=studies_of(db, vtt_session.id),
        s=vtt_session,
        rounds=rounds,
        round_states=round_states,
        players=players,
        base_url=base,
        links=person_links(vtt_session, base, current_app.config["SECRET_KEY"]),
        base_url_local=only_this_machine(base),
        pages=_session_pages(vtt_session.id),
        pending=RoundStatus.PENDING,
        displaced=displaced_card(db, vtt_session, request.args.get("batch", type=int)),
    )


def _session_pages(session_id: int) -> list[tuple[str, str]]:
    """``(path, label)`` of the session's other pages that this app serves (whoever's blueprint has them)."""
    adapter = current_app.url_map.bind("localhost")
    found = []
    for suffix, label in SESSION_PAGES:
        path = f"/host/sessions/{session_id}/{suffix}"
        try:
            adapter.match(path, method="GET")
        except RequestRedirect as moved:  # served with a trailing slash
            path = urlsplit(moved.new_url).path
        except (NotFound, MethodNotAllowed):
            continue
        found.append((path, str(label)))
    return found


@bp.post("/join-base-url")
@host_required
def set_base_url():
    """The address links start with on this console (empty: back to VTT_BASE_URL or the derived one)."""
    text = request.form.get("base_url", "").strip()
    back = request.form.get("next", "")
    back = back if back.startswith("/") and not back.startswith("//") else url_for("host.dashboard")
    if request.form.get("reset") or not text:
        set_console_base_url(None)
        flash(_("Links start with %(url)s again.", url=join_base_url()), "success")
        return redirect(back)
    url = valid_base_url(text)
    if url is None:
        flash(_("%(text)s is not an http:// or https:// address; the links are unchanged.", text=text), "error")
        return redirect(back)
    set_console_base_url(url)
    flash(_("Links now start with %(url)s on this console.", url=url), "success")
    return redirect(back)


@bp.post("/sessions/<int:session_id>/rounds/<int:number>/participants")
@host_required
def set_participants(session_id: int, number: int):
    """Who plays a round, through the engine's own ``set_participants`` action (everyone ticked: everyone)."""
    vtt_session = request_db().get(VttSession, session_id) or abort(404)
    chosen = sorted({int(value) for value in request.form.getlist("players") if value.isascii() and value.isdigit()})
    everyone = chosen == sorted(player.id for player in vtt_session.players)
    reply = current_hub().act(
        session_id, HOST, "set_participants", {"round": number, "players": None if everyone else chosen}
    )
    if reply.get("ok"):
        flash(_("Round %(number)d: participants saved.", number=number), "success")
    else:
        flash(_("Round %(number)d: %(message)s", number=number, message=reply["error"]["message"]), "error")
    return redirect(url_for("host.session_config", session_id=session_id, _anchor=f"round-{number}"))


@bp.post("/sessions/<int:session_id>/new-link")
@host_required
def new_link(session_id: int):
    """Replace a player's or juror's link (sent to the wrong person, a lost phone): the old one stops working and
    its open pages close.  Through the engine's ``new_link`` action, like every change to a live session."""
    request_db().get(VttSession, session_id) or abort(404)
    player, juror = request.form.get("player", ""), request.form.get("juror", "")
    args = {"player": int(player)} if player.isascii() and player.isdigit() else {"juror": juror[:40]}
    reply = current_hub().act(session_id, HOST, "new_link", args)
    who = juror or next((p.name for p in request_db().get(VttSession, session_id).players if str(p.id) == player), "?")
    if reply.get("ok"):
        flash(_("%(who)s has a new link; the old one no longer works.", who=who), "success")
    else:
        flash(_("%(who)s: %(message)s", who=who, message=reply["error"]["message"]), "error")
    return redirect(
        url_for("host.session_config", session_id=session_id, _anchor="players-title" if player else "jurors-title")
    )
