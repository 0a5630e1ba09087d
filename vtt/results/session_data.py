"""One live session's rows as the DataFrames ``analysis`` reads (see ``analysis/frames.py``).

:func:`session_frames` reads a :class:`~vtt.models.VttSession` into :class:`SessionFrames`:

* ``questions`` - the session's questions in (round, position) order, built by
  ``vtt.banks.records_frame`` from the bank rows; ``round`` is the session round the question was
  placed in (not the bank's suggested round).
* ``put`` - ``player, qid, round``: every question put to every player.  A question of a round is
  put to that round's participants (``SessionRound.participants``: player ids, None for everyone);
  a player who has an answer row for a question was put it, whatever the list says.
* ``answers`` - ``player, qid, answer, correct, kind`` (+ ``round``): one row per question put to
  each player who answered anything in the session (analysis' rule: a player with no answer at all
  took no part and has no profile).  A multiple-choice answer's text is the chosen option's text
  and it is graded against the key (``choice_index == answer_index``); an open answer takes its
  Grade row's ``correct``.  No answer row, an empty open answer without a grade, and a late answer
  (SPEC: late = no answer) are **no answer**: ``answer`` "" and wrong.  An open answer with text
  and without a grade is **not** in this frame: it is listed in ``ungraded``.
* ``ungraded`` - ``player, qid, round, answer``: open answers not graded yet, counted apart.
* ``players`` - ``name, kind``: the roster, in id order (votes and exposure need every player).
* ``votes`` - ``round, juror, vote, slot, confidence`` and the juror facets present (``group``
  from ``Juror.juror_group``, ``expert`` as "expert"/"non-expert", ``age_band``, ``sex``); ``vote``
  is the named player's name, None for an abstention.
* ``sheet`` - ``juror, qid, player, looks_like_ai`` (+ ``round``, ``human_likeness``): the judgment
  sheets' lines.

``analysis.cogme.profiles`` takes the questions frame as the set put to every player it profiles.
When players were put different questions (round participants) or have ungraded answers (left
out of their accuracy), :func:`session_profiles` profiles each group of players sharing one set of
questions on that set and joins the results.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC

import pandas as pd
from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from analysis.cogme import Profiles, profiles
from analysis.frames import ANSWER_COLUMNS, VOTE_COLUMNS

from ..banks import records_frame
from ..banks.store import question_record
from ..models import (
    RUBRIC_DIMENSIONS,
    Answer,
    Event,
    GraderMark,
    IdentityReveal,
    JudgeSuggestion,
    Juror,
    Player,
    Question,
    QuestionType,
    Recording,
    RoundAlias,
    SessionQuestion,
    SheetEntry,
    Vote,
    VttSession,
)

FACET_COLUMNS = ("group", "expert", "age_band", "sex")  # analysis.frames.JUROR_FACETS, from Juror columns


@dataclass(frozen=True)
class SessionFrames:
    """The frames of one session (columns in the module docstring)."""

    questions: pd.DataFrame
    put: pd.DataFrame
    answers: pd.DataFrame
    ungraded: pd.DataFrame
    players: pd.DataFrame
    votes: pd.DataFrame
    sheet: pd.DataFrame


def session_by_code(db: Session, code: str) -> VttSession | None:
    """The session with this join code (case and surrounding spaces ignored), or None."""
    return db.scalar(select(VttSession).where(VttSession.join_code == code.strip().upper()))


@dataclass(frozen=True)
class _SessionRows:
    """The rows of one session that both the frames and the export read, each table queried once."""

    placed: list[SessionQuestion]  # in (round, position) order, with their questions and tags
    players: list[Player]  # in id order
    jurors: list[Juror]  # in id order
    answers: list[Answer]  # in id order, with their grades
    entries: list[SheetEntry]  # in id order
    votes: list[Vote]  # in (round, juror, slot) order


def _session_rows(db: Session, session_id: int) -> _SessionRows:
    return _SessionRows(
        placed=list(
            db.scalars(
                select(SessionQuestion)
                .where(SessionQuestion.session_id == session_id)
                .options(selectinload(SessionQuestion.question).selectinload(Question.tags))
                .order_by(SessionQuestion.round, SessionQuestion.position)
            )
        ),
        players=list(db.scalars(select(Player).where(Player.session_id == session_id).order_by(Player.id))),
        jurors=list(db.scalars(select(Juror).where(Juror.session_id == session_id).order_by(Juror.id))),
        answers=list(
            db.scalars(
                select(Answer)
                .where(Answer.session_id == session_id)
                .options(selectinload(Answer.grade))
                .order_by(Answer.id)
            )
        ),
        entries=list(db.scalars(select(SheetEntry).where(SheetEntry.session_id == session_id).order_by(SheetEntry.id))),
        votes=list(
            db.scalars(select(Vote).where(Vote.session_id == session_id).order_by(Vote.round, Vote.juror_id, Vote.slot))
        ),
    )


def session_frames(db: Session, vtt_session: VttSession) -> SessionFrames:
    return _frames(vtt_session, _session_rows(db, vtt_session.id))


def _frames(vtt_session: VttSession, rows: _SessionRows) -> SessionFrames:
    placed, players = rows.placed, rows.players
    questions = records_frame([replace(question_record(sq.question), round=sq.round) for sq in placed])
    jurors = {j.id: j for j in rows.jurors}
    names = {p.id: p.name for p in players}
    by_question = {sq.id: sq for sq in placed}
    put = _put(vtt_session, placed, players, rows.answers)
    answers, ungraded = _answers(put, players, by_question, rows.answers)
    return SessionFrames(
        questions=questions,
        put=put,
        answers=answers,
        ungraded=ungraded,
        players=pd.DataFrame(
            {"name": [p.name for p in players], "kind": [p.kind.value for p in players]}, columns=["name", "kind"]
        ),
        votes=_votes(rows.votes, jurors, names),
        sheet=_sheet(rows.entries, jurors, names, by_question),
    )


def _put(
    vtt_session: VttSession, placed: list[SessionQuestion], players: list[Player], answer_rows: list[Answer]
) -> pd.DataFrame:
    """``player_id, player, qid, round``: the questions put to each player, in players' then question order."""
    participants = {
        r.number: (None if r.participants is None else {int(p) for p in r.participants})
        for r in vtt_session.round_states
    }
    answered = {(a.player_id, a.session_question_id) for a in answer_rows}
    rows = [
        {"player_id": p.id, "player": p.name, "qid": sq.question.qid, "round": sq.round}
        for p in players
        for sq in placed
        if participants.get(sq.round) is None or p.id in participants[sq.round] or (p.id, sq.id) in answered
    ]
    return pd.DataFrame(rows, columns=["player_id", "player", "qid", "round"])


def _answers(
    put: pd.DataFrame, players: list[Player], by_question: dict[int, SessionQuestion], answer_rows: list[Answer]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    kinds = {p.id: p.kind.value for p in players}
    given = {
        (a.player_id, by_question[a.session_question_id].question.qid): a
        for a in answer_rows
        if a.session_question_id in by_question
    }
    took_part = {a.player_id for a in answer_rows}
    rows, ungraded = [], []
    for item in put.itertuples(index=False):
        if item.player_id not in took_part:
            continue
        row = {
            "player": item.player,
            "qid": item.qid,
            "answer": "",
            "correct": False,
            "kind": kinds[item.player_id],
            "round": item.round,
        }
        answer = given.get((item.player_id, item.qid))
        if answer is not None and not answer.late:
            question = by_question[answer.session_question_id].question
            correct = answer_correct(question, answer)
            if correct is None:
                ungraded.append(
                    {
                        "player": item.player,
                        "qid": item.qid,
                        "round": item.round,
                        "answer": player_answer_text(question, answer),
                    }
                )
                continue
            row["answer"], row["correct"] = player_answer_text(question, answer), correct
        rows.append(row)
    answers = pd.DataFrame(rows, columns=[*ANSWER_COLUMNS, "round"]).astype({"correct": bool})
    return answers, pd.DataFrame(ungraded, columns=["player", "qid", "round", "answer"])


def player_answer_text(question: Question, answer: Answer) -> str:
    """What the player answered: the chosen option's text for a multiple-choice question, else the text given."""
    if (
        question.type is QuestionType.MCQ
        and answer.choice_index is not None
        and answer.choice_index < len(question.choices)
    ):
        return str(question.choices[answer.choice_index])
    return answer.text


def answer_correct(question: Question, answer: Answer) -> bool | None:
    """Whether an answer counts as right: a multiple-choice answer against the key (graded automatically, as SPEC
    says), else its final mark (an open answer, or one to a question whose key is withheld); a late or empty
    ungraded answer is wrong (no answer); None: an open answer with text that no one has graded yet."""
    if answer.late:
        return False
    if question.type is QuestionType.MCQ and question.answer_index is not None:
        return answer.choice_index is not None and answer.choice_index == question.answer_index
    if answer.grade is not None:
        return bool(answer.grade.correct)
    return None if player_answer_text(question, answer).strip() else False


def _votes(votes: list[Vote], jurors: dict[int, Juror], names: dict[int, str]) -> pd.DataFrame:
    rows = []
    for vote in votes:
        juror = jurors[vote.juror_id]
        rows.append(
            {
                "round": vote.round,
                "juror": juror.label,
                "vote": names[vote.player_id] if vote.player_id is not None else None,
                "slot": vote.slot,
                "confidence": float(vote.confidence) if vote.confidence is not None else float("nan"),
                "group": juror.juror_group,
                "expert": _expert(juror.expert),
                "age_band": juror.age_band,
                "sex": juror.sex,
            }
        )
    # object columns keep None (pandas 3 would read a column of names as str, None as NaN)
    columns = [*VOTE_COLUMNS, *FACET_COLUMNS]
    frame = pd.DataFrame({column: pd.Series([row[column] for row in rows], dtype=object) for column in columns})
    frame = frame.astype({"round": int, "slot": int, "confidence": float})
    # A facet no voting juror carries is left out (the reports would show an empty block).
    return frame.drop(columns=[facet for facet in FACET_COLUMNS if frame[facet].isna().all()])


def _expert(value: bool | None) -> str | None:
    return None if value is None else ("expert" if value else "non-expert")


def _sheet(
    entries: list[SheetEntry], jurors: dict[int, Juror], names: dict[int, str], by_question: dict[int, SessionQuestion]
) -> pd.DataFrame:
    rows = [
        {
            "juror": jurors[e.juror_id].label,
            "qid": by_question[e.session_question_id].question.qid,
            "player": names[e.player_id],
            "looks_like_ai": bool(e.looks_like_ai),
            "round": by_question[e.session_question_id].round,
            "human_likeness": e.human_likeness,
        }
        for e in entries
    ]
    return pd.DataFrame(rows, columns=["juror", "qid", "player", "looks_like_ai", "round", "human_likeness"])


def session_profiles(frames: SessionFrames, method: str) -> Profiles:
    """CogME profiles of the players in ``frames.answers``, each on the questions put to them.

    A player's questions are those put to the player less the open answers not graded yet (left
    out of accuracy).  Players sharing one set of questions are profiled together by
    ``analysis.cogme.profiles``; with a single set (everyone put every question, nothing
    ungraded) this is exactly ``profiles(frames.questions, frames.answers, method)``.  A player
    with no graded question left has no profile.
    """
    answers = frames.answers
    order = list(dict.fromkeys(answers["player"]))
    if not order:
        return profiles(frames.questions, answers, method)
    left_out = set(zip(frames.ungraded["player"], frames.ungraded["qid"]))
    put = frames.put[frames.put["player"].isin(order)]
    question_sets: dict[tuple[str, ...], list[str]] = {}
    for player in order:
        qids = set(put.loc[put["player"] == player, "qid"])
        own = tuple(q for q in frames.questions["qid"] if q in qids and (player, q) not in left_out)
        if own:
            question_sets.setdefault(own, []).append(player)
    parts = [
        profiles(
            frames.questions[frames.questions["qid"].isin(qids)],
            answers[answers["player"].isin(group) & answers["qid"].isin(qids)],
            method,
        )
        for qids, group in question_sets.items()
    ]
    if len(parts) == 1:
        return parts[0]
    rank = {player: position for position, player in enumerate(order)}

    def in_order(frame: pd.DataFrame) -> pd.DataFrame:
        return frame.sort_values("player", key=lambda names: names.map(rank), kind="stable").reset_index(drop=True)

    return Profiles(
        method,
        in_order(pd.concat([p.elements for p in parts], ignore_index=True)),
        in_order(pd.concat([p.players for p in parts], ignore_index=True)),
    )


# --- export: every table of a session -----------------------------------------------------------

SECRET_KEYS = ("token", "password", "secret")  # payload keys holding any of these are blanked in events.csv
# an answer's provenance keys blanked in answers.csv: exact names (a model's "max_tokens" is research data)
CREDENTIAL_KEYS = frozenset({"api_key", "apikey", "authorization", "password", "secret", "token", "access_token"})
EXPORT_FILES = (
    "session.csv",
    "rounds.csv",
    "questions.csv",
    "players.csv",
    "jurors.csv",
    "aliases.csv",
    "answers.csv",
    "grades.csv",
    "grader_marks.csv",
    "judge_suggestions.csv",
    "recordings.csv",
    "sheet_entries.csv",
    "votes.csv",
    "identity_reveals.csv",
    "events.csv",
)


def iso(moment) -> str | None:
    """A timestamp as ISO 8601 UTC (``2026-11-23T09:04:14.123456Z``); None stays None."""
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _json(value) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _blanked(value, secret: Callable[[str], bool]):
    """``value`` with every mapping entry, at any depth, whose lower-cased key is ``secret`` blanked."""
    if isinstance(value, dict):
        return {key: "[removed]" if secret(str(key).lower()) else _blanked(item, secret) for key, item in value.items()}
    if isinstance(value, list):
        return [_blanked(item, secret) for item in value]
    return value


def _names_a_secret(key: str) -> bool:
    """A key that holds token, password or secret anywhere in its name."""
    return any(word in key for word in SECRET_KEYS)


def _is_credential(key: str) -> bool:
    """A key named exactly like a credential (api_key, authorization...)."""
    return key in CREDENTIAL_KEYS


def export_tables(db: Session, vtt_session: VttSession) -> dict[str, pd.DataFrame]:
    """``{file name: frame}`` for every table of the session, and ``<CODE>_wide.csv``.

    Every frame starts with ``session`` (the join code) and ``design_hash``; players' and jurors'
    tokens (their logins) and the client keys (replay ids) are left out; event payload entries
    whose key names a token, password or secret are blanked.  Timestamps are ISO 8601 UTC.
    """
    return frames_and_export(db, vtt_session)[1]


def frames_and_export(db: Session, vtt_session: VttSession) -> tuple[SessionFrames, dict[str, pd.DataFrame]]:
    """:func:`session_frames` and :func:`export_tables` from one reading of the session's rows (a study needs
    both of every session: reading each twice was most of its report's time)."""
    session_id = vtt_session.id
    session_rows = _session_rows(db, session_id)
    placed, players, jurors = session_rows.placed, session_rows.players, session_rows.jurors
    answers, entries, votes = session_rows.answers, session_rows.entries, session_rows.votes
    by_question = {sq.id: sq for sq in placed}
    player_by_id = {p.id: p for p in players}
    juror_by_id = {j.id: j for j in jurors}
    aliases = list(
        db.scalars(
            select(RoundAlias).where(RoundAlias.session_id == session_id).order_by(RoundAlias.round, RoundAlias.alias)
        )
    )
    reveals = list(
        db.scalars(
            select(IdentityReveal)
            .where(IdentityReveal.session_id == session_id)
            .order_by(IdentityReveal.round, IdentityReveal.id)
        )
    )
    events = list(db.scalars(select(Event).where(Event.session_id == session_id).order_by(Event.id)))
    takes = list(db.scalars(select(Recording).where(Recording.session_id == session_id).order_by(Recording.id)))
    answer_by_id = {a.id: a for a in answers}
    marks, suggestions = (
        list(
            db.scalars(
                select(table)
                .join(Answer, Answer.id == table.answer_id)
                .where(Answer.session_id == session_id)
                .order_by(table.answer_id, table.id)
            )
        )
        for table in (GraderMark, JudgeSuggestion)
    )

    def place(sq_id: int) -> dict:
        sq = by_question[sq_id]
        return {"round": sq.round, "position": sq.position, "qid": sq.question.qid}

    def name(player_id: int | None) -> str | None:
        return None if player_id is None else player_by_id[player_id].name

    s = vtt_session
    tables = {
        "session.csv": [
            {
                "id": s.id,
                "name": s.name,
                "join_code": s.join_code,
                "bank": s.bank.name if s.bank else None,
                "status": s.status.value,
                "phase": s.phase.value,
                "rounds": s.rounds,
                "questions_per_round": s.questions_per_round,
                "seed": s.seed,
                "answer_seconds": s.answer_seconds,
                "vote_seconds": s.vote_seconds,
                "reveal_policy": s.reveal_policy.value,
                "pass_rule": s.pass_rule.value,
                "pass_alpha": s.pass_alpha,
                "pass_threshold_pct": s.pass_threshold_pct,
                "ai_votes_per_juror": s.ai_votes_per_juror,
                "scoring_method": s.scoring_method.value,
                "open_join": s.open_join,
                "design": _json(s.design),
                "created_at": iso(s.created_at),
                "started_at": iso(s.started_at),
                "finished_at": iso(s.finished_at),
            }
        ],
        "rounds.csv": [
            {
                "round": r.number,
                "theme": r.theme,
                "status": r.status.value,
                "participants": None if r.participants is None else _json([name(int(p)) for p in r.participants]),
                "vote_opened_at": iso(r.vote_opened_at),
                "vote_closed_at": iso(r.vote_closed_at),
                "revealed_at": iso(r.revealed_at),
                "tally": _json(r.tally),
            }
            for r in s.round_states
        ],
        "questions.csv": [
            {
                "round": sq.round,
                "position": sq.position,
                "qid": sq.question.qid,
                "type": sq.question.type.value,
                "question": sq.question.text,
                "choices": _json(list(sq.question.choices)),
                "answer_index": sq.question.answer_index,
                "answer": sq.question.answer_text,
                "clip_source": sq.question.clip_source,
                "clip_start": sq.question.clip_start,
                "clip_end": sq.question.clip_end,
                "clip_kind": sq.question.clip_kind.value if sq.question.clip_kind else None,
                "category": sq.question.category,
                **question_record(sq.question).tags.as_text(),
                "shown_at": iso(sq.shown_at),
                "answers_closed_at": iso(sq.answers_closed_at),
                "revealed_at": iso(sq.revealed_at),
                "reveal_order": _json(sq.reveal_order),
            }
            for sq in placed
        ],
        "players.csv": [
            {
                "player_id": p.id,
                "player": p.name,
                "kind": p.kind.value,
                "age": p.age,
                "stage": p.stage,
                "backends": _json(p.backends),
                "answer_modes": _json(p.answer_modes),
                "details": _json(_blanked(p.details, _names_a_secret)),
            }
            for p in players
        ],
        "jurors.csv": [
            {
                "juror_id": j.id,
                "juror": j.label,
                "group": j.juror_group,
                "expert": j.expert,
                "age_band": j.age_band,
                "sex": j.sex,
                "joined_at": iso(j.joined_at),
                "removed_at": iso(j.removed_at),
            }
            for j in jurors
        ],
        "aliases.csv": [
            {"round": a.round, "alias": a.alias, "player_id": a.player_id, "player": name(a.player_id)} for a in aliases
        ],
        "answers.csv": [
            {
                "answer_id": a.id,
                **place(a.session_question_id),
                "player_id": a.player_id,
                "player": name(a.player_id),
                "text": a.text,
                "choice_index": a.choice_index,
                "submitted_at": iso(a.submitted_at),
                "latency_ms": a.latency_ms,
                "late": a.late,
                "redacted": a.redacted,
                "edited_at": iso(a.edited_at),
                "provenance": _json(_blanked(a.provenance, _is_credential)),
                "entered_by_host": bool(a.entered_by_host),
                # right or wrong as the reports count it (blank: an open answer not graded yet)
                "correct": answer_correct(by_question[a.session_question_id].question, a),
            }
            for a in answers
        ],
        "grades.csv": [
            {
                "answer_id": a.id,
                **place(a.session_question_id),
                "player": name(a.player_id),
                "correct": a.grade.correct,
                "automatic": a.grade.automatic,
                "grader": a.grade.grader,
                "graded_at": iso(a.grade.graded_at),
                **{dimension: getattr(a.grade, dimension) for dimension in RUBRIC_DIMENSIONS},
            }
            for a in answers
            if a.grade is not None
        ],
        "grader_marks.csv": [
            {
                "answer_id": m.answer_id,
                **place(answer_by_id[m.answer_id].session_question_id),
                "player": name(answer_by_id[m.answer_id].player_id),
                "grader": m.grader,
                "correct": m.correct,
                "graded_at": iso(m.graded_at),
                **{dimension: getattr(m, dimension) for dimension in RUBRIC_DIMENSIONS},
            }
            for m in marks
        ],
        "judge_suggestions.csv": [
            {
                "answer_id": j.answer_id,
                **place(answer_by_id[j.answer_id].session_question_id),
                "player": name(answer_by_id[j.answer_id].player_id),
                "dimension": j.dimension,
                "score": j.score,
                "model": j.model,
                "endpoint": j.endpoint,
                "prompt_sha256": j.prompt_sha256,
                "temperature": j.temperature,
                "asked_at": iso(j.asked_at),
                "reply": j.reply,
            }
            for j in suggestions
        ],
        # every take of a spoken answer (file: in the export's recordings/ folder until deleted_at)
        "recordings.csv": [
            {
                "recording_id": r.id,
                **place(r.session_question_id),
                "player_id": r.player_id,
                "player": name(r.player_id),
                "file": r.file,
                "mime": r.mime,
                "bytes": r.size,
                "duration_ms": r.duration_ms,
                "ended_at": iso(r.ended_at),
                "received_at": iso(r.received_at),
                "transcript_suggested": r.transcript,
                "transcribed_by": r.transcribed_by,
                "deleted_at": iso(r.deleted_at),
            }
            for r in takes
        ],
        "sheet_entries.csv": [
            {
                "entry_id": e.id,
                **place(e.session_question_id),
                "juror": juror_by_id[e.juror_id].label,
                "alias": e.alias,
                "player": name(e.player_id),
                "looks_like_ai": e.looks_like_ai,
                "human_likeness": e.human_likeness,
                "note": e.note,
                "updated_at": iso(e.updated_at),
            }
            for e in entries
        ],
        "votes.csv": [
            {
                "vote_id": v.id,
                "round": v.round,
                "juror": juror_by_id[v.juror_id].label,
                "slot": v.slot,
                "alias": v.alias,
                "player": name(v.player_id),
                "abstained": v.player_id is None,
                "confidence": v.confidence,
                "reason": v.reason,
                "cast_at": iso(v.cast_at),
            }
            for v in votes
        ],
        "identity_reveals.csv": [
            {
                "round": r.round,
                "player_id": r.player_id,
                "player": name(r.player_id),
                "kind": player_by_id[r.player_id].kind.value,
                "revealed_at": iso(r.revealed_at),
            }
            for r in reveals
        ],
        "events.csv": [
            {
                "event_id": e.id,
                "at": iso(e.at),
                "kind": e.kind,
                "actor": e.actor,
                "payload": _json(_blanked(e.payload, _names_a_secret)),
            }
            for e in events
        ],
    }
    columns = {  # the header of a table without rows
        "grades.csv": [
            "answer_id",
            "round",
            "position",
            "qid",
            "player",
            "correct",
            "automatic",
            "grader",
            "graded_at",
            *RUBRIC_DIMENSIONS,
        ],
        "grader_marks.csv": [
            "answer_id",
            "round",
            "position",
            "qid",
            "player",
            "grader",
            "correct",
            "graded_at",
            *RUBRIC_DIMENSIONS,
        ],
        "judge_suggestions.csv": [
            "answer_id",
            "round",
            "position",
            "qid",
            "player",
            "dimension",
            "score",
            "model",
            "endpoint",
            "prompt_sha256",
            "temperature",
            "asked_at",
            "reply",
        ],
        "sheet_entries.csv": [
            "entry_id",
            "round",
            "position",
            "qid",
            "juror",
            "alias",
            "player",
            "looks_like_ai",
            "human_likeness",
            "note",
            "updated_at",
        ],
        "votes.csv": [
            "vote_id",
            "round",
            "juror",
            "slot",
            "alias",
            "player",
            "abstained",
            "confidence",
            "reason",
            "cast_at",
        ],
        "identity_reveals.csv": ["round", "player_id", "player", "kind", "revealed_at"],
        "events.csv": ["event_id", "at", "kind", "actor", "payload"],
        "aliases.csv": ["round", "alias", "player_id", "player"],
        "answers.csv": [
            "answer_id",
            "round",
            "position",
            "qid",
            "player_id",
            "player",
            "text",
            "choice_index",
            "submitted_at",
            "latency_ms",
            "late",
            "redacted",
            "edited_at",
            "provenance",
            "entered_by_host",
            "correct",
        ],
        "jurors.csv": ["juror_id", "juror", "group", "expert", "age_band", "sex", "joined_at", "removed_at"],
        "recordings.csv": [
            "recording_id",
            "round",
            "position",
            "qid",
            "player_id",
            "player",
            "file",
            "mime",
            "bytes",
            "duration_ms",
            "ended_at",
            "received_at",
            "transcript_suggested",
            "transcribed_by",
            "deleted_at",
        ],
    }
    exported = {
        file: _exact(pd.DataFrame(rows, columns=columns.get(file) if not rows else None, dtype=object))
        for file, rows in tables.items()
    }
    frames = _frames(s, session_rows)
    exported[f"{s.join_code}_wide.csv"] = _wide(s, placed, players, jurors, aliases, answers, votes, frames)
    stamp = {"session": s.join_code, "design_hash": s.design_hash}
    return frames, {file: _stamped(frame, stamp) for file, frame in exported.items()}


def _exact(frame: pd.DataFrame) -> pd.DataFrame:
    """An object frame whose whole-number columns become Int64: 5 stays "5" next to blanks, not "5.0"."""
    for column in frame.columns:
        values = frame[column].dropna()
        if len(values) and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            frame[column] = frame[column].astype("Int64")
    return frame


def _stamped(frame: pd.DataFrame, stamp: dict) -> pd.DataFrame:
    front = pd.DataFrame(
        {key: [value] * len(frame) for key, value in stamp.items()}, index=frame.index, columns=list(stamp)
    )
    return pd.concat([front, frame], axis=1)


def _wide(
    s: VttSession,
    placed: list[SessionQuestion],
    players: list[Player],
    jurors: list[Juror],
    aliases: list[RoundAlias],
    answers: list[Answer],
    votes: list[Vote],
    frames: SessionFrames,
) -> pd.DataFrame:
    """One row per participant (players, then jurors), oTree style: their fields, then round by round."""
    alias_of = {(a.round, a.player_id): a.alias for a in aliases}
    given = {(a.player_id, a.session_question_id): a for a in answers}
    graded = {(row.player, row.qid): row.correct for row in frames.answers.itertuples(index=False)}
    put = set(zip(frames.put["player"], frames.put["qid"]))
    by_juror_round: dict[tuple[int, int], dict[int, Vote]] = {}
    for vote in votes:
        by_juror_round.setdefault((vote.juror_id, vote.round), {})[vote.slot] = vote
    slots = max([s.ai_votes_per_juror, *(v.slot for v in votes)])
    names = {p.id: p.name for p in players}
    rounds = [r.number for r in s.round_states]
    questions_of = {n: [sq for sq in placed if sq.round == n] for n in rounds}

    def round_columns(n: int) -> list[str]:
        columns = [f"r{n}_alias"]
        for sq in questions_of[n]:
            columns += [f"r{n}_{sq.question.qid}", f"r{n}_{sq.question.qid}_correct"]
        for slot in range(1, slots + 1):
            columns += [f"r{n}_vote{slot}_alias", f"r{n}_vote{slot}_player", f"r{n}_vote{slot}_cast_at"]
        return columns + [f"r{n}_confidence", f"r{n}_reason"]

    fields = [
        "role",
        "participant_id",
        "label",
        "kind",
        "age",
        "stage",
        "group",
        "expert",
        "age_band",
        "sex",
        "joined_at",
    ]
    rows = []
    for p in players:
        row = {
            "role": "player",
            "participant_id": p.id,
            "label": p.name,
            "kind": p.kind.value,
            "age": p.age,
            "stage": p.stage,
        }
        for n in rounds:
            row[f"r{n}_alias"] = alias_of.get((n, p.id))
            for sq in questions_of[n]:
                qid = sq.question.qid
                answer = given.get((p.id, sq.id))
                if answer is not None:
                    row[f"r{n}_{qid}"] = player_answer_text(sq.question, answer)
                if (p.name, qid) in put:
                    row[f"r{n}_{qid}_correct"] = graded.get((p.name, qid))  # blank: ungraded, or no part taken
        rows.append(row)
    for j in jurors:
        row = {
            "role": "juror",
            "participant_id": j.id,
            "label": j.label,
            "group": j.juror_group,
            "expert": j.expert,
            "age_band": j.age_band,
            "sex": j.sex,
            "joined_at": iso(j.joined_at),
        }
        for n in rounds:
            cast = by_juror_round.get((j.id, n), {})
            for slot, vote in cast.items():
                row[f"r{n}_vote{slot}_alias"] = vote.alias
                row[f"r{n}_vote{slot}_player"] = names.get(vote.player_id) if vote.player_id is not None else None
                row[f"r{n}_vote{slot}_cast_at"] = iso(vote.cast_at)
            if cast:
                first = cast[min(cast)]
                row[f"r{n}_confidence"] = next(
                    (v.confidence for _, v in sorted(cast.items()) if v.confidence is not None), None
                )
                row[f"r{n}_reason"] = first.reason
        rows.append(row)
    return _exact(pd.DataFrame(rows, columns=fields + [c for n in rounds for c in round_columns(n)], dtype=object))
