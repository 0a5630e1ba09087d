"""A session's :class:`LiveState` read from the database, and the version that says whether one is current."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from ..engine.state import (
    AUDIENCES,
    AnswerInfo,
    LiveState,
    PlayerInfo,
    QuestionInfo,
    RecordingInfo,
    RoundInfo,
    TakeTranscript,
    VoteInfo,
)
from ..models import (
    DEFAULT_ANSWER_MODES,
    Answer,
    ClipPlayback,
    IdentityReveal,
    Juror,
    Jury,
    Player,
    Question,
    Recording,
    RoundAlias,
    SessionQuestion,
    SessionRound,
    Vote,
    VttSession,
)
from ..transcribe.levels import level_of
from .counted import live_votes
from .statements import dbapi_connection, prepared

# Run before every batch: built once, on Core columns (an ORM select goes through the ORM's compile and results).
_SESSIONS = VttSession.__table__
_VERSION = select(_SESSIONS.c.state_version).where(_SESSIONS.c.id == bindparam("session_id"))
_VERSION_FOR_UPDATE = _VERSION.with_for_update()


def current_version(db: Session, session_id: int, *, lock: bool = False) -> int | None:
    """The session's state_version in the database (``lock``: hold the row until commit, PostgreSQL)."""
    dialect = db.get_bind().dialect
    if dialect.name == "sqlite":
        row = dbapi_connection(db).execute(prepared(_VERSION, dialect).sql, (session_id,)).fetchone()
        return None if row is None else row[0]
    return db.scalar(_VERSION_FOR_UPDATE if lock else _VERSION, {"session_id": session_id})


def load_state(db: Session, session_id: int) -> LiveState:
    """The whole live state of a session, read in a handful of queries."""
    row = db.get(VttSession, session_id)
    if row is None:
        raise LookupError(f"no session with id {session_id}")
    player_rows = db.scalars(select(Player).where(Player.session_id == session_id)).all()
    players = {p.id: _player(p) for p in player_rows}
    questions = _questions(db, session_id)
    rounds = _rounds(db, session_id)
    answers = _answers(db, session_id)
    recordings = _recordings(db, session_id)
    votes: dict[int, dict[int, VoteInfo]] = defaultdict(dict)
    if row.current_round is not None:
        current = live_votes().where(Vote.session_id == session_id, Vote.round == row.current_round)
        for v in db.scalars(current):
            votes[v.juror_id][v.slot] = VoteInfo(v.player_id, v.alias, v.confidence, v.reason)
    # the live jury only: a displaced or AI juror takes no part in the session as it is played
    jurors = db.execute(
        select(Juror.id, Juror.label, Juror.juror_group, Juror.removed_at, Juror.device_check).where(
            Juror.session_id == session_id, Juror.jury == Jury.LIVE
        )
    ).all()
    device_checks = {("player", p.id): p.device_check for p in player_rows if p.device_check}
    device_checks.update((("juror", j.id), j.device_check) for j in jurors if j.device_check)
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
        answers=answers,
        recordings=recordings,
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
        device_checks=device_checks,
    )


def _player(p: Player) -> PlayerInfo:
    return PlayerInfo(
        p.id,
        p.name,
        p.kind,
        p.age,
        p.stage,
        _report(p.details, "agent"),
        list(p.answer_modes or DEFAULT_ANSWER_MODES),
        _report(p.details, "speech"),
    )


def _report(details: dict[str, Any] | None, kind: str) -> dict[str, Any] | None:
    """The player's last report of ``kind`` ("agent", "speech") from their details, if one is there."""
    report = (details or {}).get(kind)
    return report if isinstance(report, dict) else None


def _questions(db: Session, session_id: int) -> dict[int, QuestionInfo]:
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
    return questions


def _rounds(db: Session, session_id: int) -> dict[int, RoundInfo]:
    rounds = {
        r.number: RoundInfo(r.number, r.theme, r.participants, {}, r.vote_opened_at, r.vote_closed_at, r.tally)
        for r in db.scalars(select(SessionRound).where(SessionRound.session_id == session_id))
    }
    for alias in db.scalars(select(RoundAlias).where(RoundAlias.session_id == session_id)):
        rounds[alias.round].aliases[alias.player_id] = alias.alias
    for reveal in db.scalars(select(IdentityReveal).where(IdentityReveal.session_id == session_id)):
        rounds[reveal.round].revealed.add(reveal.player_id)
    return rounds


def _answers(db: Session, session_id: int) -> dict[int, dict[int, AnswerInfo]]:
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
    return dict(answers)


def _recordings(db: Session, session_id: int) -> dict[int, dict[int, RecordingInfo]]:
    recordings: dict[int, dict[int, RecordingInfo]] = defaultdict(dict)
    takes = select(Recording).where(Recording.session_id == session_id, Recording.deleted_at.is_(None))
    for take in db.scalars(takes.order_by(Recording.id)):  # the latest take of each (question, player) stays
        suggestion = None
        if take.transcript is not None and take.transcribed_by:
            said, confidence, backend = take.transcript, take.transcript_confidence, take.transcribed_by
            suggestion = TakeTranscript(said, confidence, backend, level_of(said, confidence, backend))
        recordings[take.session_question_id][take.player_id] = RecordingInfo(
            take.player_id,
            take.file,
            take.mime,
            take.size,
            take.duration_ms,
            take.ended_at,
            take.received_at,
            suggestion,
        )
    return dict(recordings)
