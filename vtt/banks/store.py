"""Question banks in the database: all-or-nothing imports, and back to records for analysis."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session, selectinload

from analysis.composition import Composition
from analysis.taxonomy import Module, TagSet

from ..db import added_unless_taken
from ..models import ClipKind, Event, Question, QuestionBank, QuestionTag, QuestionType
from ..problems import InputError, Problem
from .readers import ReadResult
from .records import QuestionRecord


def import_bank(
    db: Session, result: ReadResult, bank_name: str, *, description: str = "", actor: str = "cli"
) -> QuestionBank:
    """Add every record of ``result`` to the bank ``bank_name`` (created when new).

    Raises :class:`InputError` (and adds nothing) when a qid is already in the bank.  The caller
    owns the transaction: commit on success, roll back on error.  ``actor``: who imported it, as the
    ``bank.imported`` event records it (``cli`` for ``vtt questions import``, ``host`` for the console's upload).
    """
    bank, created = _bank_named(db, bank_name), False
    if bank is None:
        bank = QuestionBank(
            name=bank_name, description=description, source_format=result.format, source_file=result.path.name
        )
        created = added_unless_taken(db, bank, lambda: _bank_named(db, bank_name) is not None)
        if not created:  # another import made it meanwhile: added to as any bank is
            bank = _bank_named(db, bank_name)
    if not created:
        existing = set(db.scalars(select(Question.qid).where(Question.bank_id == bank.id)))
        clashes = [r.qid for r in result.records if r.qid in existing]
        if clashes:
            raise InputError(
                [Problem(result.path.name, None, "qid", f"{qid!r} is already in bank {bank_name!r}") for qid in clashes]
            )
    _insert_questions(db, bank, result.records)
    log_import(db, bank_name, result, actor)
    return bank


def _bank_named(db: Session, name: str) -> QuestionBank | None:
    return db.scalar(select(QuestionBank).where(QuestionBank.name == name))


def _insert_questions(db: Session, bank: QuestionBank, records: list[QuestionRecord]) -> None:
    """Core executemany inserts: a benchmark-sized bank goes in within seconds, not minutes."""
    db.execute(insert(Question.__table__), [question_row(bank.id, record) for record in records])
    ids = dict(db.execute(select(Question.qid, Question.id).where(Question.bank_id == bank.id)).all())
    tags = [{"question_id": ids[record.qid], **tag} for record in records for tag in tag_rows(record.tags)]
    if tags:
        db.execute(insert(QuestionTag.__table__), tags)


def question_row(bank_id: int, record: QuestionRecord) -> dict:
    return {
        "bank_id": bank_id,
        "qid": record.qid,
        "text": record.text,
        "type": QuestionType(record.type),
        "choices": record.choices,
        "answer_index": record.answer_index,
        "reference_answer": record.reference_answer,
        "clip_source": record.video,
        "clip_start": record.start,
        "clip_end": record.end,
        "clip_kind": ClipKind(record.clip) if record.clip else None,
        "category": record.category,
        "suggested_round": record.round,
        "source": record.source,
    }


def apply_tags(db: Session, bank: QuestionBank, tags: dict[str, tuple[int, TagSet]], file_name: str) -> int:
    """Replace the CogME tags of the bank's questions named in ``tags``; all or nothing.

    Raises :class:`InputError` naming every row whose qid is not in the bank.  Returns how many
    questions were (re)tagged.  The caller owns the transaction.
    """
    questions = {
        q.qid: q
        for q in db.scalars(select(Question).where(Question.bank_id == bank.id).options(selectinload(Question.tags)))
    }
    unknown = [
        Problem(file_name, row, "qid", f"{qid!r} is not in bank {bank.name!r}")
        for qid, (row, _) in tags.items()
        if qid not in questions
    ]
    if unknown:
        raise InputError(unknown)
    for qid, (_, tagset) in tags.items():
        question = questions[qid]
        question.tags.clear()
        db.flush()  # the old rows go before the new ones reuse their keys
        question.tags.extend(QuestionTag(**row) for row in tag_rows(tagset))
    db.add(
        Event(kind="bank.tagged", actor="cli", payload={"bank": bank.name, "file": file_name, "questions": len(tags)})
    )
    db.flush()
    return len(tags)


def tag_rows(tags: TagSet) -> list[dict]:
    """A question's CogME tags as ``question_tag`` rows (without the question's id), in the tag set's order."""
    return [
        {
            "module": module.value,
            "element": element,
            "position": position,
            "is_key": module is Module.TARGET and element == tags.key_target,
        }
        for position, (module, element) in enumerate(tags.elements())
    ]


def question_record(question: Question) -> QuestionRecord:
    return QuestionRecord(
        qid=question.qid,
        text=question.text,
        type=question.type.value,
        choices=list(question.choices),
        answer_index=question.answer_index,
        reference_answer=question.reference_answer,
        video=question.clip_source,
        start=question.clip_start,
        end=question.clip_end,
        clip=question.clip_kind.value if question.clip_kind else None,
        category=question.category,
        round=question.suggested_round,
        tags=TagSet(
            tuple(question.tag_names(Module.TARGET)),
            question.key_target,
            tuple(question.tag_names(Module.CONTENT)),
            question.thinking,
        ),
        source=dict(question.source),
    )


# Question.source key: the clip a question had as imported, kept when `vtt media prepare` points it at a prepared one
ORIGINAL_CLIP = "original_clip"


def original_clip(question: Question) -> tuple[str | None, float | None, float | None]:
    """The question's clip as imported (source, start, end), also after `vtt media prepare` repointed it."""
    kept = question.source.get(ORIGINAL_CLIP)
    if kept:
        return kept["source"], kept["start"], kept["end"]
    return question.clip_source, question.clip_start, question.clip_end


def repoint_clips(db: Session, bank: QuestionBank, prepared: Mapping[str, str], actor: str = "cli") -> int:
    """Point the bank's questions named in ``prepared`` (qid -> a clip's path in the media folder) at those clips,
    which are cut to their span already (so no start or end); the clip each had as imported stays in its source
    under ``original_clip``. Returns how many questions changed; the caller owns the transaction."""
    changed = 0
    for question in db.scalars(select(Question).where(Question.bank_id == bank.id)):
        clip = prepared.get(question.qid)
        if clip is None or (question.clip_source, question.clip_start, question.clip_end) == (clip, None, None):
            continue
        source, start, end = original_clip(question)
        question.source = {**question.source, ORIGINAL_CLIP: {"source": source, "start": start, "end": end}}
        question.clip_source, question.clip_start, question.clip_end = clip, None, None
        changed += 1
    if changed:
        db.add(Event(kind="bank.clips_prepared", actor=actor, payload={"bank": bank.name, "questions": changed}))
    db.flush()
    return changed


def bank_by_name(db: Session, name: str) -> QuestionBank | None:
    return db.scalar(select(QuestionBank).where(QuestionBank.name == name))


def bank_composition(db: Session, bank: QuestionBank) -> Composition:
    """The bank's CogME balance, counted by the database (a 16k-question bank must not block a page)."""
    in_bank = Question.bank_id == bank.id
    tag_counts = db.execute(
        select(QuestionTag.module, QuestionTag.element, func.count())
        .join(Question)
        .where(in_bank)
        .group_by(QuestionTag.module, QuestionTag.element)
    ).all()
    element_counts = pd.Series({(module, element): n for module, element, n in tag_counts}, dtype=int)
    types = {
        kind.value: n
        for kind, n in db.execute(select(Question.type, func.count()).where(in_bank).group_by(Question.type))
    }
    clips = {
        kind.value: n
        for kind, n in db.execute(select(Question.clip_kind, func.count()).where(in_bank).group_by(Question.clip_kind))
        if kind is not None
    }
    untagged = list(db.scalars(select(Question.qid).where(in_bank, ~Question.tags.any()).order_by(Question.id)))
    return Composition.from_counts(element_counts, types, clips, sum(types.values()), untagged)


def bank_records(db: Session, bank: QuestionBank) -> list[QuestionRecord]:
    questions = db.scalars(
        select(Question).where(Question.bank_id == bank.id).options(selectinload(Question.tags)).order_by(Question.id)
    )
    return [question_record(q) for q in questions]


def log_import(db: Session, bank_name: str, result: ReadResult, actor: str) -> None:
    """The event log's line for a bank file imported (from the command line or the console's upload)."""
    db.add(
        Event(
            kind="bank.imported",
            actor=actor,
            payload={
                "bank": bank_name,
                "file": result.path.name,
                "format": result.format,
                "questions": len(result.records),
                "untagged": len(result.untagged),
            },
        )
    )
    db.flush()
