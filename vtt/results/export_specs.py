"""The tables of a session's export, one spec each: its file, the records it has a row for, and its columns.

A column is named once, next to how its value is read from a record; the header is the spec's column names, also
for a table without rows.  Players' and jurors' tokens (their logins) and the client keys (replay ids) are never
columns; secrets inside payloads are blanked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from analysis.taxonomy import TagSet

from ..banks.store import question_record
from ..models import RUBRIC_DIMENSIONS, Answer, Juror, Player, SessionQuestion, VttSession
from ..transcribe.levels import level_of
from .export_values import blanked, export_timestamp, is_credential, json_text, names_a_secret, whole_numbers_exact
from .session_rows import RecordRows, SessionRows
from .tables import answer_correct

TAG_COLUMNS = tuple(TagSet().as_text())  # a question's tags as the bank CSV spells them: targets, contents, thinking


class ExportSource:
    """What the export's rows are read from: the session, its rows, and lookups by id."""

    def __init__(self, session: VttSession, rows: SessionRows, records: RecordRows) -> None:
        self.session, self.rows, self.records = session, rows, records
        self._placed = {sq.id: sq for sq in rows.placed}
        self._players = {p.id: p for p in rows.players}
        self._jurors = {j.id: j for j in rows.jurors}
        self._answers = {a.id: a for a in rows.answers}
        self._tags: dict[int, dict[str, str]] = {}

    def placed(self, session_question_id: int) -> SessionQuestion:
        return self._placed[session_question_id]

    def player(self, player_id: int) -> Player:
        return self._players[player_id]

    def player_name(self, player_id: int | None) -> str | None:
        return None if player_id is None else self._players[player_id].name

    def juror(self, juror_id: int) -> Juror:
        return self._jurors[juror_id]

    def answer(self, answer_id: int) -> Answer:
        return self._answers[answer_id]

    def tags(self, placed: SessionQuestion) -> dict[str, str]:
        """The placed question's tags as the bank CSV spells them (worked out once per question)."""
        if placed.id not in self._tags:
            self._tags[placed.id] = question_record(placed.question).tags.as_text()
        return self._tags[placed.id]


Value = Callable[[Any, ExportSource], object]  # a column's value for (record, source)


@dataclass(frozen=True)
class ExportTable:
    """One file of the export: a row per record, a column per entry of ``columns``, in their order."""

    file: str
    records: Callable[[ExportSource], Iterable[Any]]
    columns: dict[str, Value]

    def table(self, source: ExportSource) -> pd.DataFrame:
        rows = [[value(record, source) for value in self.columns.values()] for record in self.records(source)]
        return whole_numbers_exact(pd.DataFrame(rows, columns=list(self.columns), dtype=object))


def _transcript_level(recording) -> str | None:
    """How sure the suggestion was shown to the host (vtt/transcribe/levels.py); None when none was asked for."""
    if recording.transcript is None or not recording.transcribed_by:
        return None
    return level_of(recording.transcript, recording.transcript_confidence, recording.transcribed_by)


def _placed_question(question_of: Callable[[Any, ExportSource], int]) -> dict[str, Value]:
    """``round, position, qid``: where the record's question (``question_of``: its session question id) was placed."""
    return {
        "round": lambda record, source: source.placed(question_of(record, source)).round,
        "position": lambda record, source: source.placed(question_of(record, source)).position,
        "qid": lambda record, source: source.placed(question_of(record, source)).question.qid,
    }


def _rubric(mark_of: Callable[[Any], object]) -> dict[str, Value]:
    """A column per rubric dimension of the record's mark (``mark_of``)."""
    return {dimension: _rubric_score(mark_of, dimension) for dimension in RUBRIC_DIMENSIONS}


def _rubric_score(mark_of: Callable[[Any], object], dimension: str) -> Value:
    return lambda record, _: getattr(mark_of(record), dimension)


def _tag(name: str) -> Value:
    return lambda placed, source: source.tags(placed)[name]


def _own_question(record, _) -> int:
    return record.session_question_id


def _answers_question(record, source: ExportSource) -> int:
    """The session question of the answer a mark or suggestion is about."""
    return source.answer(record.answer_id).session_question_id


EXPORT_TABLES = (
    ExportTable(
        "session.csv",
        lambda source: [source.session],
        {
            "id": lambda s, _: s.id,
            "name": lambda s, _: s.name,
            "join_code": lambda s, _: s.join_code,
            "bank": lambda s, _: s.bank.name if s.bank else None,
            "status": lambda s, _: s.status.value,
            "phase": lambda s, _: s.phase.value,
            "rounds": lambda s, _: s.rounds,
            "questions_per_round": lambda s, _: s.questions_per_round,
            "seed": lambda s, _: s.seed,
            "answer_seconds": lambda s, _: s.answer_seconds,
            "vote_seconds": lambda s, _: s.vote_seconds,
            "reveal_policy": lambda s, _: s.reveal_policy.value,
            "pass_rule": lambda s, _: s.pass_rule.value,
            "pass_alpha": lambda s, _: s.pass_alpha,
            "pass_threshold_pct": lambda s, _: s.pass_threshold_pct,
            "ai_votes_per_juror": lambda s, _: s.ai_votes_per_juror,
            "scoring_method": lambda s, _: s.scoring_method.value,
            "open_join": lambda s, _: s.open_join,
            "design": lambda s, _: json_text(s.design),
            "created_at": lambda s, _: export_timestamp(s.created_at),
            "started_at": lambda s, _: export_timestamp(s.started_at),
            "finished_at": lambda s, _: export_timestamp(s.finished_at),
        },
    ),
    ExportTable(
        "rounds.csv",
        lambda source: source.session.round_states,
        {
            "round": lambda r, _: r.number,
            "theme": lambda r, _: r.theme,
            "status": lambda r, _: r.status.value,
            "participants": lambda r, source: (
                None if r.participants is None else json_text([source.player_name(int(p)) for p in r.participants])
            ),
            "vote_opened_at": lambda r, _: export_timestamp(r.vote_opened_at),
            "vote_closed_at": lambda r, _: export_timestamp(r.vote_closed_at),
            "revealed_at": lambda r, _: export_timestamp(r.revealed_at),
            "tally": lambda r, _: json_text(r.tally),
        },
    ),
    ExportTable(
        "questions.csv",
        lambda source: source.rows.placed,
        {
            "round": lambda sq, _: sq.round,
            "position": lambda sq, _: sq.position,
            "qid": lambda sq, _: sq.question.qid,
            "type": lambda sq, _: sq.question.type.value,
            "question": lambda sq, _: sq.question.text,
            "choices": lambda sq, _: json_text(list(sq.question.choices)),
            "answer_index": lambda sq, _: sq.question.answer_index,
            "answer": lambda sq, _: sq.question.answer_text,
            "clip_source": lambda sq, _: sq.question.clip_source,
            "clip_start": lambda sq, _: sq.question.clip_start,
            "clip_end": lambda sq, _: sq.question.clip_end,
            "clip_kind": lambda sq, _: sq.question.clip_kind.value if sq.question.clip_kind else None,
            "category": lambda sq, _: sq.question.category,
            **{name: _tag(name) for name in TAG_COLUMNS},
            "shown_at": lambda sq, _: export_timestamp(sq.shown_at),
            "answers_closed_at": lambda sq, _: export_timestamp(sq.answers_closed_at),
            "revealed_at": lambda sq, _: export_timestamp(sq.revealed_at),
            "reveal_order": lambda sq, _: json_text(sq.reveal_order),
        },
    ),
    ExportTable(
        "players.csv",
        lambda source: source.rows.players,
        {
            "player_id": lambda p, _: p.id,
            "player": lambda p, _: p.name,
            "kind": lambda p, _: p.kind.value,
            "age": lambda p, _: p.age,
            "stage": lambda p, _: p.stage,
            "backends": lambda p, _: json_text(p.backends),
            "answer_modes": lambda p, _: json_text(p.answer_modes),
            "details": lambda p, _: json_text(blanked(p.details, names_a_secret)),
        },
    ),
    ExportTable(
        "jurors.csv",
        lambda source: source.rows.jurors,
        {
            "juror_id": lambda j, _: j.id,
            "juror": lambda j, _: j.label,
            "jury": lambda j, _: j.jury.value,
            "model": lambda j, _: j.model,  # an AI juror's (its jury in the reports: ai:<model>)
            "group": lambda j, _: j.juror_group,
            "expert": lambda j, _: j.expert,
            "age_band": lambda j, _: j.age_band,
            "sex": lambda j, _: j.sex,
            "joined_at": lambda j, _: export_timestamp(j.joined_at),
            "removed_at": lambda j, _: export_timestamp(j.removed_at),
            # a displaced juror's task: the rounds given (empty: every round), the attention line, the code shown
            # at the end (to check a crowd platform's submissions against)
            "rounds": lambda j, _: ";".join(map(str, j.rounds)) if j.rounds else None,
            "attention_passed": lambda j, _: j.attention_passed,
            "completion_code": lambda j, _: j.completion_code,
            # the crowd platform's ids on the open link (PROLIFIC_PID, STUDY_ID, SESSION_ID or the link's own
            # names): pair each submission's participant id with its completion code
            "participant_id": lambda j, _: j.participant_id,
            "platform_study_id": lambda j, _: j.platform_study_id,
            "platform_session_id": lambda j, _: j.platform_session_id,
        },
    ),
    ExportTable(
        "aliases.csv",
        lambda source: source.rows.aliases,
        {
            "round": lambda a, _: a.round,
            "alias": lambda a, _: a.alias,
            "player_id": lambda a, _: a.player_id,
            "player": lambda a, source: source.player_name(a.player_id),
        },
    ),
    ExportTable(
        "answers.csv",
        lambda source: source.rows.answers,
        {
            "answer_id": lambda a, _: a.id,
            **_placed_question(_own_question),
            "player_id": lambda a, _: a.player_id,
            "player": lambda a, source: source.player_name(a.player_id),
            "text": lambda a, _: a.text,
            "choice_index": lambda a, _: a.choice_index,
            "submitted_at": lambda a, _: export_timestamp(a.submitted_at),
            "latency_ms": lambda a, _: a.latency_ms,
            "late": lambda a, _: a.late,
            "redacted": lambda a, _: a.redacted,
            "edited_at": lambda a, _: export_timestamp(a.edited_at),
            "provenance": lambda a, _: json_text(blanked(a.provenance, is_credential)),
            "entered_by_host": lambda a, _: bool(a.entered_by_host),
            # right or wrong as the reports count it (blank: an open answer not graded yet)
            "correct": lambda a, source: answer_correct(source.placed(a.session_question_id).question, a),
        },
    ),
    ExportTable(
        "grades.csv",
        lambda source: [a for a in source.rows.answers if a.grade is not None],
        {
            "answer_id": lambda a, _: a.id,
            **_placed_question(_own_question),
            "player": lambda a, source: source.player_name(a.player_id),
            "correct": lambda a, _: a.grade.correct,
            "automatic": lambda a, _: a.grade.automatic,
            "grader": lambda a, _: a.grade.grader,
            "graded_at": lambda a, _: export_timestamp(a.grade.graded_at),
            **_rubric(lambda a: a.grade),
        },
    ),
    ExportTable(
        "grader_marks.csv",
        lambda source: source.records.marks,
        {
            "answer_id": lambda m, _: m.answer_id,
            **_placed_question(_answers_question),
            "player": lambda m, source: source.player_name(source.answer(m.answer_id).player_id),
            "grader": lambda m, _: m.grader,
            "correct": lambda m, _: m.correct,
            "graded_at": lambda m, _: export_timestamp(m.graded_at),
            **_rubric(lambda m: m),
        },
    ),
    ExportTable(
        "judge_suggestions.csv",
        lambda source: source.records.suggestions,
        {
            "answer_id": lambda j, _: j.answer_id,
            **_placed_question(_answers_question),
            "player": lambda j, source: source.player_name(source.answer(j.answer_id).player_id),
            "dimension": lambda j, _: j.dimension,
            "score": lambda j, _: j.score,
            "model": lambda j, _: j.model,
            "endpoint": lambda j, _: j.endpoint,
            "prompt_sha256": lambda j, _: j.prompt_sha256,
            "temperature": lambda j, _: j.temperature,
            "asked_at": lambda j, _: export_timestamp(j.asked_at),
            "reply": lambda j, _: j.reply,
        },
    ),
    # every reply of an AI juror (vtt jury ai): the provenance of its votes, read or not
    ExportTable(
        "ai_juror_replies.csv",
        lambda source: source.records.juror_replies,
        {
            "juror": lambda r, source: source.juror(r.juror_id).label,
            "model": lambda r, _: r.model,
            "round": lambda r, _: r.round,
            "read": lambda r, _: r.read,
            "prompt_sha256": lambda r, _: r.prompt_sha256,
            "temperature": lambda r, _: r.temperature,
            "frames": lambda r, _: r.frames,
            "endpoint": lambda r, _: r.endpoint,
            "asked_at": lambda r, _: export_timestamp(r.asked_at),
            "reply": lambda r, _: r.reply,
        },
    ),
    # every take of a spoken answer (file: in the export's recordings/ folder until deleted_at)
    ExportTable(
        "recordings.csv",
        lambda source: source.records.recordings,
        {
            "recording_id": lambda r, _: r.id,
            **_placed_question(_own_question),
            "player_id": lambda r, _: r.player_id,
            "player": lambda r, source: source.player_name(r.player_id),
            "file": lambda r, _: r.file,
            "mime": lambda r, _: r.mime,
            "bytes": lambda r, _: r.size,
            "duration_ms": lambda r, _: r.duration_ms,
            "ended_at": lambda r, _: export_timestamp(r.ended_at),
            "received_at": lambda r, _: export_timestamp(r.received_at),
            "transcript_suggested": lambda r, _: r.transcript,
            "transcript_confidence": lambda r, _: r.transcript_confidence,
            "transcript_level": lambda r, _: _transcript_level(r),
            "transcribed_by": lambda r, _: r.transcribed_by,
            "deleted_at": lambda r, _: export_timestamp(r.deleted_at),
        },
    ),
    ExportTable(
        "sheet_entries.csv",
        lambda source: source.rows.entries,
        {
            "entry_id": lambda e, _: e.id,
            **_placed_question(_own_question),
            "juror": lambda e, source: source.juror(e.juror_id).label,
            "jury": lambda e, source: source.juror(e.juror_id).jury.value,
            "alias": lambda e, _: e.alias,
            "player": lambda e, source: source.player_name(e.player_id),
            "looks_like_ai": lambda e, _: e.looks_like_ai,
            "human_likeness": lambda e, _: e.human_likeness,
            "note": lambda e, _: e.note,
            "updated_at": lambda e, _: export_timestamp(e.updated_at),
        },
    ),
    ExportTable(
        "votes.csv",
        lambda source: source.rows.votes,
        {
            "vote_id": lambda v, _: v.id,
            "round": lambda v, _: v.round,
            "juror": lambda v, source: source.juror(v.juror_id).label,
            "jury": lambda v, source: source.juror(v.juror_id).jury.value,
            "model": lambda v, source: source.juror(v.juror_id).model,
            "slot": lambda v, _: v.slot,
            "alias": lambda v, _: v.alias,
            "player": lambda v, source: source.player_name(v.player_id),
            "abstained": lambda v, _: v.player_id is None,
            "confidence": lambda v, _: v.confidence,
            "reason": lambda v, _: v.reason,
            "cast_at": lambda v, _: export_timestamp(v.cast_at),
        },
    ),
    ExportTable(
        "identity_reveals.csv",
        lambda source: source.records.reveals,
        {
            "round": lambda r, _: r.round,
            "player_id": lambda r, _: r.player_id,
            "player": lambda r, source: source.player_name(r.player_id),
            "kind": lambda r, source: source.player(r.player_id).kind.value,
            "revealed_at": lambda r, _: export_timestamp(r.revealed_at),
        },
    ),
    ExportTable(
        "events.csv",
        lambda source: source.records.events,
        {
            "event_id": lambda e, _: e.id,
            "at": lambda e, _: export_timestamp(e.at),
            "kind": lambda e, _: e.kind,
            "actor": lambda e, _: e.actor,
            "payload": lambda e, _: json_text(blanked(e.payload, names_a_secret)),
        },
    ),
)
