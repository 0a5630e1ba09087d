"""The database side of the live state: load a :class:`LiveState`, write the engine's effects.

``write_effects`` turns a batch's effects into few statements (one ``executemany`` per kind of
row), which is what lets one transaction carry thousands of votes.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, delete, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from ..engine import state as engine_state
from ..engine.state import (
    AUDIENCES,
    AnswerInfo,
    Effect,
    LiveState,
    PlayerInfo,
    QuestionInfo,
    RecordingInfo,
    RoundInfo,
    VoteInfo,
    agent_report,
    speech_report,
)
from ..models import (
    DEFAULT_ANSWER_MODES,
    Answer,
    ClipPlayback,
    Event,
    IdentityReveal,
    Juror,
    Phase,
    Player,
    Question,
    Recording,
    RoundAlias,
    SessionQuestion,
    SessionRound,
    SessionStatus,
    SheetEntry,
    Vote,
    VttSession,
)

# Core tables for updates: the ORM's update path (session synchronisation) costs more than the statement.
_QUESTIONS, _ROUNDS, _ANSWERS, _SESSIONS, _PLAYERS = (
    m.__table__ for m in (SessionQuestion, SessionRound, Answer, VttSession, Player)
)

STATUS_OF_PHASE = {
    Phase.DRAFT: SessionStatus.DRAFT,
    Phase.LOBBY: SessionStatus.LOBBY,
    Phase.FINISHED: SessionStatus.FINISHED,
}


def load_state(db: Session, session_id: int) -> LiveState:
    """The whole live state of a session, read in a handful of queries."""
    row = db.get(VttSession, session_id)
    if row is None:
        raise LookupError(f"no session with id {session_id}")
    players = {
        p.id: PlayerInfo(
            p.id,
            p.name,
            p.kind,
            p.age,
            p.stage,
            _agent(p.details),
            list(p.answer_modes or DEFAULT_ANSWER_MODES),
            _speech(p.details),
        )
        for p in db.scalars(select(Player).where(Player.session_id == session_id))
    }
    questions = {}
    for placed, q in db.execute(
        select(SessionQuestion, Question).join(Question).where(SessionQuestion.session_id == session_id)
    ):
        questions[placed.id] = QuestionInfo(
            placed.id,
            placed.round,
            placed.position,
            q.qid,
            q.text,
            q.type,
            [str(c) for c in q.choices],
            q.answer_index,
            q.reference_answer,
            q.clip_source,
            q.clip_start,
            q.clip_end,
            q.clip_kind.value if q.clip_kind else None,
            shown_at=placed.shown_at,
            clip_started_at=placed.clip_started_at,
            answers_closed_at=placed.answers_closed_at,
            revealed_at=placed.revealed_at,
            reveal_order=list(placed.reveal_order) if placed.reveal_order is not None else None,
        )
    rounds = {
        r.number: RoundInfo(r.number, r.theme, r.participants, {}, r.vote_opened_at, r.vote_closed_at, r.tally)
        for r in db.scalars(select(SessionRound).where(SessionRound.session_id == session_id))
    }
    for alias in db.scalars(select(RoundAlias).where(RoundAlias.session_id == session_id)):
        rounds[alias.round].aliases[alias.player_id] = alias.alias
    for reveal in db.scalars(select(IdentityReveal).where(IdentityReveal.session_id == session_id)):
        rounds[reveal.round].revealed.add(reveal.player_id)
    answers: dict[int, dict[int, AnswerInfo]] = defaultdict(dict)
    for a in db.scalars(select(Answer).where(Answer.session_id == session_id)):
        answers[a.session_question_id][a.player_id] = AnswerInfo(
            a.player_id,
            a.text,
            a.choice_index,
            a.latency_ms,
            a.submitted_at,
            a.redacted,
            a.edited_at is not None,
            a.provenance,
            bool(a.entered_by_host),
        )
    recordings: dict[int, dict[int, RecordingInfo]] = defaultdict(dict)
    takes = select(Recording).where(Recording.session_id == session_id, Recording.deleted_at.is_(None))
    for take in db.scalars(takes.order_by(Recording.id)):  # the latest take of each (question, player) stays
        recordings[take.session_question_id][take.player_id] = RecordingInfo(
            take.player_id, take.file, take.mime, take.size, take.duration_ms, take.ended_at, take.received_at
        )
    votes: dict[int, dict[int, VoteInfo]] = defaultdict(dict)
    if row.current_round is not None:
        for v in db.scalars(select(Vote).where(Vote.session_id == session_id, Vote.round == row.current_round)):
            votes[v.juror_id][v.slot] = VoteInfo(v.player_id, v.alias, v.confidence, v.reason)
    jurors = db.execute(
        select(Juror.id, Juror.label, Juror.juror_group, Juror.removed_at).where(Juror.session_id == session_id)
    ).all()
    return LiveState(
        session_id=row.id,
        code=row.join_code,
        name=row.name,
        seed=row.seed,
        rounds=row.rounds,
        answer_seconds=row.answer_seconds,
        vote_seconds=row.vote_seconds,
        reveal_policy=row.reveal_policy,
        ai_votes_per_juror=row.ai_votes_per_juror,
        open_join=row.open_join,
        phase=row.phase,
        deadline=row.phase_deadline_at,
        round=row.current_round,
        position=row.current_position,
        state_version=row.state_version,
        audience_versions={a: int(row.audience_versions.get(a, 0)) for a in AUDIENCES},
        players=players,
        questions=questions,
        round_info=rounds,
        answers=dict(answers),
        recordings=dict(recordings),
        votes=dict(votes),
        juror_labels={j.label for j in jurors},
        juror_ids={j.label: j.id for j in jurors},
        removed_jurors={j.id for j in jurors if j.removed_at is not None},
        open_jurors=sum(j.juror_group == "open" for j in jurors),
        open_join_cap=row.open_join_cap,
        join_door=row.join_door,
        pass_rule=row.pass_rule.value,
        pass_alpha=row.pass_alpha,
        pass_threshold_pct=row.pass_threshold_pct,
        clip_playback=ClipPlayback(row.design.get("clip_playback", ClipPlayback.HOST.value)),
        language=row.design.get("language"),
    )


def _agent(details: dict[str, Any] | None) -> dict[str, Any] | None:
    report = (details or {}).get("agent")
    return report if isinstance(report, dict) else None


def _speech(details: dict[str, Any] | None) -> dict[str, Any] | None:
    report = (details or {}).get("speech")
    return report if isinstance(report, dict) else None


def current_version(db: Session, session_id: int, *, lock: bool = False) -> int | None:
    """The session's state_version in the database (``lock``: hold the row until commit, PostgreSQL)."""
    dialect = db.get_bind().dialect
    if dialect.name == "sqlite":
        row = _dbapi(db).execute(_prepared(_VERSION, dialect).sql, (session_id,)).fetchone()
        return None if row is None else row[0]
    return db.scalar(_VERSION_FOR_UPDATE if lock else _VERSION, {"session_id": session_id})


# Statements the writer runs in every batch, built once (building one costs more than running it).
# Core columns, not the ORM's: an ORM select goes through the ORM's compile and result machinery.
_VERSION = select(_SESSIONS.c.state_version).where(_SESSIONS.c.id == bindparam("session_id"))
_VERSION_FOR_UPDATE = _VERSION.with_for_update()
_EVENTS = Event.__table__
_SEEN_KEYS = select(_EVENTS.c.actor, _EVENTS.c.client_key).where(
    _EVENTS.c.session_id == bindparam("session_id"), _EVENTS.c.client_key.in_(bindparam("keys", expanding=True))
)


# --- the writer's hot statements on SQLite ---------------------------------------------------------
#
# SQLAlchemy's execution path (the ORM session, then Core's execution context, events and result
# set-up) costs ~100-300 us per statement, several times SQLite's own work for a batch's rows.  On
# SQLite the statements every batch runs are compiled once and run on the DBAPI connection of the
# session's transaction, with each column's own bind processors (the same values reach the
# database).  Other databases keep SQLAlchemy's path (PostgreSQL's executemany is batched by it).


@dataclass(frozen=True)
class _Prepared:
    sql: str
    names: tuple[str, ...]  # the parameters, in the statement's order
    processors: tuple[Any, ...]  # each parameter's bind processor, or None


_PREPARED: dict[tuple[int, str, tuple[str, ...]], _Prepared] = {}


def _prepared(statement, dialect, keys: tuple[str, ...] = ()) -> _Prepared:
    cache_key = (id(statement), dialect.name, keys)
    found = _PREPARED.get(cache_key)
    if found is None:
        compiled = statement.compile(dialect=dialect, column_keys=list(keys) or None, for_executemany=bool(keys))
        names = tuple(compiled.positiontup or ())
        if compiled.statement is not statement or not compiled.positional:
            raise TypeError("a prepared statement needs a positional dialect")
        processors = tuple(compiled.binds[name].type._cached_bind_processor(dialect) for name in names)
        found = _PREPARED[cache_key] = _Prepared(compiled.string, names, processors)
        _STATEMENTS_KEPT.append(statement)  # ids stay valid: the statements live as long as the cache
    return found


_STATEMENTS_KEPT: list[Any] = []


def _dbapi(db: Session):
    """The DBAPI connection of ``db``'s transaction (looked up once per transaction: ``db.connection()``
    costs ~40 us a call)."""
    held, transaction = db.info.get("vtt.dbapi"), db.get_transaction()
    if held is not None and transaction is not None and held[0] is transaction:
        return held[1]
    connection = db.connection().connection.dbapi_connection
    db.info["vtt.dbapi"] = (db.get_transaction(), connection)
    return connection


_UNSET = object()


def _parameters(prepared: _Prepared, rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The rows' parameters in the statement's order, each through its column's bind processor (once for a
    run of the same value: a batch's rows share their timestamp)."""
    columns = []
    for name, process in zip(prepared.names, prepared.processors):
        values = [row[name] for row in rows]
        if process is not None:
            last, done, processed = _UNSET, None, []
            for value in values:
                if value is not last:
                    last, done = value, process(value)
                processed.append(done)
            values = processed
        columns.append(values)
    return list(zip(*columns)) if columns else [()] * len(rows)


def _execute_many(db: Session, statement, rows: list[dict[str, Any]]) -> None:
    """``db.execute(statement, rows)``; on SQLite compiled once and run on the DBAPI cursor."""
    dialect = db.get_bind().dialect
    if dialect.name != "sqlite":
        db.execute(statement, rows)
        return
    prepared = _prepared(statement, dialect, tuple(rows[0]))
    if not set(prepared.names) <= rows[0].keys():  # a default to compute: SQLAlchemy's path does that
        db.execute(statement, rows)
        return
    cursor = _dbapi(db).cursor()
    try:
        parameters = _parameters(prepared, rows)
        if len(parameters) == 1:
            cursor.execute(prepared.sql, parameters[0])
        else:
            cursor.executemany(prepared.sql, parameters)
    finally:
        cursor.close()


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
        _execute_many(db, _upsert_statement(db.get_bind().dialect.name, model, tuple(keys), tuple(updated)), rows)


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


def write_effects(db: Session, state: LiveState, effects: Iterable[Effect]) -> dict[str, int]:
    """Write ``effects`` (in order) and the session row as ``state`` now has it; returns new juror ids by label."""
    session_id = state.session_id
    answers_rows: list[dict[str, Any]] = []
    sheets: list[dict[str, Any]] = []
    votes: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    new_jurors: dict[str, int] = {}
    for effect in effects:
        match effect:
            case engine_state.SetPhase():
                pass  # the session row is written once, from the state, below
            case engine_state.MarkQuestion():
                values = {effect.field: effect.at}
                if effect.reveal_order is not None:
                    values["reveal_order"] = list(effect.reveal_order)
                db.execute(update(_QUESTIONS).where(SessionQuestion.id == effect.question_id).values(**values))
            case engine_state.MarkRound():
                db.execute(
                    update(_ROUNDS)
                    .where(SessionRound.session_id == session_id, SessionRound.number == effect.round)
                    .values({effect.field: effect.at})
                )
            case engine_state.SetParticipants():
                db.execute(
                    update(_ROUNDS)
                    .where(SessionRound.session_id == session_id, SessionRound.number == effect.round)
                    .values(participants=None if effect.player_ids is None else list(effect.player_ids))
                )
            case engine_state.DealAliases():
                db.execute(
                    _insert(db, RoundAlias),
                    [
                        {"session_id": session_id, "round": effect.round, "player_id": pid, "alias": alias}
                        for pid, alias in effect.aliases
                    ],
                )
            case engine_state.SaveAnswer():
                _flush_answers(db, answers_rows)
                answers_rows.append(
                    {
                        "session_id": session_id,
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
            case engine_state.EditAnswer():
                _flush_answers(db, answers_rows)
                values = {"text": effect.text, "redacted": effect.redacted, "edited_at": effect.at}
                if effect.redacted:
                    values["choice_index"] = None
                db.execute(
                    update(_ANSWERS)
                    .where(Answer.session_question_id == effect.question_id, Answer.player_id == effect.player_id)
                    .values(**values)
                )
            case engine_state.SaveSheet():
                sheets.append(
                    {
                        "session_id": session_id,
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
            case engine_state.SaveVote():
                votes.append(
                    {
                        "session_id": session_id,
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
            case engine_state.SetTally():
                db.execute(
                    update(_ROUNDS)
                    .where(SessionRound.session_id == session_id, SessionRound.number == effect.round)
                    .values(tally=effect.tally)
                )
            case engine_state.RevealIdentity():
                db.execute(
                    _insert(db, IdentityReveal).values(
                        session_id=session_id, round=effect.round, player_id=effect.player_id, revealed_at=effect.at
                    )
                )
            case engine_state.SetOpenJoin():
                pass  # on the session row, below
            case engine_state.SetAgentStatus():  # rare (an agent's report): read, merge, write the player's details
                details = db.scalar(select(_PLAYERS.c.details).where(_PLAYERS.c.id == effect.player_id)) or {}
                db.execute(
                    update(_PLAYERS)
                    .where(_PLAYERS.c.id == effect.player_id)
                    .values(details={**details, "agent": agent_report(effect)})
                )
            case engine_state.SaveRecording():  # rare (one per spoken take)
                db.execute(
                    _insert(db, Recording).values(
                        session_id=session_id,
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
            case engine_state.SetSpeechNotice():  # rare (a page's word on its voice): merged like an agent's
                details = db.scalar(select(_PLAYERS.c.details).where(_PLAYERS.c.id == effect.player_id)) or {}
                db.execute(
                    update(_PLAYERS)
                    .where(_PLAYERS.c.id == effect.player_id)
                    .values(details={**details, "speech": speech_report(effect)})
                )
            case engine_state.RemoveJuror():
                _remove_juror(db, session_id, effect)
            case engine_state.RenewToken():
                table = _PLAYERS if effect.role == "player" else Juror.__table__
                db.execute(update(table).where(table.c.id == effect.person_id).values(token=effect.token))
            case engine_state.AddJuror():
                juror = Juror(session_id=session_id, label=effect.label, token=effect.token, juror_group=effect.group)
                db.add(juror)
                db.flush()
                new_jurors[effect.label] = juror.id
            case engine_state.LogEvent():
                events.append(
                    {
                        "session_id": session_id,
                        "at": effect.at,
                        "kind": effect.kind,
                        "actor": effect.actor,
                        "payload": effect.payload,
                        "client_key": effect.client_key,
                    }
                )
            case _:
                raise TypeError(f"no database write for {effect!r}")
    _flush_answers(db, answers_rows)
    _upsert(
        db,
        SheetEntry,
        _last_per_key(sheets, ("juror_id", "session_question_id", "player_id")),
        ["juror_id", "session_question_id", "player_id"],
        ["alias", "note", "human_likeness", "looks_like_ai", "updated_at", "client_key"],
    )
    _upsert(
        db,
        Vote,
        _last_per_key(votes, ("session_id", "round", "juror_id", "slot")),
        ["session_id", "round", "juror_id", "slot"],
        ["alias", "player_id", "confidence", "reason", "cast_at", "client_key"],
    )
    if events:
        _execute_many(db, _insert(db, Event), events)
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
    _execute_many(
        db, _WRITE_SESSION, [{"session_id": session_id, **{f"new_{name}": value for name, value in values.items()}}]
    )
    return new_jurors


def _remove_juror(db: Session, session_id: int, effect: engine_state.RemoveJuror) -> None:
    """The juror's link replaced, marked removed, and their votes deleted, logged first with every field."""
    removed = [
        {
            "round": v.round,
            "slot": v.slot,
            "alias": v.alias,
            "player_id": v.player_id,
            "confidence": v.confidence,
            "reason": v.reason,
            "cast_at": v.cast_at.isoformat(),
        }
        for v in db.scalars(select(Vote).where(Vote.juror_id == effect.juror_id))
    ]
    db.execute(
        update(Juror.__table__)
        .where(Juror.__table__.c.id == effect.juror_id)
        .values(token=effect.token, removed_at=effect.at)
    )
    db.execute(delete(Vote.__table__).where(Vote.__table__.c.juror_id == effect.juror_id))
    db.add(
        Event(
            session_id=session_id,
            at=effect.at,
            kind="votes_removed",
            actor="host",
            payload={"juror_id": effect.juror_id, "votes": removed},
            client_key=None,
        )
    )


def _flush_answers(db: Session, rows: list[dict[str, Any]]) -> None:
    _upsert(
        db,
        Answer,
        _last_per_key(rows, ("session_question_id", "player_id")),
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
    rows.clear()


def _last_per_key(rows: list[dict[str, Any]], key: tuple[str, ...]) -> list[dict[str, Any]]:
    """One row per key, the last written (an upsert statement may not touch a row twice)."""
    latest = {tuple(row[k] for k in key): row for row in rows}
    return list(latest.values())


def seen_client_keys(db: Session, session_id: int, keys: list[tuple[str, str]]) -> set[tuple[str, str]]:
    """Which ``(actor, client key)`` pairs the event log already holds: replays to acknowledge again."""
    if not keys:
        return set()
    if db.get_bind().dialect.name == "sqlite":
        # One index lookup per (actor, key) pair of the batch: by the client key alone, SQLite walked
        # every event of the session (a batch's cost grew with the session's history), and with two
        # IN lists it looks up every actor x key combination (250,000 for a burst's batch of 500).
        pairs = sorted(set(keys))
        found = (
            _dbapi(db)
            .execute(
                f"SELECT e.actor, e.client_key FROM (VALUES {', '.join(['(?, ?)'] * len(pairs))}) AS k "
                f"JOIN {_EVENTS.name} AS e ON e.session_id = ? AND e.actor = k.column1 AND e.client_key = k.column2",
                (*(part for pair in pairs for part in pair), session_id),
            )
            .fetchall()
        )
    else:
        found = db.execute(_SEEN_KEYS, {"session_id": session_id, "keys": sorted({key for _actor, key in keys})})
    return {(actor, key) for actor, key in found} & set(keys)


def juror_rows(db: Session, session_id: int, juror_id: int, round_: int | None) -> tuple[list[dict], list[dict]]:
    """A juror's own sheet entries and votes of ``round_`` (for the juror's snapshot)."""
    if round_ is None:
        return [], []
    sheet = db.execute(
        select(
            SheetEntry.session_question_id,
            SheetEntry.alias,
            SheetEntry.note,
            SheetEntry.human_likeness,
            SheetEntry.looks_like_ai,
        )
        .join(SessionQuestion, SessionQuestion.id == SheetEntry.session_question_id)
        .where(SheetEntry.juror_id == juror_id, SessionQuestion.round == round_)
    ).all()
    votes = db.execute(
        select(Vote.round, Vote.slot, Vote.alias, Vote.confidence, Vote.reason).where(
            Vote.session_id == session_id, Vote.juror_id == juror_id, Vote.round == round_
        )
    ).all()
    return (
        [{"question": q, "alias": a, "note": n, "human_likeness": h, "looks_like_ai": m} for q, a, n, h, m in sheet],
        [{"round": r, "slot": s, "alias": a, "confidence": c, "reason": why} for r, s, a, c, why in votes],
    )


def jury_rows(db: Session, session_id: int) -> list[dict[str, Any]]:
    """The session's jurors for the host, newest first: label, joined openly or not, removed or not, when."""
    rows = db.execute(
        select(Juror.label, Juror.juror_group, Juror.removed_at, Juror.joined_at)
        .where(Juror.session_id == session_id)
        .order_by(Juror.id.desc())
    ).all()
    return [
        {
            "label": label,
            "open": group == "open",
            "removed": removed is not None,
            "joined_at": joined.isoformat().replace("+00:00", "Z") if joined else None,
        }
        for label, group, removed, joined in rows
    ]
