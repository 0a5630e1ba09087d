"""The clips of a bank or a session, checked and put in words: for `vtt media check`, `vtt session create`, the
setup page and the host console (one reading of the verdicts for all of them)."""

from __future__ import annotations

from collections import Counter

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..models import Question, SessionQuestion
from ..problems import Problem, summarize
from .check import ClipRef, ClipVerdict

VERDICTS = ("ok", "warning", "problem", "url", "none")


def bank_refs(db: Session, bank_id: int) -> list[ClipRef]:
    questions = db.scalars(select(Question).where(Question.bank_id == bank_id).order_by(Question.id))
    return [ClipRef(q.qid, q.clip_source, q.clip_start, q.clip_end) for q in questions]


def session_refs(db: Session, session_id: int) -> list[tuple[SessionQuestion, ClipRef]]:
    """Every placed question of a session with its clip, in the order they are played (read here, checked apart:
    the web checks in a native thread, and a database connection stays with its own thread)."""
    placed = db.execute(
        select(SessionQuestion, Question)
        .join(Question)
        .where(SessionQuestion.session_id == session_id)
        .order_by(SessionQuestion.round, SessionQuestion.position)
    ).all()
    return [(where, ClipRef(q.qid, q.clip_source, q.clip_start, q.clip_end)) for where, q in placed]


def counts(verdicts: list[ClipVerdict]) -> dict[str, int]:
    found = Counter(v.verdict for v in verdicts)
    return {name: found.get(name, 0) for name in VERDICTS}


def summary_line(verdicts: list[ClipVerdict]) -> str:
    n = counts(verdicts)
    return (
        f"{len(verdicts)} questions: {n['ok']} clips ready, {n['warning']} with a warning, {n['problem']} with a "
        f"problem, {n['url']} online (not checked), {n['none']} without a clip"
    )


def as_problems(label: str, verdicts: list[ClipVerdict]) -> tuple[list[Problem], list[Problem]]:
    """(problems, warnings) located by question (qid) and clip, for grouping as the importers group theirs."""
    problems, warnings = [], []
    for verdict in verdicts:
        for text in verdict.problems:
            problems.append(Problem(label, verdict.qid, "clip", text, unit="question", value=verdict.source))
        for text in verdict.warnings:
            if verdict.verdict != "url":  # online clips are counted in the summary line, not warned about one by one
                warnings.append(Problem(label, verdict.qid, "clip", text, unit="question", value=verdict.source))
    return problems, warnings


def preflight_lines(label: str, verdicts: list[ClipVerdict]) -> list[str]:
    """What a host is told when a session is created: the count, then each kind of problem and warning once."""
    problems, warnings = as_problems(label, verdicts)
    if not problems and not warnings:
        return []
    hint = "`vtt media check` lists them all"
    return [summary_line(verdicts) + ":", *summarize(problems, hint), *summarize(warnings, hint)]
