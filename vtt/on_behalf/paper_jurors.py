"""Paper jurors: jurors without a device, who fill a printed judgment sheet that the host types in.

A paper juror is a juror whose group is ``paper`` (:data:`PAPER_GROUP`).  Their sheet can be printed before
the session starts: a round's aliases and the order its answers are shown in follow from the session's seed
(:func:`vtt.engine.flow.alias_order`, :func:`~vtt.engine.flow.answer_order`), and the sheet only needs the
letters, never who wears them.  What the host types in goes to the live engine as that juror's own ``sheet``
and ``vote`` actions (:func:`submit_typed`): the engine's rules (vote closed, answers not revealed) apply to
paper as to phones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from ..engine.actions import Actor
from ..engine.flow import alias_order, answer_order
from ..models import Juror, RoundAlias, SessionQuestion, VttSession
from ..persistence.queries import juror_rows

PAPER_GROUP = "paper"
ABSTAIN = "abstain"  # the vote field's value for "nobody" (a Vote row without a player)


@dataclass(frozen=True)
class SheetQuestion:
    id: int  # the SessionQuestion's id: what the engine's sheet lines name
    position: int
    qid: str
    text: str
    aliases: tuple[str, ...]  # in the order the jury is shown the answers
    revealed: bool


@dataclass(frozen=True)
class SheetRound:
    number: int
    theme: str | None
    aliases: tuple[str, ...]  # alphabetical
    questions: tuple[SheetQuestion, ...]


def paper_jurors(vtt_session: VttSession) -> list[Juror]:
    """The jurors whose group is ``paper``; a session that marks none prints a sheet for every juror."""
    marked = [juror for juror in vtt_session.live_jurors if juror.juror_group == PAPER_GROUP]
    return marked or list(vtt_session.live_jurors)


def sheet_rounds(db: Session, vtt_session: VttSession) -> list[SheetRound]:
    """Every round of the session as a juror's sheet lays it out: aliases, questions, the answers' order.

    A round already dealt uses its recorded aliases and reveal orders; a later one the ones the engine will
    deal from the seed and the round's players (all players when the round names none).
    """
    dealt: dict[int, list[str]] = {}
    for number, alias in db.execute(
        select(RoundAlias.round, RoundAlias.alias).where(RoundAlias.session_id == vtt_session.id)
    ):
        dealt.setdefault(number, []).append(alias)
    items = db.scalars(
        select(SessionQuestion)
        .where(SessionQuestion.session_id == vtt_session.id)
        .options(selectinload(SessionQuestion.question))
        .order_by(SessionQuestion.round, SessionQuestion.position)
    ).all()
    everyone = [player.id for player in vtt_session.players]
    rounds = []
    for state in vtt_session.round_states:
        players = everyone if state.participants is None else list(state.participants)
        aliases = sorted(
            dealt.get(state.number) or [alias for _, alias in alias_order(vtt_session.seed, state.number, players)]
        )
        questions = tuple(
            SheetQuestion(
                item.id,
                item.position,
                item.question.qid,
                item.question.text,
                tuple(item.reveal_order or answer_order(vtt_session.seed, item.round, item.position, aliases)),
                item.revealed_at is not None,
            )
            for item in items
            if item.round == state.number
        )
        rounds.append(SheetRound(state.number, state.theme, tuple(aliases), questions))
    return rounds


# --- the host types a paper sheet in ------------------------------------------------------------


@dataclass
class TypedSheet:
    """One juror's round as the host typed it: sheet lines and vote slots, as the engine takes them."""

    lines: dict[tuple[int, str], dict[str, Any]] = field(default_factory=dict)  # (question, alias) -> fields
    votes: dict[int, dict[str, Any]] = field(default_factory=dict)  # slot -> {alias, confidence, reason}
    unpicked_slots: list[int] = field(default_factory=list)  # a confidence or reason typed without a pick


def line_field(question: int, alias: str, name: str) -> str:
    """The form field of one sheet line's ``name`` (note, likeness, ai)."""
    return f"line-{question}-{alias}-{name}"


def vote_field(slot: int, name: str) -> str:
    """The form field of one vote slot's ``name`` (alias, confidence, reason)."""
    return f"vote-{slot}-{name}"


def _score(text: str) -> int | str | None:
    """A 1-5 field: empty is None; digits are a number; anything else goes to the engine as typed (it refuses)."""
    text = text.strip()
    if not text:
        return None
    return int(text) if text.isascii() and text.isdigit() and len(text) < 4 else text


def read_typed(form, sheet_round: SheetRound, slots: int) -> TypedSheet:
    """What the posted form says for ``sheet_round``: every line, and every vote slot the host filled."""
    typed = TypedSheet()
    for question in sheet_round.questions:
        for alias in question.aliases:
            typed.lines[question.id, alias] = {
                "note": form.get(line_field(question.id, alias, "note"), "").strip(),
                "human_likeness": _score(form.get(line_field(question.id, alias, "likeness"), "")),
                "looks_like_ai": bool(form.get(line_field(question.id, alias, "ai"))),
            }
    for slot in range(1, slots + 1):
        pick = form.get(vote_field(slot, "alias"), "").strip()
        confidence = _score(form.get(vote_field(slot, "confidence"), ""))
        reason = form.get(vote_field(slot, "reason"), "").strip()
        if not pick:
            if confidence is not None or reason:
                typed.unpicked_slots.append(slot)
            continue
        typed.votes[slot] = {"alias": None if pick == ABSTAIN else pick, "confidence": confidence, "reason": reason}
    return typed


def stored_sheet(db: Session, vtt_session: VttSession, juror: Juror, number: int) -> TypedSheet:
    """What the database holds for the juror's round, shaped like :class:`TypedSheet` (to fill the form)."""
    sheet, votes = juror_rows(db, vtt_session.id, juror.id, number)
    stored = TypedSheet()
    for row in sheet:
        stored.lines[row["question"], row["alias"]] = {
            "note": row["note"],
            "human_likeness": row["human_likeness"],
            "looks_like_ai": row["looks_like_ai"],
        }
    for row in votes:
        stored.votes[row["slot"]] = {"alias": row["alias"], "confidence": row["confidence"], "reason": row["reason"]}
    return stored


BLANK_LINE = {"note": "", "human_likeness": None, "looks_like_ai": False}


@dataclass(frozen=True)
class EntryResult:
    lines_saved: int
    votes_saved: int
    refusals: list[dict[str, str]]  # the engine's errors: {code, message, part}


def submit_typed(live, juror: Juror, number: int, typed: TypedSheet, stored: TypedSheet, entry_key: str) -> EntryResult:
    """Send what changed to the live engine as the juror's own actions: one ``sheet`` with every changed line
    (all saved or none), then one ``vote`` per changed slot.  ``entry_key`` is the form's one-time key: a form
    posted twice is a replay the engine acknowledges without a second change.
    """
    juror_actor = Actor("juror", juror.id)
    lines = [
        {"question": question, "alias": alias, **fields}
        for (question, alias), fields in typed.lines.items()
        if fields != stored.lines.get((question, alias), BLANK_LINE)
    ]
    refusals, lines_saved, votes_saved = [], 0, 0
    if lines:
        reply = live.act(juror.session_id, juror_actor, "sheet", {"lines": lines}, f"paper-{entry_key}-sheet")
        if reply.get("ok"):
            lines_saved = len(lines)
        else:
            refusals.append({**reply["error"], "part": "sheet"})
    for slot, vote in typed.votes.items():
        if vote == stored.votes.get(slot):
            continue
        reply = live.act(
            juror.session_id,
            juror_actor,
            "vote",
            {"round": number, "slot": slot, **vote},
            f"paper-{entry_key}-vote-{slot}",
        )
        if reply.get("ok"):
            votes_saved += 1
        else:
            refusals.append({**reply["error"], "part": f"vote-{slot}"})
    return EntryResult(lines_saved, votes_saved, refusals)
