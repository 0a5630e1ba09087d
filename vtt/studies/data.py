"""A study's sessions as the long frames ``analysis.study`` pools, and the all-sessions export.

Every frame carries ``session`` (the join code) in front. The answers are each session's own (its frames: a question
put to a player who took part and not answered is wrong; open answers nobody graded are left out), labelled with the
program that produced an AI player's answer (its provenance's backend and model), so profiles pool by AI program as
well as by developmental stage.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from sqlalchemy import select
from sqlalchemy.orm import Session

from analysis.study import SESSION_COLUMNS, StudyData

from ..models import Answer, Player, PlayerKind, Question, SessionQuestion, Study, VttSession
from ..results.export import EXPORT_FILES, tables_and_export


def program_label(provenance: Any, entered_by_host: bool = False) -> str | None:
    """What produced an AI player's answer, as reports name it: ``backend · model`` (or the backend alone); the
    host's own entries are ``host``; None when the answer names nothing."""
    if entered_by_host:
        return "host"
    if not isinstance(provenance, dict) or not provenance.get("backend"):
        return None
    backend, model = str(provenance["backend"]), provenance.get("model")
    return f"{backend} · {model}" if model else backend


# A juror without a group voted on their own phone or laptop: only paper jurors' marks are typed in by the host
# (``paper``), and open joins are ``open``. Named so that the study's juror facets compare paper with devices.
ON_A_DEVICE = "phone or laptop"


def _with_medium(votes: pd.DataFrame) -> pd.DataFrame:
    group = votes["group"] if "group" in votes.columns else pd.Series(None, index=votes.index, dtype=object)
    return votes.assign(group=group.where(group.notna() & (group.astype(str).str.strip() != ""), ON_A_DEVICE))


def _sessions_of(study: Study) -> list[VttSession]:
    return [member.session for member in study.members]


def _programs(db: Session, session: VttSession) -> dict[tuple[str, str], str | None]:
    """(player name, qid) -> the program label of each AI player's answer in the session."""
    rows = db.execute(
        select(Player.name, Question.qid, Answer.provenance, Answer.entered_by_host)
        .join(Player, (Player.id == Answer.player_id) & (Player.session_id == Answer.session_id))
        .join(
            SessionQuestion,
            (SessionQuestion.id == Answer.session_question_id) & (SessionQuestion.session_id == Answer.session_id),
        )
        .join(Question, Question.id == SessionQuestion.question_id)
        .where(Answer.session_id == session.id, Player.kind == PlayerKind.AI)
    ).all()
    return {(name, qid): program_label(provenance, entered) for name, qid, provenance, entered in rows}


def read_study(db: Session, study: Study) -> tuple[StudyData, dict[str, pd.DataFrame]]:
    """The study's sessions read once each: :class:`analysis.study.StudyData`, and the all-sessions export
    (``<table>_all.csv`` for every table of the session export: every session's rows with ``session`` (the join
    code) and ``design_hash`` in front, oTree's all-sessions export, so R or pandas users start from one file)."""
    parts: dict[str, list[pd.DataFrame]] = {
        key: [] for key in ("players", "questions", "answers", "votes", "sheet", "jury_votes", "aliases")
    }
    exports: dict[str, list[pd.DataFrame]] = {name: [] for name in EXPORT_FILES}
    rows = []
    for session in _sessions_of(study):
        code = session.join_code
        frames, exported = tables_and_export(db, session)
        for name in EXPORT_FILES:
            exports[name].append(exported[name])
        programs = _programs(db, session)
        players = db.scalars(select(Player).where(Player.session_id == session.id).order_by(Player.id)).all()
        per_player: dict[str, list[str]] = {}
        for (name, _qid), label in programs.items():
            if label and label not in per_player.setdefault(name, []):
                per_player[name].append(label)
        # a question put to an AI player that it did not answer counts against the one program it ran
        only_program = {name: labels[0] for name, labels in per_player.items() if len(labels) == 1}
        answers = frames.answers.assign(
            program=[
                programs.get((player, qid), only_program.get(player)) if kind == "ai" else None
                for player, qid, kind in zip(frames.answers["player"], frames.answers["qid"], frames.answers["kind"])
            ]
        )
        parts["players"].append(
            pd.DataFrame(
                {
                    "player": [p.name for p in players],
                    "kind": [p.kind.value for p in players],
                    "stage": [p.stage for p in players],
                    "age": pd.array([p.age for p in players], dtype="Int64"),
                    "program": [
                        (" + ".join(per_player.get(p.name, [])) or None) if p.kind is PlayerKind.AI else None
                        for p in players
                    ],
                }
            )
        )
        parts["questions"].append(frames.questions)
        parts["answers"].append(answers)
        parts["votes"].append(_with_medium(frames.votes))
        parts["sheet"].append(frames.sheet)
        parts["jury_votes"].append(frames.jury_votes.drop(columns="model"))  # the model is in the jury's label
        parts["aliases"].append(frames.aliases)
        for key in parts:
            parts[key][-1] = parts[key][-1].assign(session=code)
        rows.append(
            {
                "session": code,
                "name": session.name,
                "design_hash": session.design_hash,
                "bank": session.bank.name if session.bank else None,
                "pass_rule": session.pass_rule.value,
                "alpha": session.pass_alpha,
                "threshold_pct": session.pass_threshold_pct,
                "rounds": session.rounds,
            }
        )

    def stacked(key: str) -> pd.DataFrame:
        frame = pd.concat(parts[key], ignore_index=True) if parts[key] else pd.DataFrame(columns=["session"])
        return frame[["session", *[c for c in frame.columns if c != "session"]]]

    data = StudyData(
        name=study.name,
        sessions=pd.DataFrame(rows, columns=list(SESSION_COLUMNS)),
        players=stacked("players"),
        questions=stacked("questions"),
        answers=stacked("answers"),
        votes=stacked("votes"),
        sheet=stacked("sheet"),
        jury_votes=stacked("jury_votes"),
        aliases=stacked("aliases"),
    )
    return data, {
        name.replace(".csv", "_all.csv"): pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        for name, frames in exports.items()
    }
