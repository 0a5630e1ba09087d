"""The engine's effects written to the database: one writer per kind of effect, then the session row.

A batch's answers, sheet lines, votes and events are gathered and written together, one ``executemany`` per kind
of row, which is what lets one transaction carry thousands of actions.  They are written before any other effect
and at the batch's end, so that every effect is applied after the ones decided before it (a juror's vote, then the
host's removal of that juror in the same batch: the removal finds the vote).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import bindparam, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from ..engine import state as engine_state
from ..engine.state import Effect, LiveState, agent_report, speech_report
from ..models import (
    Answer,
    Event,
    IdentityReveal,
    Juror,
    Phase,
    Player,
    Recording,
    RoundAlias,
    SessionQuestion,
    SessionRound,
    SessionStatus,
    SheetEntry,
    Vote,
    VttSession,
)
from .statements import execute_many

# Core tables for updates: the ORM's update path (session synchronisation) costs more than the statement.
_QUESTIONS, _ROUNDS, _ANSWERS, _SESSIONS, _PLAYERS, _RECORDINGS, _JURORS, _VOTES = (
    m.__table__ for m in (SessionQuestion, SessionRound, Answer, VttSession, Player, Recording, Juror, Vote)
)

STATUS_OF_PHASE = {
    Phase.DRAFT: SessionStatus.DRAFT,
    Phase.LOBBY: SessionStatus.LOBBY,
    Phase.FINISHED: SessionStatus.FINISHED,
}


@dataclass
class _Batch:
    """One call's database session and the rows its effects leave to write at the end."""

    db: Session
    session_id: int
    answers: list[dict[str, Any]] = field(default_factory=list)
    sheets: list[dict[str, Any]] = field(default_factory=list)
    votes: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    new_jurors: dict[str, int] = field(default_factory=dict)  # label -> id


def write_effects(
    db: Session, state: LiveState, effects: Iterable[Effect], *, session_row: bool = True
) -> dict[str, int]:
    """Write ``effects`` (in order) and, unless told not to (displaced jurors' actions leave the live session as
    it is), the session row as ``state`` now has it; returns new juror ids by label."""
    batch = _Batch(db, state.session_id)
    for effect in effects:
        writer = _WRITERS.get(type(effect))
        if writer is None:
            raise TypeError(f"no database write for {effect!r}")
        if type(effect) not in _GATHERED:
            _flush_gathered(batch)  # the rows decided before this effect are in the database when it is applied
        writer(batch, effect)
    _flush_gathered(batch)
    if session_row:
        _write_session_row(db, state)
    return batch.new_jurors


def _flush_gathered(batch: _Batch) -> None:
    """The rows gathered so far written, one statement per kind, and the lists emptied."""
    db = batch.db
    _flush_answers(batch)
    _upsert(
        db,
        SheetEntry,
        _last_per_key(batch.sheets, ("juror_id", "session_question_id", "player_id")),
        ["juror_id", "session_question_id", "player_id"],
        ["alias", "note", "human_likeness", "looks_like_ai", "updated_at", "client_key"],
    )
    _upsert(
        db,
        Vote,
        _last_per_key(batch.votes, ("session_id", "round", "juror_id", "slot")),
        ["session_id", "round", "juror_id", "slot"],
        ["alias", "player_id", "confidence", "reason", "cast_at", "client_key"],
    )
    if batch.events:
        execute_many(db, _insert(db, Event), batch.events)
    batch.sheets.clear()
    batch.votes.clear()
    batch.events.clear()


# --- one writer per kind of effect ----------------------------------------------------------------


def _on_session_row(batch: _Batch, effect: engine_state.SetPhase | engine_state.SetOpenJoin) -> None:
    """Nothing yet: the session row is written once, from the state, at the end of the batch."""


def _mark_question(batch: _Batch, effect: engine_state.MarkQuestion) -> None:
    values: dict[str, Any] = {effect.field: effect.at}
    if effect.reveal_order is not None:
        values["reveal_order"] = list(effect.reveal_order)
    batch.db.execute(update(_QUESTIONS).where(SessionQuestion.id == effect.question_id).values(**values))


def _update_round(batch: _Batch, number: int, values: dict[str, Any]) -> None:
    batch.db.execute(
        update(_ROUNDS).where(SessionRound.session_id == batch.session_id, SessionRound.number == number).values(values)
    )


def _mark_round(batch: _Batch, effect: engine_state.MarkRound) -> None:
    _update_round(batch, effect.round, {effect.field: effect.at})


def _set_participants(batch: _Batch, effect: engine_state.SetParticipants) -> None:
    _update_round(batch, effect.round, {"participants": None if effect.player_ids is None else list(effect.player_ids)})


def _set_tally(batch: _Batch, effect: engine_state.SetTally) -> None:
    _update_round(batch, effect.round, {"tally": effect.tally})


def _deal_aliases(batch: _Batch, effect: engine_state.DealAliases) -> None:
    batch.db.execute(
        _insert(batch.db, RoundAlias),
        [
            {"session_id": batch.session_id, "round": effect.round, "player_id": pid, "alias": alias}
            for pid, alias in effect.aliases
        ],
    )


def _save_answer(batch: _Batch, effect: engine_state.SaveAnswer) -> None:
    _flush_answers(batch)
    batch.answers.append(
        {
            "session_id": batch.session_id,
            "session_question_id": effect.question_id,
            "player_id": effect.player_id,
            "text": effect.text,
            "choice_index": effect.choice_index,
            "latency_ms": effect.latency_ms,
            "submitted_at": effect.at,
            "client_key": effect.client_key,
            "late": False,
            "redacted": False,
            "edited_at": None,
            "provenance": effect.provenance,
            "entered_by_host": effect.entered_by_host,
        }
    )


def _edit_answer(batch: _Batch, effect: engine_state.EditAnswer) -> None:
    _flush_answers(batch)
    values = {"text": effect.text, "redacted": effect.redacted, "edited_at": effect.at}
    if effect.redacted:
        values["choice_index"] = None
    batch.db.execute(
        update(_ANSWERS)
        .where(Answer.session_question_id == effect.question_id, Answer.player_id == effect.player_id)
        .values(**values)
    )


def _save_sheet(batch: _Batch, effect: engine_state.SaveSheet) -> None:
    batch.sheets.append(
        {
            "session_id": batch.session_id,
            "juror_id": effect.juror_id,
            "session_question_id": effect.question_id,
            "player_id": effect.player_id,
            "alias": effect.alias,
            "note": effect.note,
            "human_likeness": effect.human_likeness,
            "looks_like_ai": effect.looks_like_ai,
            "updated_at": effect.at,
            "client_key": effect.client_key,
        }
    )


def _save_vote(batch: _Batch, effect: engine_state.SaveVote) -> None:
    batch.votes.append(
        {
            "session_id": batch.session_id,
            "round": effect.round,
            "juror_id": effect.juror_id,
            "slot": effect.slot,
            "alias": effect.alias,
            "player_id": effect.player_id,
            "confidence": effect.confidence,
            "reason": effect.reason,
            "cast_at": effect.at,
            "client_key": effect.client_key,
        }
    )


def _reveal_identity(batch: _Batch, effect: engine_state.RevealIdentity) -> None:
    batch.db.execute(
        _insert(batch.db, IdentityReveal).values(
            session_id=batch.session_id, round=effect.round, player_id=effect.player_id, revealed_at=effect.at
        )
    )


def _merge_details(batch: _Batch, player_id: int, key: str, report: dict[str, Any]) -> None:
    """The player's details read, ``key`` set to ``report``, written back (rare: an agent's or a page's report)."""
    details = batch.db.scalar(select(_PLAYERS.c.details).where(_PLAYERS.c.id == player_id)) or {}
    batch.db.execute(update(_PLAYERS).where(_PLAYERS.c.id == player_id).values(details={**details, key: report}))


def _set_agent_status(batch: _Batch, effect: engine_state.SetAgentStatus) -> None:
    _merge_details(batch, effect.player_id, "agent", agent_report(effect))


def _set_speech_notice(batch: _Batch, effect: engine_state.SetSpeechNotice) -> None:
    _merge_details(batch, effect.player_id, "speech", speech_report(effect))


def _save_recording(batch: _Batch, effect: engine_state.SaveRecording) -> None:  # rare: one per spoken take
    batch.db.execute(
        _insert(batch.db, Recording).values(
            session_id=batch.session_id,
            session_question_id=effect.question_id,
            player_id=effect.player_id,
            file=effect.file,
            mime=effect.mime,
            size=effect.size,
            duration_ms=effect.duration_ms,
            ended_at=effect.ended_at,
            received_at=effect.at,
            client_key=effect.client_key,
        )
    )


def _save_take_transcript(batch: _Batch, effect: engine_state.SaveTakeTranscript) -> None:
    """The transcript the host asked for, kept on the recording's row."""
    batch.db.execute(
        update(_RECORDINGS)
        .where(_RECORDINGS.c.session_id == batch.session_id, _RECORDINGS.c.file == effect.file)
        .values(
            transcript=effect.suggestion.text,
            transcript_confidence=effect.suggestion.confidence,
            transcribed_by=effect.suggestion.backend,
        )
    )


def _save_device_check(batch: _Batch, effect: engine_state.SaveDeviceCheck) -> None:  # the latest check stays
    table = _PLAYERS if effect.role == "player" else _JURORS
    batch.db.execute(update(table).where(table.c.id == effect.person_id).values(device_check=effect.report))


def _renew_token(batch: _Batch, effect: engine_state.RenewToken) -> None:
    table = _PLAYERS if effect.role == "player" else _JURORS
    batch.db.execute(update(table).where(table.c.id == effect.person_id).values(token=effect.token))


def _remove_juror(batch: _Batch, effect: engine_state.RemoveJuror) -> None:
    """The juror's link replaced and the juror marked removed: from now on their votes and sheet lines count nowhere
    (``counted``).  The rows stay, the record of what the juror did; the event log lists the votes left out."""
    db = batch.db
    columns = ("round", "slot", "alias", "player_id", "confidence", "reason", "cast_at")
    cast = db.execute(  # Core rows: an ORM Vote the state was loaded with may be older than the batch's upserts
        select(*(_VOTES.c[name] for name in columns))
        .where(_VOTES.c.juror_id == effect.juror_id)
        .order_by(_VOTES.c.round, _VOTES.c.slot)
    )
    removed = [{**row._asdict(), "cast_at": row.cast_at.isoformat()} for row in cast]
    db.execute(update(_JURORS).where(_JURORS.c.id == effect.juror_id).values(token=effect.token, removed_at=effect.at))
    batch.events.append(
        {
            "session_id": batch.session_id,
            "at": effect.at,
            "kind": "votes_removed",
            "actor": "host",
            "payload": {"juror_id": effect.juror_id, "votes": removed},
            "client_key": None,
        }
    )


def _set_attention(batch: _Batch, effect: engine_state.SetAttention) -> None:
    batch.db.execute(update(_JURORS).where(_JURORS.c.id == effect.juror_id).values(attention_passed=effect.passed))


def _add_juror(batch: _Batch, effect: engine_state.AddJuror) -> None:
    juror = Juror(session_id=batch.session_id, label=effect.label, token=effect.token, juror_group=effect.group)
    batch.db.add(juror)
    batch.db.flush()  # its id, for the join's reply and the state
    batch.new_jurors[effect.label] = juror.id


def _log_event(batch: _Batch, effect: engine_state.LogEvent) -> None:
    batch.events.append(
        {
            "session_id": batch.session_id,
            "at": effect.at,
            "kind": effect.kind,
            "actor": effect.actor,
            "payload": effect.payload,
            "client_key": effect.client_key,
        }
    )


# Effects whose rows are gathered and written together; any other effect is applied after them.
_GATHERED = frozenset({engine_state.SaveAnswer, engine_state.SaveSheet, engine_state.SaveVote, engine_state.LogEvent})

_WRITERS: dict[type[Effect], Callable[[_Batch, Any], None]] = {
    engine_state.SetPhase: _on_session_row,
    engine_state.SetOpenJoin: _on_session_row,
    engine_state.MarkQuestion: _mark_question,
    engine_state.MarkRound: _mark_round,
    engine_state.SetParticipants: _set_participants,
    engine_state.SetTally: _set_tally,
    engine_state.DealAliases: _deal_aliases,
    engine_state.SaveAnswer: _save_answer,
    engine_state.EditAnswer: _edit_answer,
    engine_state.SaveSheet: _save_sheet,
    engine_state.SaveVote: _save_vote,
    engine_state.RevealIdentity: _reveal_identity,
    engine_state.SetAgentStatus: _set_agent_status,
    engine_state.SetSpeechNotice: _set_speech_notice,
    engine_state.SaveRecording: _save_recording,
    engine_state.SaveTakeTranscript: _save_take_transcript,
    engine_state.SaveDeviceCheck: _save_device_check,
    engine_state.RenewToken: _renew_token,
    engine_state.RemoveJuror: _remove_juror,
    engine_state.AddJuror: _add_juror,
    engine_state.SetAttention: _set_attention,
    engine_state.LogEvent: _log_event,
}


# --- rows gathered over the batch, and the session row ----------------------------------------------


def _flush_answers(batch: _Batch) -> None:
    _upsert(
        batch.db,
        Answer,
        _last_per_key(batch.answers, ("session_question_id", "player_id")),
        ["session_question_id", "player_id"],
        [
            "text",
            "choice_index",
            "latency_ms",
            "submitted_at",
            "client_key",
            "redacted",
            "edited_at",
            "provenance",
            "entered_by_host",
        ],
    )
    batch.answers.clear()


def _last_per_key(rows: list[dict[str, Any]], key: tuple[str, ...]) -> list[dict[str, Any]]:
    """One row per key, the last written (an upsert statement may not touch a row twice)."""
    latest = {tuple(row[k] for k in key): row for row in rows}
    return list(latest.values())


# The session row as the state has it, written at the end of every batch (parameters bound per batch).
_SESSION_FIELDS = (
    "phase",
    "phase_deadline_at",
    "current_round",
    "current_position",
    "state_version",
    "audience_versions",
    "open_join",
    "open_join_cap",
    "join_door",
    "status",
)
_WRITE_SESSION = (
    update(_SESSIONS)
    .where(_SESSIONS.c.id == bindparam("session_id"))
    .values({name: bindparam(f"new_{name}") for name in _SESSION_FIELDS})
)


def _write_session_row(db: Session, state: LiveState) -> None:
    values = {
        "phase": state.phase,
        "phase_deadline_at": state.deadline,
        "current_round": state.round,
        "current_position": state.position,
        "state_version": state.state_version,
        "audience_versions": dict(state.audience_versions),
        "open_join": state.open_join,
        "open_join_cap": state.open_join_cap,
        "join_door": state.join_door,
        "status": STATUS_OF_PHASE.get(state.phase, SessionStatus.RUNNING),
    }
    parameters = {f"new_{name}": value for name, value in values.items()}
    execute_many(db, _WRITE_SESSION, [{"session_id": state.session_id, **parameters}])


# --- statements built once ------------------------------------------------------------------------


@functools.cache
def _insert_statement(dialect: str, model):
    """A Core insert into ``model``'s table: executemany without the ORM's bulk path (~5x less CPU)."""
    return (postgresql.insert if dialect == "postgresql" else sqlite.insert)(model.__table__)


@functools.cache
def _upsert_statement(dialect: str, model, keys: tuple[str, ...], updated: tuple[str, ...]):
    # Built once: an ON CONFLICT statement with its "excluded" columns cost ~1 ms to build, per batch.
    statement = _insert_statement(dialect, model)
    return statement.on_conflict_do_update(
        index_elements=list(keys), set_={name: statement.excluded[name] for name in updated}
    )


def _insert(db: Session, model):
    return _insert_statement(db.get_bind().dialect.name, model)


def _upsert(db: Session, model, rows: list[dict[str, Any]], keys: list[str], updated: list[str]) -> None:
    if rows:
        execute_many(db, _upsert_statement(db.get_bind().dialect.name, model, tuple(keys), tuple(updated)), rows)
