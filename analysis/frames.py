"""The DataFrames that flow into ``analysis``: their columns, and how to check them.

``analysis`` never imports ``vtt``.  Whoever feeds it (the live app's export, ``vtt analyze`` on
files, a notebook with a benchmark's predictions) builds these frames:

questions  one row per question
    qid          str     unique id within the set
    question     str     the text
    type         str     "mcq" | "open"
    choices      object  list[str] (empty for open questions)
    answer       str     the correct option's text (mcq) or the reference answer (open)
    answer_index Int64   0-based index of the correct option (mcq), <NA> for open
    clip         object  "shot" | "scene" | None
    category     object  str | None
    round        Int64   round number (1-based) or <NA>
    targets      object  tuple[str, ...] canonical TARGET names (see ``analysis.taxonomy``)
    key_target   object  str | None, one of ``targets``
    contents     object  tuple[str, ...] canonical CONTENT names
    thinking     object  str | None, canonical THINKING name

answers    one row per (player, question) put to that player; a question put to a player with no
           row counts as "no answer" (wrong) only if the player answered anything in the set
    player       str
    qid          str
    answer       str     what the player said ("" when nothing)
    correct      bool
    kind         str     "human" | "ai"

votes      one row per juror, round and slot
    round        int
    juror        str
    vote         object  player name, or None for an abstention
    slot         int     1.. (several when a session has several AI players)
    confidence   float   1-5 or NaN
    group        object  juror group label (e.g. "expert", "20s") or None; one per juror (a row
                         without one takes the label of the juror's other rows)
"""

from __future__ import annotations

import pandas as pd

QUESTION_COLUMNS = (
    "qid", "question", "type", "choices", "answer", "answer_index", "clip", "category", "round",
    "targets", "key_target", "contents", "thinking",
)
ANSWER_COLUMNS = ("player", "qid", "answer", "correct", "kind")
VOTE_COLUMNS = ("round", "juror", "vote", "slot", "confidence", "group")

PLAYER_KINDS = ("human", "ai")
QUESTION_TYPES = ("mcq", "open")
CLIP_KINDS = ("shot", "scene")


def require_columns(frame: pd.DataFrame, columns: tuple[str, ...], name: str) -> None:
    """Raise ``ValueError`` naming every missing column of ``frame``."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{name} frame lacks column(s): {', '.join(missing)}")


def tag_table(questions: pd.DataFrame) -> pd.DataFrame:
    """One row per (question, tag): ``qid, module, element, is_key``; untagged questions have no rows."""
    require_columns(questions, ("qid", "targets", "key_target", "contents", "thinking"), "questions")
    parts = []
    for module, column in (("target", "targets"), ("content", "contents")):
        exploded = questions[["qid", column, "key_target"]].explode(column).dropna(subset=[column])
        parts.append(pd.DataFrame({
            "qid": exploded["qid"].to_numpy(),
            "module": module,
            "element": exploded[column].to_numpy(),
            "is_key": (exploded[column] == exploded["key_target"]).to_numpy(dtype=bool),
        }))
    thinking = questions.dropna(subset=["thinking"])
    parts.append(pd.DataFrame({
        "qid": thinking["qid"].to_numpy(), "module": "thinking",
        "element": thinking["thinking"].to_numpy(), "is_key": False,
    }))
    tags = pd.concat(parts, ignore_index=True)
    return tags.astype({"qid": str, "module": str, "element": str, "is_key": bool})
