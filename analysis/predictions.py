"""Model predictions as benchmarks publish them, read into the rows of an answers file.

``vtt analyze --answers`` takes, besides the answers CSV (``player, qid, answer[, correct][, kind]``):

- a JSON object mapping qid to a predicted option (``{"7": 2, "8": "B"}``: the shape a leaderboard
  server takes as a submission);
- JSONL or CSV rows of ``qid`` and a prediction (column ``prediction``, ``pred`` or ``answer``): an
  option index, letter or text, as in the answers CSV;
- MovieCORE-style prediction JSON, ``{video: [{question, answer, pred, classification}]}``: open
  answers (``pred``), graded by ``classification`` when it says correct/incorrect (or yes/no,
  true/false, 1/0); the qid of each item is its ``qid``, else ``<video stem>-<NN>`` (its 1-based
  place under the video), as the bank reader numbers MovieCORE questions.

A file that holds one model's predictions names no player: ``player`` (``--player``) names it,
else the file's stem.  Rows come back as the answers CSV's strings, so the answers reader checks them
the same way.  Predictions of questions that are not in the set are counted and named by
:func:`split_unknown` (and left out), not silently dropped.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from .textio import read_json, value_text

PREDICTION_COLUMNS = ("prediction", "pred", "answer")
ROW_COLUMNS = ("player", "qid", "answer", "correct", "kind")
_CORRECT = {
    "correct": "1",
    "yes": "1",
    "true": "1",
    "1": "1",
    "incorrect": "0",
    "wrong": "0",
    "no": "0",
    "false": "0",
    "0": "0",
}


class PredictionsError(ValueError):
    """A predictions file that cannot be read; the message names the file and what is wrong."""


def is_predictions_file(path: Path) -> bool:
    """Whether ``path`` holds predictions (not an answers CSV with a ``player`` column)."""
    if path.suffix.lower() in (".json", ".jsonl"):
        return True
    header = pd.read_csv(path, nrows=0, encoding="utf-8-sig").columns
    columns = {str(column).strip().lower() for column in header}
    return "player" not in columns and "qid" in columns and bool(columns & set(PREDICTION_COLUMNS))


def read_predictions(path: Path, player: str | None = None) -> pd.DataFrame:
    """The predictions in ``path`` as answers rows (strings; index = the row's place in the file)."""
    name = player or path.stem
    suffix = path.suffix.lower()
    if suffix == ".json":
        rows = _json_rows(path, read_json(path, partial(_at_line, path)))
    elif suffix == ".jsonl":
        rows = [_prediction_row(path, number, item) for number, item in _jsonl(path)]
    else:
        raw = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
        raw.columns = [str(column).strip().lower() for column in raw.columns]
        rows = [_prediction_row(path, number, record) for number, record in enumerate(raw.to_dict("records"), start=2)]
    table = pd.DataFrame(rows, columns=["qid", "answer", "correct"]).fillna("")
    table.insert(0, "player", name)
    table["kind"] = ""
    return table[list(ROW_COLUMNS)].astype(str).apply(lambda column: column.str.strip())


def split_unknown(table: pd.DataFrame, known_qids: set[str]) -> tuple[pd.DataFrame, list[str]]:
    """The rows of questions in the set, and the qids (in file order, once each) that are not."""
    known = table["qid"].isin(known_qids)
    return table[known], list(dict.fromkeys(table.loc[~known, "qid"]))


def coverage(answers: pd.DataFrame, questions: int) -> list[str]:
    """One line per player: how many of the set's questions it answered."""
    answered = answers[answers["answer"] != ""].groupby("player", sort=False)["qid"].nunique()
    return [f"{player} answered {count:,} of {questions:,} questions" for player, count in answered.items()]


def _jsonl(path: Path):
    with path.open(encoding="utf-8-sig") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                try:
                    yield number, json.loads(line)
                except json.JSONDecodeError as error:
                    raise _at_line(path, number, f"not valid JSON: {error.msg}") from None


def _at_line(path: Path, line: int, message: str) -> PredictionsError:
    """A problem at a line of the file (JSON syntax, in a .json or a .jsonl file)."""
    return PredictionsError(f"{path}: line {line}: {message}")


def _json_rows(path: Path, data: Any) -> list[dict[str, str]]:
    if isinstance(data, list):
        return [_prediction_row(path, number, item) for number, item in enumerate(data, start=1)]
    if not isinstance(data, dict):
        raise PredictionsError(f"{path}: expected an object (qid -> prediction, or video -> predictions) or a list")
    if all(isinstance(value, list) for value in data.values()):  # MovieCORE: {video: [{question, pred, ...}]}
        rows = []
        for video, items in data.items():
            for index, item in enumerate(items, start=1):
                if not isinstance(item, dict) or "pred" not in item:
                    raise PredictionsError(f"{path}: {video!r} item {index}: expected an object with 'pred'")
                rows.append(
                    {
                        "qid": str(item.get("qid") or f"{Path(video).stem}-{index:02d}"),
                        "answer": value_text(item["pred"]),
                        "correct": _CORRECT.get(value_text(item.get("classification")).casefold(), ""),
                    }
                )
        return rows
    for qid, value in data.items():
        if isinstance(value, (dict, list)):
            raise PredictionsError(
                f"{path}: qid {qid!r}: expected an option (index, letter or text), not {type(value).__name__}"
            )
    return [{"qid": str(qid), "answer": value_text(value), "correct": ""} for qid, value in data.items()]


def _prediction_row(path: Path, number: int, item: Any) -> dict[str, str]:
    if not isinstance(item, dict):
        raise PredictionsError(f"{path}: row {number}: expected an object with qid and prediction")
    item = {str(key).strip().lower(): value for key, value in item.items()}
    column = next((c for c in PREDICTION_COLUMNS if c in item), None)
    if "qid" not in item or column is None:
        raise PredictionsError(f"{path}: row {number}: needs qid and one of {', '.join(PREDICTION_COLUMNS)}")
    return {
        "qid": value_text(item["qid"]),
        "answer": value_text(item[column]),
        "correct": _CORRECT.get(value_text(item.get("correct")).casefold(), ""),
    }
