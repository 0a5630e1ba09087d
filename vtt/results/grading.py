"""Grading open answers by hand: each grader's own marks, their agreement, and the final mark.

* A **grader mark** (:class:`~vtt.models.GraderMark`) is one grader's correct/incorrect and optional
  0-5 MovieCORE rubric for one answer; graders never see their marks merged.
* The **final mark** is the answer's :class:`~vtt.models.Grade` row, the one the reports read
  (``vtt.results.tables``).  It is set by hand (it settles a disagreement), or from the graders'
  agreement: when every grader who marked the answer gave the same correct/incorrect, the final mark
  takes it, with each rubric dimension the rounded mean of the scores given (None when nobody scored
  it).  Setting finals from agreement leaves answers that already have a final mark alone.
* **Answers to grade**: those to an open question or to a multiple-choice question whose key is
  withheld (a keyed mcq is graded against its key), submitted in time and not empty (a late or
  empty answer counts as no answer, whatever a grade says).
* **Agreement**: Cohen's kappa on correct/incorrect for every pair of graders, over the answers both
  marked (``analysis.agreement``).

Every write is checked first (:class:`GradingError` names the field) and logged in the event log;
the caller commits.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd
from flask_babel import gettext as _
from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from analysis.agreement import pairwise_kappas

from ..models import (
    RUBRIC_DIMENSIONS,
    Answer,
    Event,
    Grade,
    GraderMark,
    Player,
    Question,
    QuestionType,
    SessionQuestion,
    VttSession,
    utcnow,
)
from .tables import player_answer_text

GRADER_NAME_LENGTH = 120
RUBRIC_RANGE = range(0, 6)


class GradingError(ValueError):
    """A grading request that cannot be carried out; ``field`` is the form field at fault."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class MarkInput:
    """A checked mark: correct/incorrect and the rubric scores given (dimension -> 0-5, None when left blank)."""

    correct: bool
    rubric: dict[str, int | None]

    @classmethod
    def from_form(cls, form) -> MarkInput:
        """Read ``correct`` ("1"/"0") and the five rubric fields (blank or a whole number 0-5)."""
        verdict = (form.get("correct") or "").strip()
        if verdict not in ("1", "0"):
            raise GradingError("correct", _("choose correct or incorrect"))
        rubric = {}
        for dimension in RUBRIC_DIMENSIONS:
            text = (form.get(dimension) or "").strip()
            if not text:
                rubric[dimension] = None
            elif text.isascii() and text.isdigit() and int(text) in RUBRIC_RANGE:
                rubric[dimension] = int(text)
            else:
                raise GradingError(
                    dimension, _("a score is a whole number from 0 to 5 or blank, not “%(given)s”", given=text)
                )
        return cls(verdict == "1", rubric)


def grader_name(text: str | None) -> str:
    """A grader's name as given (trimmed, inner spaces collapsed); refuses an empty or over-long one."""
    name = " ".join((text or "").split())
    if not name:
        raise GradingError("grader", _("name yourself before you grade"))
    if len(name) > GRADER_NAME_LENGTH:
        raise GradingError("grader", _("a grader's name has at most %(count)s characters", count=GRADER_NAME_LENGTH))
    return name


# --- reading -------------------------------------------------------------------------------------


@dataclass
class AnswerToGrade:
    answer: Answer
    player: Player
    text: str
    marks: dict[str, GraderMark] = field(default_factory=dict)  # grader -> mark, in graders' order
    final: Grade | None = None

    @property
    def verdicts(self) -> set[bool]:
        return {mark.correct for mark in self.marks.values()}

    @property
    def agreed(self) -> bool | None:
        """The graders' common verdict, None without marks or when they disagree."""
        return next(iter(self.verdicts)) if len(self.verdicts) == 1 else None

    @property
    def disagreement(self) -> bool:
        return len(self.verdicts) > 1

    @property
    def final_differs(self) -> bool:
        """A final mark that goes against the graders' agreement (set by hand, or before a grader changed a mark)."""
        return self.final is not None and self.agreed is not None and self.final.correct != self.agreed


@dataclass
class QuestionToGrade:
    placed: SessionQuestion
    answers: list[AnswerToGrade]

    @property
    def question(self) -> Question:
        return self.placed.question


@dataclass
class GradingOverview:
    """Everything the grading page shows about one session."""

    questions: list[QuestionToGrade]
    graders: list[str]  # in order of their first mark
    marks_per_grader: dict[str, int]
    kappas: pd.DataFrame  # analysis.agreement.pairwise_kappas, raters are graders

    @property
    def answers(self) -> list[AnswerToGrade]:
        return [item for question in self.questions for item in question.answers]

    @property
    def finals(self) -> int:
        return sum(item.final is not None for item in self.answers)

    @property
    def disagreements(self) -> int:
        return sum(item.disagreement for item in self.answers)

    @property
    def settleable(self) -> int:
        """Answers without a final mark whose graders agree: what one click settles."""
        return sum(item.final is None and item.agreed is not None for item in self.answers)


def needs_hand_grading(question: Question) -> bool:
    return question.type is QuestionType.OPEN or question.answer_index is None


def grading_overview(db: Session, vtt_session: VttSession) -> GradingOverview:
    session_id = vtt_session.id
    placed = [
        sq
        for sq in db.scalars(
            select(SessionQuestion)
            .where(SessionQuestion.session_id == session_id)
            .options(selectinload(SessionQuestion.question))
            .order_by(SessionQuestion.round, SessionQuestion.position)
        )
        if needs_hand_grading(sq.question)
    ]
    players = {p.id: p for p in db.scalars(select(Player).where(Player.session_id == session_id))}
    answers = db.scalars(
        select(Answer)
        .where(Answer.session_id == session_id, Answer.late.is_(False))
        .options(selectinload(Answer.grade))
        .order_by(Answer.player_id)
    )
    by_question: dict[int, list[AnswerToGrade]] = {}
    by_id: dict[int, AnswerToGrade] = {}
    questions = {sq.id: sq.question for sq in placed}
    for answer in answers:
        question = questions.get(answer.session_question_id)
        text = player_answer_text(question, answer) if question is not None else ""
        if text.strip():
            item = AnswerToGrade(answer, players[answer.player_id], text, final=answer.grade)
            by_question.setdefault(answer.session_question_id, []).append(item)
            by_id[answer.id] = item
    marks = (
        list(db.scalars(select(GraderMark).where(GraderMark.answer_id.in_(list(by_id))).order_by(GraderMark.id)))
        if by_id
        else []
    )
    graders = list(dict.fromkeys(mark.grader for mark in marks))
    for mark in sorted(marks, key=lambda m: graders.index(m.grader)):
        by_id[mark.answer_id].marks[mark.grader] = mark
    kappas = pairwise_kappas(
        pd.DataFrame(
            {
                "item": [m.answer_id for m in marks],
                "rater": [m.grader for m in marks],
                "label": [m.correct for m in marks],
            }
        )
    )
    return GradingOverview(
        questions=[QuestionToGrade(sq, by_question.get(sq.id, [])) for sq in placed],
        graders=graders,
        marks_per_grader={grader: sum(m.grader == grader for m in marks) for grader in graders},
        kappas=kappas,
    )


# --- writing -------------------------------------------------------------------------------------


def answer_to_grade(db: Session, vtt_session: VttSession, answer_id_text: str | None) -> Answer:
    """The session's answer with this id, if it is one to grade by hand; GradingError naming ``answer_id``."""
    text = (answer_id_text or "").strip()
    answer = db.get(Answer, int(text)) if text.isascii() and text.isdigit() and len(text) < 12 else None
    if answer is None or answer.session_id != vtt_session.id:
        raise GradingError("answer_id", _("this session has no answer “%(given)s”", given=text))
    question = answer.session_question.question
    if not needs_hand_grading(question):
        raise GradingError(
            "answer_id",
            _(
                "answer %(answer)s is to a multiple-choice question with a key: it is graded against the key",
                answer=answer.id,
            ),
        )
    if answer.late or not player_answer_text(question, answer).strip():
        raise GradingError(
            "answer_id", _("answer %(answer)s counts as no answer (late or empty): nothing to grade", answer=answer.id)
        )
    return answer


def save_mark(
    db: Session, vtt_session: VttSession, answer: Answer, grader: str, mark: MarkInput, *, source: str = "hand"
) -> GraderMark:
    """Record (or replace) ``grader``'s own mark of ``answer``; ``source`` "judge:MODEL" when taken from the judge."""
    row = db.scalar(select(GraderMark).where(GraderMark.answer_id == answer.id, GraderMark.grader == grader))
    if row is None:
        row = GraderMark(answer_id=answer.id, grader=grader)
        db.add(row)
    _put(row, mark)
    _log(db, vtt_session, "grade.mark", grader, answer, mark.correct, mark.rubric, source=source)
    db.flush()
    return row


def set_final(
    db: Session, vtt_session: VttSession, answer: Answer, grader: str, mark: MarkInput, *, source: str = "hand"
) -> Grade:
    """Set the final mark of ``answer`` (the one the reports read), by ``grader``."""
    grade = answer.grade
    if grade is None:
        grade = answer.grade = Grade(answer_id=answer.id)
    grade.automatic = False
    grade.grader = grader
    _put(grade, mark)
    _log(db, vtt_session, "grade.final", grader, answer, mark.correct, mark.rubric, source=source)
    db.flush()
    return grade


def _put(row: GraderMark | Grade, mark: MarkInput) -> None:
    row.correct = mark.correct
    row.graded_at = utcnow()
    for dimension, score in mark.rubric.items():
        setattr(row, dimension, score)


def agreed_mark(item: AnswerToGrade) -> MarkInput | None:
    """The final mark the graders' agreement gives (module docstring), None when they disagree or none marked."""
    if item.agreed is None:
        return None
    rubric = {}
    for dimension in RUBRIC_DIMENSIONS:
        scores = [getattr(mark, dimension) for mark in item.marks.values() if getattr(mark, dimension) is not None]
        rubric[dimension] = int(sum(scores) / len(scores) + 0.5) if scores else None  # half up, as graders expect
    return MarkInput(item.agreed, rubric)


def settle_from_agreement(db: Session, vtt_session: VttSession, grader: str, answer: Answer | None = None) -> int:
    """Final marks from the graders' agreement: for ``answer`` (replacing its final mark), or for every
    answer of the session without a final mark.  Returns how many were set; GradingError when ``answer``'s
    graders disagree or nobody marked it."""
    overview = grading_overview(db, vtt_session)
    if answer is not None:
        item = next(item for item in overview.answers if item.answer.id == answer.id)
        mark = agreed_mark(item)
        if mark is None:
            raise GradingError(
                "answer_id",
                _("the graders of answer %(answer)s disagree: set its final mark by hand", answer=answer.id)
                if item.disagreement
                else _("no grader has marked answer %(answer)s yet", answer=answer.id),
            )
        set_final(db, vtt_session, answer, grader, mark, source="agreement")
        return 1
    settled = 0
    for item in overview.answers:
        mark = agreed_mark(item)
        if item.final is None and mark is not None:
            set_final(db, vtt_session, item.answer, grader, mark, source="agreement")
            settled += 1
    return settled


def _log(
    db: Session,
    vtt_session: VttSession,
    kind: str,
    grader: str,
    answer: Answer,
    correct: bool,
    rubric: dict[str, int | None],
    **extra,
) -> None:
    db.add(
        Event(
            session_id=vtt_session.id,
            kind=kind,
            actor=grader,
            payload={"answer_id": answer.id, "correct": correct, **rubric, **extra},
        )
    )
