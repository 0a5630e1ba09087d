"""The host answers for an AI player whose agent failed, from a predictions file.

The file is read as ``vtt analyze`` reads predictions (:mod:`analysis.predictions`: CSV, JSON or JSONL
keyed by ``qid``; a multiple-choice prediction by option text, letter or index as in
:mod:`analysis.options`).  The current question's prediction goes to the live engine as the host's
``enter_answer`` move with ``source: "import"`` (:func:`answer_from_predictions`), the way the paper sheets
go in as the juror's own actions: the engine's rules (phase, AI player, playing this round) apply, the event
log records it, and nothing reaches the database by another path.  Any problem stops before the engine is
asked, so nothing is written.
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..engine.actions import HOST
from ..models import Phase, Player, PlayerKind, Question, QuestionType, SessionQuestion, VttSession
from ..protocol.vocabulary import MAX_FILE_NAME

SUFFIXES = (".csv", ".json", ".jsonl")
OPEN_PHASES = (Phase.ANSWERING, Phase.ANSWERS_CLOSED)


class ImportProblem(ValueError):
    """Why a predictions file gave no answer: ``code`` and the values its message names."""

    def __init__(self, code: str, **values: Any):
        super().__init__(f"{code}: {values}")
        self.code, self.values = code, values


@dataclass(frozen=True)
class Imported:
    player: str
    qid: str
    answer: str  # the option's text (mcq) or the answer text (open)
    reply: dict[str, Any] = field(default_factory=dict)  # the engine's acknowledgement


def current_question(db: Session, vtt_session: VttSession) -> tuple[SessionQuestion, Question] | None:
    """The question being answered (or whose answers are closed, not yet revealed), else None."""
    if vtt_session.phase not in OPEN_PHASES or vtt_session.current_round is None:
        return None
    return db.execute(
        select(SessionQuestion, Question)
        .join(Question)
        .where(
            SessionQuestion.session_id == vtt_session.id,
            SessionQuestion.round == vtt_session.current_round,
            SessionQuestion.position == vtt_session.current_position,
        )
    ).first()


def file_name(name: str | None) -> str:
    """The uploaded file's own name (no folders), as the event log and the provenance keep it."""
    return Path((name or "").replace("\\", "/")).name[:MAX_FILE_NAME] or "predictions"


def prediction_for(file: str, data: bytes, question: Question) -> tuple[int | None, str]:
    """``(choice, text)`` for ``question`` from a predictions file's bytes; raises :class:`ImportProblem`."""
    import pandas as pd

    from analysis.options import chosen_options
    from analysis.predictions import PredictionsError, read_predictions

    suffix = Path(file).suffix.lower()
    if suffix not in SUFFIXES:
        raise ImportProblem("bad_suffix", file=file)
    with tempfile.TemporaryDirectory(prefix="vtt-predictions-") as folder:
        path = Path(folder) / f"predictions{suffix}"
        path.write_bytes(data)
        try:
            table = read_predictions(path, "host")
        except PredictionsError as error:
            raise ImportProblem("unreadable", file=file, detail=str(error).replace(str(path), file)) from None
        except (UnicodeDecodeError, ValueError, pd.errors.ParserError) as error:
            raise ImportProblem("unreadable", file=file, detail=str(error).replace(str(path), file)) from None
    found = table.loc[table["qid"] == question.qid, "answer"]
    if found.empty:
        raise ImportProblem("qid_missing", qid=question.qid, file=file, count=len(table))
    if found.nunique() > 1:
        raise ImportProblem("qid_twice", qid=question.qid, file=file, answers=", ".join(map(repr, found.unique())))
    predicted = str(found.iloc[0]).strip()
    if not predicted:
        raise ImportProblem("empty", qid=question.qid, file=file)
    if question.type is not QuestionType.MCQ:
        return None, predicted
    choices = [str(choice) for choice in question.choices]
    options = pd.DataFrame({"qid": [question.qid], "type": ["mcq"], "choices": [choices]})
    chosen, _out_of_range = chosen_options(pd.Series([question.qid]), pd.Series([predicted]), options)
    index = chosen.iloc[0]
    if index is None or (isinstance(index, float) and math.isnan(index)):
        raise ImportProblem("no_option", qid=question.qid, prediction=predicted, options=len(choices))
    return int(index), choices[int(index)]


def answer_from_predictions(
    live, db: Session, vtt_session: VttSession, player: Player, file: str, data: bytes, entry_key: str
) -> Imported:
    """Read the current question's prediction from the file and submit it as the host's ``enter_answer``.

    ``entry_key`` is the form's one-time key: a form posted twice is a replay the engine acknowledges without a
    second change.  Raises :class:`ImportProblem` (nothing written) when the player is not an AI, no question is
    open for answers, the file cannot be read, or it has no usable prediction for the question; ``refused``
    carries the engine's own refusal.
    """
    if player.kind is not PlayerKind.AI:
        raise ImportProblem("not_ai", player=player.name)
    placed = current_question(db, vtt_session)
    if placed is None:
        raise ImportProblem("wrong_phase", phase=vtt_session.phase.value)
    item, question = placed
    name = file_name(file)
    choice, text = prediction_for(name, data, question)
    answer = {"choice": choice} if question.type is QuestionType.MCQ else {"text": text}
    reply = live.act(
        vtt_session.id,
        HOST,
        "enter_answer",
        {"player": player.id, "question": item.id, "source": "import", "file": name, **answer},
        f"import-{entry_key}"[:64],
    )
    if not reply.get("ok"):
        raise ImportProblem("refused", code=reply["error"]["code"], message=reply["error"]["message"])
    return Imported(player.name, question.qid, text, reply)
