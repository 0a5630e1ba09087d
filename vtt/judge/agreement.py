"""How far the judge agrees with the graders: per model, against each grader's own marks and against the final marks
(``analysis.agreement.judge_agreement``: Cohen's kappa on correct/incorrect, quadratic weighted kappa and Spearman
on each 0-5 dimension; the 2x2 confusion matrix of the verdicts), over the answers both marked.

The judge's row is its current suggestion (the prompts as they are now, ``suggest.suggestions``); the final marks
are the answers' ``grade`` rows set by graders (automatic grades against an mcq key are not the graders' judgment).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from sqlalchemy import select
from sqlalchemy.orm import Session

from analysis.agreement import FINAL_MARKS, VERDICTS, judge_agreement, judge_confusions

from ..models import RUBRIC_DIMENSIONS, Answer, Grade, GraderMark, VttSession
from .suggest import suggestions

FINAL = FINAL_MARKS  # the rater name of the final marks: parentheses, so no grader's name can be it
COLUMNS = ["model", "rater", "measure", "items", "kappa", "weighted_kappa", "spearman", "reason"]
CONFUSION_COLUMNS = ["model", "rater", "rater_verdict", "judge_verdict", "answers"]


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
    for mark in db.scalars(select(GraderMark).where(GraderMark.answer_id.in_(answer_ids)).order_by(GraderMark.id)):
        rows.append(_row(mark.answer_id, mark.grader, mark.correct, mark))
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
        tables.append(table.assign(model=model))
        verdicts = marks.dropna(subset=["correct"])
        for rater, matrix in judge_confusions(verdicts, judge).items():
            confusions[(model, rater)] = matrix
    table = pd.concat(tables, ignore_index=True)[COLUMNS] if tables else pd.DataFrame(columns=COLUMNS)
    return JudgeAgreement(table, confusions)


def _row(answer_id: int, rater: str, correct: bool, scored) -> dict:
    return {"item": answer_id, "rater": rater, "correct": correct, **{d: getattr(scored, d) for d in RUBRIC_DIMENSIONS}}
