"""The host console: question banks and session configurations (the live console comes in part 5)."""

from __future__ import annotations

from flask import Blueprint, abort, render_template, request
from sqlalchemy import func, or_, select
from sqlalchemy.orm import selectinload

from analysis.taxonomy import UnknownElement, lookup

from ..banks.store import bank_composition
from ..extensions import db
from ..models import Player, Question, QuestionBank, QuestionTag, QuestionType, SessionQuestion, VttSession
from .auth import host_required

bp = Blueprint("host", __name__, url_prefix="/host")

PAGE_SIZE = 50


@bp.get("/")
@host_required
def dashboard():
    session = db.session
    counts = dict(session.execute(select(Question.bank_id, func.count()).group_by(Question.bank_id)).all())
    banks = session.scalars(select(QuestionBank).order_by(QuestionBank.name)).all()
    sessions = session.scalars(select(VttSession).options(selectinload(VttSession.players))
                               .order_by(VttSession.created_at.desc())).all()
    return render_template("host/dashboard.html", banks=banks, counts=counts, sessions=sessions)


@bp.get("/banks/<int:bank_id>")
@host_required
def bank(bank_id: int):
    session = db.session
    bank = session.get(QuestionBank, bank_id) or abort(404)
    filters = QuestionFilter.from_args(request.args)
    query = filters.apply(select(Question).where(Question.bank_id == bank.id))
    total = session.scalar(select(func.count()).select_from(query.subquery()))
    pages = max(1, -(-total // PAGE_SIZE))
    page = min(max(1, _int_arg("page", 1)), pages)
    questions = session.scalars(query.options(selectinload(Question.tags)).order_by(Question.id)
                                .limit(PAGE_SIZE).offset((page - 1) * PAGE_SIZE)).all()
    return render_template("host/bank.html", bank=bank, questions=questions, total=total, page=page,
                           pages=pages, filters=filters, comp=bank_composition(session, bank))


def _int_arg(name: str, default: int) -> int:
    text = request.args.get(name, "")
    return int(text) if text.isascii() and text.isdigit() and len(text) < 10 else default


class QuestionFilter:
    """The bank browser's filters: an element (any spelling), a type, a clip kind, a text search."""

    def __init__(self, element: str, qtype: str, clip: str, text: str):
        self.element, self.type, self.clip, self.text = element, qtype, clip, text
        self.error = None
        self.canonical_element = None
        if element:
            try:
                self.canonical_element = lookup(element)[1]
            except UnknownElement as exc:
                self.error = str(exc)

    @classmethod
    def from_args(cls, args) -> QuestionFilter:
        return cls(args.get("element", "").strip(), args.get("type", "").strip(), args.get("clip", "").strip(),
                   args.get("q", "").strip())

    def apply(self, query):
        if self.canonical_element:
            query = query.where(Question.tags.any(QuestionTag.element == self.canonical_element))
        if self.type in ("mcq", "open"):
            query = query.where(Question.type == QuestionType(self.type))
        if self.clip in ("shot", "scene"):
            query = query.where(Question.clip_kind == self.clip)
        if self.text:
            # autoescape: a search for "%" or "_" means those characters, not wildcards
            query = query.where(or_(Question.text.icontains(self.text, autoescape=True),
                                    Question.qid.icontains(self.text, autoescape=True)))
        return query

    def args(self, **overrides) -> dict:
        current = {"element": self.element, "type": self.type, "clip": self.clip, "q": self.text}
        current.update(overrides)
        return {k: v for k, v in current.items() if v}


@bp.get("/sessions/<int:session_id>")
@host_required
def session_config(session_id: int):
    session = db.session
    vtt_session = session.get(VttSession, session_id) or abort(404)
    placed = session.scalars(
        select(SessionQuestion).where(SessionQuestion.session_id == vtt_session.id)
        .options(selectinload(SessionQuestion.question).selectinload(Question.tags))
        .order_by(SessionQuestion.round, SessionQuestion.position)).all()
    rounds: dict[int, list[SessionQuestion]] = {}
    for item in placed:
        rounds.setdefault(item.round, []).append(item)
    themes = {r.number: r.theme for r in vtt_session.round_states}
    players = session.scalars(select(Player).where(Player.session_id == vtt_session.id).order_by(Player.id)).all()
    return render_template("host/session.html", s=vtt_session, rounds=rounds, themes=themes, players=players)
