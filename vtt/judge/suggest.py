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
from typing import Any

from flask_babel import gettext as _
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ..agents.backends import (
    BackendError,
    SpecError,
    UnreadableReply,
    chat_completion,
    chat_target,
    public_url,
)
from ..models import RUBRIC_DIMENSIONS, Answer, Event, JudgeSuggestion, QuestionType, VttSession, utcnow
from ..results.grading import GradingError, MarkInput, grading_overview, save_mark
from .rubric import DIMENSIONS, VERDICT, Prompt, UnreadReply, load_prompts

MAX_REPLY = 4000  # characters of a reply stored
MAX_BODY = 1 << 20  # bytes of a reply's HTTP body read: a longer one is unread
NO_REFERENCE = "open question without a reference answer"
NOT_OPEN = "multiple-choice question without a key"


class JudgeError(ValueError):
    """Settings or a request the judge cannot work with; the message names the option."""


@dataclass(frozen=True)
class JudgeSettings:
    """Where and how to ask: an OpenAI-compatible chat-completions endpoint and the model it serves."""

    url: str  # the endpoint, /chat/completions added when missing
    model: str
    temperature: float | None = 0.0
    api_key: str | None = None
    timeout: float = 60.0
    concurrency: int = 4
    max_tokens: int | None = None
    max_failures: int = 5

    @classmethod
    def from_spec(cls, spec: str, model: str | None, **options: Any) -> JudgeSettings:
        """``http:URL`` (the agents' spelling) or a bare URL."""
        try:
            endpoint, model = chat_target(spec, model)
        except SpecError as error:
            raise JudgeError(str(error)) from None
        settings = cls(endpoint, model, **options)
        if settings.concurrency < 1 or settings.timeout <= 0:
            raise JudgeError("--concurrency is at least 1 and --timeout more than 0")
        return settings

    @property
    def endpoint(self) -> str:
        return public_url(self.url)


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
class RunSummary:
    answers: int = 0  # open answers the judge scores
    asked: int = 0  # calls made this run
    scored: int = 0
    unread: int = 0  # replies without a score (stored; asked again next run)
    failed: int = 0  # calls that failed (nothing stored)
    already: int = 0  # calls skipped: scored before by this model and prompt
    left_out: dict[str, int] = field(default_factory=dict)  # answers not scored, by reason
    stopped: str | None = None  # why the run stopped early
    first_failure: str | None = None  # the first call that failed, and why
    problems: list[str] = field(default_factory=list)  # the first few failures and unread replies

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @property
    def nothing_scored(self) -> str | None:
        """Why the run scored nothing although it asked: calls failed and no reply had a score (None otherwise)."""
        if not self.failed or self.scored:
            return None
        return f"nothing could be scored: {self.failed} calls failed; the first: {self.first_failure}"


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


@dataclass(frozen=True)
class Said:
    """What one call gave: a score, or a reply without one (``problem``), or a failure (``failed``)."""

    ask: Ask
    score: int | None = None
    reply: str = ""
    problem: str | None = None
    failed: bool = False


async def ask_all(settings: JudgeSettings, asks: list[Ask], heard: Callable[[Said], bool]) -> None:
    """Every call, ``settings.concurrency`` at a time; ``heard`` is told each outcome as it comes and returns False
    to stop the run (calls under way finish; no new one starts)."""
    import aiohttp

    queue: asyncio.Queue[Ask] = asyncio.Queue()
    for ask in asks:
        queue.put_nowait(ask)
    stop = asyncio.Event()

    async def worker(http) -> None:
        while not stop.is_set():
            try:
                ask = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            said = await ask_one(http, settings, ask)
            if not heard(said):
                stop.set()

    async with aiohttp.ClientSession() as http:
        await asyncio.gather(*(worker(http) for _ in range(min(settings.concurrency, len(asks)) or 1)))


async def ask_one(http: Any, settings: JudgeSettings, ask: Ask) -> Said:
    messages = ask.prompt.messages(ask.answer.question, ask.answer.reference, ask.answer.text)
    body: dict[str, Any] = {"model": settings.model, "messages": messages}
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.max_tokens is not None:
        body["max_tokens"] = settings.max_tokens
    try:
        reply, _data = await chat_completion(http, settings.url, body, settings.api_key, settings.timeout, MAX_BODY)
    except UnreadableReply as unreadable:
        return Said(ask, None, _kept(unreadable.start), problem=str(unreadable))
    except BackendError as failure:
        return Said(ask, problem=str(failure), failed=True)
    try:
        return Said(ask, ask.prompt.read(reply), _kept(reply))
    except UnreadReply as unread:
        return Said(ask, None, _kept(reply), problem=str(unread))


def _kept(reply: str) -> str:
    """The reply as stored: its first MAX_REPLY characters, a NUL or lone surrogate (which a database refuses)
    written as an escape."""
    return reply[:MAX_REPLY].encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")


def store(db: Session, settings: JudgeSettings, said: Said) -> None:
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
    progress: Callable[[Said], None] | None = None,
) -> RunSummary:
    """Ask the judge for every open answer of the session and dimension not yet scored; what happened."""
    dimensions = list(dimensions)
    unknown = [dimension for dimension in dimensions if dimension not in DIMENSIONS]
    if unknown or not dimensions:
        raise JudgeError(f"--dimensions: {', '.join(unknown) or 'none given'}; choose from {', '.join(DIMENSIONS)}")
    prompts = load_prompts()
    summary = RunSummary()
    with db_factory() as db:
        vtt_session = db.get(VttSession, session_id)
        answers, summary.left_out = open_answers(db, vtt_session)
        asks, summary.already = pending_asks(db, answers, [prompts[d] for d in dimensions], settings.model)
    summary.answers = len(answers)
    if started is not None:
        started(len(asks))
    failures_in_a_row = 0

    def heard(said: Said) -> bool:
        nonlocal failures_in_a_row
        summary.asked += 1
        if said.failed:
            summary.failed += 1
            failures_in_a_row += 1
            if summary.first_failure is None:
                summary.first_failure = (
                    f"answer {said.ask.answer.answer_id} {said.ask.prompt.dimension}: {said.problem}"
                )
        else:
            failures_in_a_row = 0
            summary.scored += said.score is not None
            summary.unread += said.score is None
            with db_factory() as db:
                store(db, settings, said)
        if said.problem and len(summary.problems) < 5:
            summary.problems.append(f"answer {said.ask.answer.answer_id} {said.ask.prompt.dimension}: {said.problem}")
        if progress is not None:
            progress(said)
        if failures_in_a_row >= settings.max_failures:
            if summary.stopped is None:  # calls already under way may fail too: the first reason stands
                summary.stopped = f"{failures_in_a_row} calls in a row failed; the last: {said.problem}"
            return False
        return True

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
