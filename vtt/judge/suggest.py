"""Asking the judge: which open answers it scores, which calls are still to make, and storing what it says.

* **What is scored**: every answer the graders grade by hand (``vtt.results.grading``) to an *open* question with a
  reference answer, those already marked by graders too (their agreement with the judge is measured on them).
  An open question without a reference answer, or a multiple-choice one without a key, is left out and counted.
* **One call per answer and dimension** (``rubric.DIMENSIONS``: the verdict and MovieCORE's five), at most
  ``concurrency`` at once, each with its own timeout. The verdict is a call of its own, not derived from accuracy.
* **Resumable**: a call already answered with a score by the same model and prompt (its hash) is not made again, so
  a second run sends nothing. A reply without a score is stored (score None, reply kept) and asked again next run;
  a call that failed (HTTP error, timeout) stores nothing. ``max_failures`` failures in a row stop the run: the
  endpoint is down, and hundreds of timeouts would tell nothing more.
* **Never a mark**: suggestions go to ``judge_suggestion`` only; ``grade`` and ``grader_mark`` change only when a
  grader takes a suggestion (``take_suggestion``) or marks the answer themself.
* Runs in the CLI or a worker process (``python -m vtt.workers.judge``), never in the server's event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from flask_babel import gettext as _
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ..model_calls.runs import ModelSettings, RunSummary, Said, ask_model, call_all
from ..models import RUBRIC_DIMENSIONS, Answer, Event, JudgeSuggestion, QuestionType, VttSession, utcnow
from ..results.grading import GradingError, MarkInput, grading_overview, save_mark
from .rubric import DIMENSIONS, VERDICT, Prompt, load_prompts

NO_REFERENCE = "open question without a reference answer"
NOT_OPEN = "multiple-choice question without a key"


class JudgeError(ValueError):
    """Settings or a request the judge cannot work with: ``setting`` says which (``endpoint``, ``model``,
    ``dimensions``...; None: none in particular), ``message`` why, naming no command-line option."""

    def __init__(self, message: str, setting: str | None = None):
        super().__init__(message)
        self.message, self.setting = message, setting


@dataclass(frozen=True)
class JudgeSettings(ModelSettings):
    """Where and how to ask (:class:`vtt.model_calls.runs.ModelSettings`): the judge's options are those."""

    @classmethod
    def refused(cls, message: str, setting: str) -> Exception:
        return JudgeError(message, setting)


@dataclass(frozen=True)
class OpenAnswer:
    answer_id: int
    question: str
    reference: str
    text: str


@dataclass(frozen=True)
class Ask:
    answer: OpenAnswer
    prompt: Prompt


@dataclass
class JudgeRunSummary(RunSummary):
    """What a run did (:class:`vtt.model_calls.runs.RunSummary`: asked, unread, failed, stopped, first_failure,
    problems), and what of it the judge counts."""

    answers: int = 0  # open answers the judge scores
    scored: int = 0  # replies with a score (unread: those without one)
    already: int = 0  # calls skipped: scored before by this model and prompt
    left_out: dict[str, int] = field(default_factory=dict)  # answers not scored, by reason

    @property
    def nothing_scored(self) -> str | None:
        """Why the run scored nothing although it asked: calls failed and no reply had a score (None otherwise)."""
        return self.nothing_done(self.scored, "nothing could be scored")


def open_answers(db: Session, vtt_session: VttSession) -> tuple[list[OpenAnswer], dict[str, int]]:
    """The answers the judge scores, in the grading page's order, and how many were left out by reason."""
    chosen, left_out = [], {}
    for placed in grading_overview(db, vtt_session).questions:
        question = placed.question
        reason = (
            NOT_OPEN
            if question.type is not QuestionType.OPEN
            else NO_REFERENCE
            if not question.reference_answer.strip()
            else None
        )
        for item in placed.answers:
            if reason:
                left_out[reason] = left_out.get(reason, 0) + 1
            else:
                chosen.append(OpenAnswer(item.answer.id, question.text, question.reference_answer, item.text))
    return chosen, left_out


def pending_asks(
    db: Session, answers: list[OpenAnswer], prompts: Iterable[Prompt], model: str
) -> tuple[list[Ask], int]:
    """The calls still to make (those not answered with a score by ``model`` and the same prompt), and how many
    are done already."""
    prompts = list(prompts)
    ids = [answer.answer_id for answer in answers]
    done = set()
    for start in range(0, len(ids), 500):  # IN lists of a bounded length
        done |= set(
            db.execute(
                select(JudgeSuggestion.answer_id, JudgeSuggestion.dimension, JudgeSuggestion.prompt_sha256).where(
                    JudgeSuggestion.answer_id.in_(ids[start : start + 500]),
                    JudgeSuggestion.model == model,
                    JudgeSuggestion.score.is_not(None),
                )
            ).all()
        )
    asks = [
        Ask(answer, prompt)
        for answer in answers
        for prompt in prompts
        if (answer.answer_id, prompt.dimension, prompt.sha256) not in done
    ]
    return asks, len(answers) * len(prompts) - len(asks)


class JudgeSaid(Said):
    """What one call gave (:class:`vtt.model_calls.runs.Said`): a score, or a reply without one (``problem``), or
    a failure (``failed``)."""

    @property
    def score(self) -> int | None:
        return self.value


async def ask_all(settings: JudgeSettings, asks: list[Ask], heard: Callable[[JudgeSaid], bool]) -> None:
    """Every call, ``settings.concurrency`` at a time (:func:`vtt.model_calls.runs.call_all`); ``heard`` is told
    each outcome as it comes and returns False to stop the run (calls under way finish; no new one starts)."""
    import aiohttp

    async with aiohttp.ClientSession() as http:
        await call_all(asks, settings.concurrency, partial(ask_one, http, settings), heard)


async def ask_one(http: Any, settings: JudgeSettings, ask: Ask) -> JudgeSaid:
    body = settings.body(ask.prompt.messages(ask.answer.question, ask.answer.reference, ask.answer.text))
    return await ask_model(http, settings, body, ask, ask.prompt.read, JudgeSaid)


def store(db: Session, settings: JudgeSettings, said: JudgeSaid) -> None:
    """Keep one reply (a score, or a reply without one); a failure keeps nothing. Commits."""
    if said.failed:
        return
    key = (said.ask.answer.answer_id, said.ask.prompt.dimension, settings.model, said.ask.prompt.sha256)
    row = db.scalar(
        select(JudgeSuggestion).where(
            JudgeSuggestion.answer_id == key[0],
            JudgeSuggestion.dimension == key[1],
            JudgeSuggestion.model == key[2],
            JudgeSuggestion.prompt_sha256 == key[3],
        )
    )
    if row is None:
        row = JudgeSuggestion(answer_id=key[0], dimension=key[1], model=key[2], prompt_sha256=key[3])
        db.add(row)
    row.score, row.reply = said.score, said.reply
    row.endpoint, row.temperature, row.asked_at = settings.endpoint, settings.temperature, utcnow()
    try:
        db.commit()
    except IntegrityError:  # another run stored this very call meanwhile: its row stands
        db.rollback()


def suggest(
    db_factory: Callable[[], Session],
    session_id: int,
    settings: JudgeSettings,
    dimensions: Iterable[str] = DIMENSIONS,
    *,
    started: Callable[[int], None] | None = None,
    progress: Callable[[JudgeSaid], None] | None = None,
) -> JudgeRunSummary:
    """Ask the judge for every open answer of the session and dimension not yet scored; what happened."""
    dimensions = list(dimensions)
    unknown = [dimension for dimension in dimensions if dimension not in DIMENSIONS]
    if unknown or not dimensions:
        raise JudgeError(f"{', '.join(unknown) or 'none given'}; choose from {', '.join(DIMENSIONS)}", "dimensions")
    prompts = load_prompts()
    summary = JudgeRunSummary()
    with db_factory() as db:
        vtt_session = db.get(VttSession, session_id)
        answers, summary.left_out = open_answers(db, vtt_session)
        asks, summary.already = pending_asks(db, answers, [prompts[d] for d in dimensions], settings.model)
    summary.answers = len(answers)
    if started is not None:
        started(len(asks))

    def heard(said: JudgeSaid) -> bool:
        go_on = summary.heard(
            said, f"answer {said.ask.answer.answer_id} {said.ask.prompt.dimension}", settings.max_failures
        )
        summary.scored += said.score is not None
        if not said.failed:
            with db_factory() as db:
                store(db, settings, said)
        if progress is not None:
            progress(said)
        return go_on

    if asks:
        asyncio.run(ask_all(settings, asks, heard))
    with db_factory() as db:
        db.add(
            Event(
                session_id=session_id,
                kind="judge.run",
                actor=settings.model,
                payload={
                    "endpoint": settings.endpoint,
                    "temperature": settings.temperature,
                    "prompts": {d: prompts[d].sha256 for d in dimensions},
                    **{k: v for k, v in summary.as_dict().items() if k != "problems"},
                },
            )
        )
        db.commit()
    return summary


# --- what the grading page shows and takes ------------------------------------------------------------------------


@dataclass(frozen=True)
class Suggestion:
    """One model's current suggestion for one answer: its scores by dimension (None: none yet, or unread)."""

    model: str
    scores: dict[str, int | None]
    replies: dict[str, str]

    @property
    def verdict(self) -> bool | None:
        score = self.scores.get(VERDICT)
        return None if score is None else score == 1

    @property
    def doubt(self) -> float:
        """0 (sure) to 1 (unsure): an accuracy near the middle of 0-5, or a verdict the accuracy contradicts
        (MovieCORE's 3 is "partially correct, capturing key elements": 3 and up read as correct)."""
        accuracy = self.scores.get("accuracy")
        if accuracy is None or self.verdict is None:
            return 1.0
        if self.verdict != (accuracy >= 3):
            return 1.0
        return 1.0 - abs(accuracy - 2.5) / 2.5

    @property
    def takeable(self) -> bool:
        """Something to take: a verdict, or a rubric score (the verdict is then the grader's)."""
        return self.verdict is not None or any(self.scores.get(d) is not None for d in RUBRIC_DIMENSIONS)

    def as_mark(self, verdict: bool | None = None) -> MarkInput:
        """The suggestion as a mark; ``verdict`` (the grader's) stands in for a verdict the judge did not give."""
        if not self.takeable:
            raise GradingError("answer_id", _("the judge has given no verdict and no score on this answer yet"))
        correct = self.verdict if self.verdict is not None else verdict
        if correct is None:
            raise GradingError("correct", _("the judge's verdict could not be read: choose correct or incorrect"))
        return MarkInput(correct, {d: self.scores.get(d) for d in RUBRIC_DIMENSIONS})


def suggestions(db: Session, answer_ids: list[int]) -> dict[int, list[Suggestion]]:
    """Per answer, one ``Suggestion`` per model, made with the prompts as they are now (a reply to an older prompt
    is history: the export keeps it)."""
    current = {prompt.sha256 for prompt in load_prompts().values()}
    rows: dict[tuple[int, str], Suggestion] = {}
    for start in range(0, len(answer_ids), 500):
        for row in db.scalars(
            select(JudgeSuggestion)
            .where(JudgeSuggestion.answer_id.in_(answer_ids[start : start + 500]))
            .order_by(JudgeSuggestion.model, JudgeSuggestion.id)
        ):
            if row.prompt_sha256 not in current:
                continue
            suggestion = rows.setdefault((row.answer_id, row.model), Suggestion(row.model, {}, {}))
            suggestion.scores[row.dimension] = row.score
            suggestion.replies[row.dimension] = row.reply
    found: dict[int, list[Suggestion]] = {}
    for (answer_id, _model), suggestion in rows.items():
        found.setdefault(answer_id, []).append(suggestion)
    return found


def take_suggestion(
    db: Session, vtt_session: VttSession, answer: Answer, grader: str, model: str, verdict: bool | None = None
) -> MarkInput:
    """``grader`` takes ``model``'s suggestion for ``answer`` as their own mark (logged as taken from the judge);
    where the judge's verdict could not be read, its scores with ``verdict``, the grader's."""
    suggestion = next((s for s in suggestions(db, [answer.id]).get(answer.id, []) if s.model == model), None)
    if suggestion is None:
        raise GradingError(
            "model", _("%(model)s has suggested nothing for answer %(answer)s", model=model, answer=answer.id)
        )
    mark = suggestion.as_mark(verdict)
    save_mark(db, vtt_session, answer, grader, mark, source=f"judge:{model}")
    return mark
