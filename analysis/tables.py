"""The tables (pandas DataFrames) that flow into ``analysis``: their columns, and how to check them.

``analysis`` never imports ``vtt``: whoever feeds it (the live app's export, ``vtt analyze`` on files, a notebook
with a benchmark's predictions) builds ``questions``, ``answers`` and ``votes`` tables with these columns.  Each
column's type and meaning: docs/analysis.md, "The tables analysis reads".
"""

from __future__ import annotations

import numbers

import pandas as pd

QUESTION_COLUMNS = (
    "qid",
    "question",
    "type",
    "choices",
    "answer",
    "answer_index",
    "clip",
    "category",
    "round",
    "targets",
    "key_target",
    "contents",
    "thinking",
)
ANSWER_COLUMNS = ("player", "qid", "answer", "correct", "kind")
VOTE_COLUMNS = ("round", "juror", "vote", "slot", "confidence")
JURY_VOTE_COLUMNS = (*VOTE_COLUMNS, "jury")  # the votes of several juries, compared by analysis/juries.py
JUROR_FACETS = ("group", "expert", "age_band", "sex")  # optional, in the order the reports list them
EXPERT_WORDS = {
    "expert": "expert",
    "yes": "expert",
    "true": "expert",
    "1": "expert",
    "non-expert": "non-expert",
    "no": "non-expert",
    "false": "non-expert",
    "0": "non-expert",
}
EXPERT_VALUES = "yes/no, true/false, 1/0 or expert/non-expert"  # the words above, for messages

PLAYER_KINDS = ("human", "ai")
QUESTION_TYPES = ("mcq", "open")
CLIP_KINDS = ("shot", "scene")


def require_columns(table: pd.DataFrame, columns: tuple[str, ...], name: str) -> None:
    """Raise ``ValueError`` naming every missing column of ``table``."""
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise ValueError(f"{name} frame lacks column(s): {', '.join(missing)}")


def facet_labels(cells: pd.Series, facet: str) -> tuple[pd.Series, pd.Series]:
    """A juror facet column as labels, and the mask of the cells that are not a label.

    Labels are the trimmed text of the cells, None where a cell is blank (None, NaN, empty or
    spaces).  ``expert`` cells are read through :data:`EXPERT_WORDS` (case-insensitive; bools and
    the numbers 1 and 0 too) as "expert" or "non-expert"; any other non-blank cell is not a label:
    it is flagged in the mask and gets None.
    """
    blank = cells.isna() | cells.astype(str).str.strip().eq("")
    labels = cells.map(_cell_text).mask(blank)
    if facet == "expert":
        labels = labels.str.lower().map(EXPERT_WORDS)
    return labels.astype(object).where(labels.notna(), None), ~blank & labels.isna()


def juror_labels(labels: pd.Series, jurors: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Each row's label as its juror's one label (None without any: a blank cell takes the juror's
    label), and the mask of the rows of jurors with two or more different labels."""
    per_juror = labels.groupby(jurors)
    label = per_juror.transform("first")
    return label.astype(object).where(label.notna(), None), per_juror.transform("nunique") > 1


def several_labels_message(facet: str, juror: object) -> str:
    """The error for a juror with two different labels of one facet."""
    groups = "group" if facet == "group" else f"{facet} group"
    return f"juror {juror!r} is in more than one {groups}"


def _cell_text(value: object) -> str:
    """A cell as trimmed text; whole numbers without a decimal point (1.0 and True read "1")."""
    if isinstance(value, numbers.Real) and float(value).is_integer():
        return str(int(value))
    return str(value).strip()


def tag_table(questions: pd.DataFrame) -> pd.DataFrame:
    """One row per (question, tag): ``qid, module, element, is_key``; untagged questions have no rows."""
    require_columns(questions, ("qid", "targets", "key_target", "contents", "thinking"), "questions")
    parts = []
    for module, column in (("target", "targets"), ("content", "contents")):
        exploded = questions[["qid", column, "key_target"]].explode(column).dropna(subset=[column])
        parts.append(
            pd.DataFrame(
                {
                    "qid": exploded["qid"].to_numpy(),
                    "module": module,
                    "element": exploded[column].to_numpy(),
                    "is_key": (exploded[column] == exploded["key_target"]).to_numpy(dtype=bool),
                }
            )
        )
    thinking = questions.dropna(subset=["thinking"])
    parts.append(
        pd.DataFrame(
            {
                "qid": thinking["qid"].to_numpy(),
                "module": "thinking",
                "element": thinking["thinking"].to_numpy(),
                "is_key": False,
            }
        )
    )
    tags = pd.concat(parts, ignore_index=True)
    return tags.astype({"qid": str, "module": str, "element": str, "is_key": bool})
