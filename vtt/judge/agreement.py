"""How far the judge agrees with the graders: per model, against each grader's own marks and against the final marks
(``analysis.agreement.judge_agreement``: Cohen's kappa on correct/incorrect, quadratic weighted kappa and Spearman
on each 0-5 dimension; the 2x2 confusion matrix of the verdicts), over the answers both marked.

``taken``: per model and grader, how many of the grader's current marks were taken from that model's suggestion
(the latest ``grade.mark`` event of the answer and grader has ``source`` "judge:MODEL"; older events without a source
were by hand): those agree with the judge by construction, and a paper must say how many.  The final marks' row says
0: they are set from the graders' agreement or by hand.

The judge's row is its current suggestion (the prompts as they are now, ``suggest.suggestions``); the final marks
are the answers' ``grade`` rows set by graders (automatic grades against an mcq key are not the graders' judgment).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from sqlalchemy import select
from sqlalchemy.orm import Session

from analysis.agreement import FINAL_MARKS, VERDICTS, judge_agreement, judge_confusions
from analysis.judge_rows import (
    JUDGE_AGREEMENT_COLUMNS,
    JUDGE_CONFUSION_COLUMNS,
    JUDGE_TAKEN,
    JudgeRow,
    judge_rows,
)

from ..models import RUBRIC_DIMENSIONS, Answer, Event, Grade, GraderMark, JudgeSuggestion, VttSession
from .suggest import suggestions

FINAL = FINAL_MARKS  # the rater name of the final marks: parentheses, so no grader's name can be it
_AFTER_ITEMS = JUDGE_AGREEMENT_COLUMNS.index("items") + 1
COLUMNS = [*JUDGE_AGREEMENT_COLUMNS[:_AFTER_ITEMS], JUDGE_TAKEN, *JUDGE_AGREEMENT_COLUMNS[_AFTER_ITEMS:]]
CONFUSION_COLUMNS = list(JUDGE_CONFUSION_COLUMNS)


@dataclass(frozen=True)
class JudgeAgreement:
    table: pd.DataFrame  # COLUMNS: one row per model, rater (graders, then FINAL) and measure
    confusions: dict[tuple[str, str], pd.DataFrame]  # (model, rater) -> 2x2, rows the rater's verdict

    @property
    def empty(self) -> bool:
        return self.table.empty

    @property
    def confusion_table(self) -> pd.DataFrame:
        """The confusion matrices as one long frame (CONFUSION_COLUMNS): per model and rater, the answers both
        marked for each pair of verdicts (rater's, judge's), True before False, zero counts included."""
        rows = [
            {"model": model, "rater": rater, "rater_verdict": theirs, "judge_verdict": judges, "answers": int(count)}
            for (model, rater), matrix in self.confusions.items()
            for theirs in VERDICTS
            for judges in VERDICTS
            for count in [matrix.loc[theirs, judges]]
        ]
        return pd.DataFrame(rows, columns=CONFUSION_COLUMNS).astype({"answers": int})


def judge_agreement_of(db: Session, vtt_session: VttSession) -> JudgeAgreement:
    """Every judge model of the session against every grader and the final marks."""
    answer_ids = list(db.scalars(select(Answer.id).where(Answer.session_id == vtt_session.id)))
    judged = suggestions(db, answer_ids)
    rows = []
    current = set()
    for mark in db.scalars(select(GraderMark).where(GraderMark.answer_id.in_(answer_ids)).order_by(GraderMark.id)):
        rows.append(_row(mark.answer_id, mark.grader, mark.correct, mark))
        current.add((mark.answer_id, mark.grader))
    taken = _taken(db, vtt_session, current)
    for grade in db.scalars(
        select(Grade).where(Grade.answer_id.in_(answer_ids), Grade.automatic.is_(False)).order_by(Grade.id)
    ):
        rows.append(_row(grade.answer_id, FINAL, grade.correct, grade))
    humans = pd.DataFrame(rows, columns=["item", "rater", "correct", *RUBRIC_DIMENSIONS])
    models = sorted({suggestion.model for found in judged.values() for suggestion in found})
    tables, confusions = [], {}
    for model in models if not humans.empty else []:
        judge = f"judge: {model}"
        own = [
            {
                "item": answer_id,
                "rater": judge,
                "correct": None if suggestion.verdict is None else suggestion.verdict,
                **{d: suggestion.scores.get(d) for d in RUBRIC_DIMENSIONS},
            }
            for answer_id, found in judged.items()
            for suggestion in found
            if suggestion.model == model
        ]
        marks = pd.concat([humans, pd.DataFrame(own, columns=humans.columns)], ignore_index=True)
        marks = marks.astype({d: "Float64" for d in RUBRIC_DIMENSIONS})
        if humans.empty:
            continue
        table = judge_agreement(marks, judge, list(RUBRIC_DIMENSIONS))
        tables.append(
            table.assign(
                model=model, taken=[0 if rater == FINAL else taken.get((model, rater), 0) for rater in table["rater"]]
            )
        )
        verdicts = marks.dropna(subset=["correct"])
        for rater, matrix in judge_confusions(verdicts, judge).items():
            confusions[(model, rater)] = matrix
    table = (
        pd.concat(tables, ignore_index=True)[COLUMNS].astype({"taken": int})
        if tables
        else pd.DataFrame(columns=COLUMNS)
    )
    return JudgeAgreement(table, confusions)


def _row(answer_id: int, rater: str, correct: bool, scored) -> dict:
    return {"item": answer_id, "rater": rater, "correct": correct, **{d: getattr(scored, d) for d in RUBRIC_DIMENSIONS}}


def _taken(db: Session, vtt_session: VttSession, current: set[tuple[int, str]]) -> dict[tuple[str, str], int]:
    """(model, grader) -> how many of the grader's current marks (``current``: (answer id, grader)) the latest
    ``grade.mark`` event says were taken from that model."""
    sources: dict[tuple[int, str], str] = {}
    for event in db.scalars(
        select(Event).where(Event.session_id == vtt_session.id, Event.kind == "grade.mark").order_by(Event.id)
    ):
        key = (event.payload.get("answer_id"), event.actor)
        if key in current:
            sources[key] = str(event.payload.get("source") or "hand")
    counts: dict[tuple[str, str], int] = {}
    for (_, grader), source in sources.items():
        if source.startswith("judge:"):
            model = source.removeprefix("judge:")
            counts[(model, grader)] = counts.get((model, grader), 0) + 1
    return counts


# --- the results page's card ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class JudgeConfusion:
    rater: str
    counts: list[list[int]]  # rows the rater's verdict (correct, incorrect), columns the judge's


@dataclass(frozen=True)
class JudgeModel:
    model: str
    rows: list[JudgeRow]  # analysis.judge_rows.judge_rows: per rater, its measures
    confusions: list[JudgeConfusion]


@dataclass(frozen=True)
class JudgeCard:
    """The judge's agreement with the graders, per model; ``models`` empty: suggestions, but none beside a mark."""

    models: list[JudgeModel]
    final: str = FINAL  # the rater name of the final marks


def judge_card(db: Session, vtt_session: VttSession) -> JudgeCard | None:
    """What the results page shows of the judge: None when no judge suggested anything."""
    agreement = judge_agreement_of(db, vtt_session)
    if agreement.empty:
        suggested = db.scalar(
            select(JudgeSuggestion.id)
            .join(Answer, Answer.id == JudgeSuggestion.answer_id)
            .where(Answer.session_id == vtt_session.id)
            .limit(1)
        )
        return JudgeCard([]) if suggested is not None else None
    return JudgeCard(
        [
            JudgeModel(
                model,
                rows,
                [
                    JudgeConfusion(
                        rater,
                        [[int(matrix.loc[theirs, judges]) for judges in (True, False)] for theirs in (True, False)],
                    )
                    for (of, rater), matrix in agreement.confusions.items()
                    if of == model
                ],
            )
            for model, rows in judge_rows(agreement.table).items()
        ]
    )
