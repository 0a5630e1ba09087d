"""Readers for the files ``vtt analyze`` takes: players' answers, the jury's votes and judgment sheets (UTF-8 CSV).

answers ``player, qid, answer`` [, ``correct``] [, ``kind``]; votes ``round, juror, vote`` [, ``confidence``]
[, ``slot``] and any juror facet (``analysis.tables.JUROR_FACETS``); sheets ``juror, qid, player, looks_like_ai``.
Column names are case-insensitive, cells are trimmed, blank lines are skipped and extra columns are ignored.  A
reader checks the whole file, collects every problem (file, row as a spreadsheet numbers it with the header as row
1, field) and raises one :class:`AnalysisInputError`; it never returns part of a file.  What each column accepts and
how an answer is graded: docs/analysis.md, "Inputs of vtt analyze".
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from .options import chosen_options, option_label
from .tables import (
    ANSWER_COLUMNS,
    EXPERT_VALUES,
    JUROR_FACETS,
    PLAYER_KINDS,
    VOTE_COLUMNS,
    facet_labels,
    juror_labels,
    require_columns,
    several_labels_message,
)

_TRUE = {"1", "true"}
_FALSE = {"0", "false"}
_MAX_ROWS_LISTED = 10
_UNKNOWN_PLAYER = (
    "unknown player {!r} (no row in the answers file; a player who answered nothing needs rows with an empty answer)"
)
SHEET_COLUMNS = ("juror", "qid", "player", "looks_like_ai")


class AnalysisInputError(ValueError):
    """Everything wrong with one of ``vtt analyze``'s input files; ``problems`` holds one text line per problem.

    Not :class:`vtt.problems.InputError` (an import's problems as :class:`vtt.problems.Problem` records)."""

    def __init__(self, path: str | Path, problems: list[str]):
        self.problems = problems
        count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
        super().__init__(f"{count} in {path}:\n" + "\n".join(f"  {p}" for p in problems))


def read_answers(path: str | Path, questions: pd.DataFrame, ai_names: Iterable[str] = ()) -> pd.DataFrame:
    """The answers table (``player, qid, answer, correct, kind``) of an answers CSV; see the module docstring."""
    return check_answers(_read_csv(path, ("player", "qid", "answer"), ("correct", "kind")), path, questions, ai_names)


def check_answers(
    table: pd.DataFrame, path: str | Path, questions: pd.DataFrame, ai_names: Iterable[str] = ()
) -> pd.DataFrame:
    """The answers table of rows read from ``path`` (strings: ``player, qid, answer, correct, kind``), checked
    as an answers CSV is (``analysis.predictions`` reads predictions files into such rows)."""
    require_columns(questions, ("qid", "type", "choices", "answer_index"), "questions")
    problems = _Problems(path)

    problems.add(table["player"] == "", "player", "is empty")
    folded = table["player"].str.casefold()
    spellings = table["player"].groupby(folded).agg(lambda names: " and ".join(map(repr, dict.fromkeys(names))))
    problems.add_each(
        table["player"].groupby(folded).transform("nunique") > 1,
        folded.map(spellings),
        "player",
        "{} differ only by case (votes and sheets match names case-insensitively)",
    )
    question = questions.assign(qid=questions["qid"].astype(str)).set_index("qid")
    known = table["qid"].isin(question.index)
    problems.add_each(~known, table["qid"], "qid", "unknown question {!r}")

    kind = table["kind"].str.lower()
    problems.add_each((kind != "") & ~kind.isin(PLAYER_KINDS), table["kind"], "kind", "must be human or ai, not {!r}")
    stated = kind.where(kind.isin(PLAYER_KINDS)).groupby(table["player"])
    problems.add_each(
        stated.transform("nunique") > 1, table["player"], "kind", "player {!r} is marked both human and ai"
    )
    # a kind stated on any of a player's rows holds for all of them; otherwise --ai decides
    ai_players = {name.strip().casefold(): name.strip() for name in ai_names}
    default_kind = pd.Series(
        np.where(table["player"].str.casefold().isin(list(ai_players)), "ai", "human"), index=table.index
    )
    kind = stated.transform("first").fillna(default_kind)
    problems.add_each(
        (default_kind == "ai") & (table["kind"].str.lower() == "human"),
        table["player"],
        "kind",
        "player {!r} is named as an AI player but marked human here",
    )
    named = set(folded)
    for name_folded, name in ai_players.items():
        if name_folded not in named:
            problems.add_file(f"player: AI player {name!r} has no row")

    given = table["correct"].str.lower()
    problems.add_each(
        ~given.isin(_TRUE | _FALSE | {""}), table["correct"], "correct", "must be 0/1/true/false, not {!r}"
    )
    chosen, out_of_range = chosen_options(table["qid"], table["answer"], questions)
    options = (
        table["qid"]
        .map(question["choices"].where(question["type"] == "mcq"))
        .map(lambda value: len(value) if isinstance(value, (list, tuple)) else 0)
    )
    last = (options - 1).clip(lower=0)
    problems.add_messages(
        out_of_range,
        (
            table["answer"].map(repr)
            + " names no option of question "
            + table["qid"].map(repr)
            + " ("
            + options.astype(str)
            + " options: A-"
            + last.map(option_label)
            + " or 0-"
            + last.astype(str)
            + ")"
        ),
        "answer",
    )
    key = table["qid"].map(question["answer_index"].where(question["type"] == "mcq"))
    graded = pd.Series(pd.NA, index=table.index, dtype="boolean")
    has_key = key.notna()
    graded[has_key] = (chosen[has_key] == key[has_key].astype(float)).fillna(False)
    needs_judgement = known & (given == "") & (table["answer"] != "") & graded.isna()
    problems.add_each(
        needs_judgement,
        table["qid"],
        "correct",
        "question {!r} is open-ended or has no key: its answers need a correct value (0/1)",
    )
    problems.add_each(
        table.duplicated(["player", "qid"], keep=False),
        table["player"] + " / " + table["qid"],
        "player/qid",
        "answered twice: {}",
    )
    problems.raise_any()

    correct = given.isin(_TRUE).where(given != "", graded.fillna(False)).astype(bool)
    answers = table.assign(correct=correct, kind=kind)[list(ANSWER_COLUMNS)]
    return answers.reset_index(drop=True)


def read_votes(path: str | Path, players: pd.DataFrame | Iterable[str]) -> pd.DataFrame:
    """The votes table (``round, juror, vote, slot, confidence`` and the file's facet columns) of a votes CSV.

    ``players`` is the players table (its ``name`` column is used) or the player names.  The facet
    columns (of ``group, expert, age_band, sex``, in that order) are those the file has.
    """
    names = players["name"] if isinstance(players, pd.DataFrame) else pd.Series(list(players), dtype=object)
    spelling = {str(name).casefold(): str(name) for name in names}
    problems = _Problems(path)
    table = _read_csv(path, ("round", "juror", "vote"), ("confidence", "slot"), JUROR_FACETS)

    round_no, bad_round = _whole_numbers(table["round"], low=1)
    problems.add(table["round"] == "", "round", "is empty")
    problems.add_each(bad_round, table["round"], "round", "must be a whole number >= 1, not {!r}")
    problems.add(table["juror"] == "", "juror", "is empty")
    vote = table["vote"].str.casefold().map(spelling)
    problems.add_each((table["vote"] != "") & vote.isna(), table["vote"], "vote", _UNKNOWN_PLAYER)
    confidence, bad_confidence = _whole_numbers(table["confidence"], low=1, high=5)
    problems.add_each(bad_confidence, table["confidence"], "confidence", "must be a whole number 1-5, not {!r}")
    slot, bad_slot = _whole_numbers(table["slot"].where(table["slot"] != "", "1"), low=1)
    problems.add_each(bad_slot, table["slot"], "slot", "must be a whole number >= 1, not {!r}")

    ballot = table["juror"] + " in round " + table["round"]
    problems.add_each(
        table.assign(slot=slot).duplicated(["round", "juror", "slot"], keep=False),
        ballot + ", slot " + slot.astype(str),
        "round/juror/slot",
        "more than one row for {}",
    )
    problems.add_each(
        vote.notna() & table.assign(vote=vote).duplicated(["round", "juror", "vote"], keep=False),
        ballot + " names " + table["vote"],
        "vote",
        "{} more than once",
    )
    facets = {}
    for facet in (name for name in JUROR_FACETS if name in table.columns):
        labels, not_a_label = facet_labels(table[facet], facet)
        problems.add_each(not_a_label, table[facet], facet, f"must be {EXPERT_VALUES}, not {{!r}}")
        facets[facet], two_labels = juror_labels(labels, table["juror"])
        problems.add_messages(two_labels, table["juror"].map(partial(several_labels_message, facet)), facet)
    problems.raise_any()

    votes = pd.DataFrame(
        {
            "round": round_no.astype(int),
            "juror": table["juror"],
            "vote": vote.astype(object).where(vote.notna(), None),
            "slot": slot.astype(int),
            "confidence": confidence.astype(float),
            **facets,
        }
    )
    return votes[[*VOTE_COLUMNS, *facets]].reset_index(drop=True)


def read_sheet(path: str | Path, questions: pd.DataFrame, players: pd.DataFrame | Iterable[str]) -> pd.DataFrame:
    """The judgment-sheet table (``juror, qid, player, looks_like_ai``) of a sheet CSV.

    ``questions`` is the questions table (its ``qid`` column is used); ``players`` the players table
    (its ``name`` column) or the player names.  ``looks_like_ai`` is True, False or <NA> (no mark).
    """
    require_columns(questions, ("qid",), "questions")
    names = players["name"] if isinstance(players, pd.DataFrame) else pd.Series(list(players), dtype=object)
    spelling = {str(name).casefold(): str(name) for name in names}
    problems = _Problems(path)
    table = _read_csv(path, SHEET_COLUMNS, ())

    problems.add(table["juror"] == "", "juror", "is empty")
    problems.add_each(
        ~table["qid"].isin(set(questions["qid"].astype(str))), table["qid"], "qid", "unknown question {!r}"
    )
    problems.add(table["player"] == "", "player", "is empty")
    player = table["player"].str.casefold().map(spelling)
    problems.add_each((table["player"] != "") & player.isna(), table["player"], "player", _UNKNOWN_PLAYER)
    mark = table["looks_like_ai"].str.lower()
    problems.add_each(
        ~mark.isin(_TRUE | _FALSE | {""}),
        table["looks_like_ai"],
        "looks_like_ai",
        "must be 0/1/true/false (or empty: no mark), not {!r}",
    )
    problems.add_each(
        player.notna() & table.assign(player=player).duplicated(["juror", "qid", "player"], keep=False),
        table["juror"] + " on " + table["qid"] + " / " + player.fillna(""),
        "juror/qid/player",
        "more than one row for {}",
    )
    problems.raise_any()

    looks = pd.array(mark.map(lambda m: True if m in _TRUE else False if m in _FALSE else None), dtype="boolean")
    sheet = pd.DataFrame(
        {"juror": table["juror"], "qid": table["qid"], "player": player.astype(object), "looks_like_ai": looks}
    )
    return sheet[list(SHEET_COLUMNS)].reset_index(drop=True)


class _Problems:
    """Problems of one file; rows with the same field and message are listed together."""

    def __init__(self, path: str | Path):
        self.path = path
        self._rows: dict[tuple[str, str], list[int]] = {}
        self._file: list[str] = []

    def add(self, mask: pd.Series, field: str, message: str) -> None:
        rows = (mask[mask].index + 2).tolist()  # +2: the header is row 1 and the index starts at 0
        if rows:
            self._rows.setdefault((field, message), []).extend(rows)

    def add_each(self, mask: pd.Series, values: pd.Series, field: str, template: str) -> None:
        """One problem per distinct offending value, ``template`` formatted with the value."""
        for value in values[mask].unique():
            self.add(mask & (values == value), field, template.format(value))

    def add_messages(self, mask: pd.Series, messages: pd.Series, field: str) -> None:
        """One problem per distinct message of the offending rows."""
        for message in messages[mask].unique():
            self.add(mask & (messages == message), field, message)

    def add_file(self, message: str) -> None:
        self._file.append(f"{self.path}: {message}")

    def raise_any(self) -> None:
        listed = sorted(self._rows.items(), key=lambda item: (item[1][0], item[0]))
        problems = [f"{self.path}: {_rows_text(rows)}, {field}: {message}" for (field, message), rows in listed]
        if problems or self._file:
            raise AnalysisInputError(self.path, problems + self._file)


def _rows_text(rows: list[int]) -> str:
    if len(rows) == 1:
        return f"row {rows[0]}"
    shown = ", ".join(map(str, rows[:_MAX_ROWS_LISTED]))
    more = len(rows) - _MAX_ROWS_LISTED
    return f"rows {shown}" + (f" and {more} more" if more > 0 else "")


def _read_csv(
    path: str | Path, required: tuple[str, ...], optional: tuple[str, ...], if_present: tuple[str, ...] = ()
) -> pd.DataFrame:
    """The file as trimmed strings ("" for empty), index = data row - 2, optional columns filled with "".

    Columns of ``if_present`` are kept when the file has them and left out otherwise.
    """
    try:
        table = pd.read_csv(
            path,
            dtype=str,
            keep_default_na=False,
            skip_blank_lines=False,
            encoding="utf-8-sig",
        )
    except pd.errors.EmptyDataError:
        raise AnalysisInputError(
            path, [f"{path}: row 1: the file is empty (expected a header {','.join(required)})"]
        ) from None
    except (OSError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise AnalysisInputError(path, [f"{path}: cannot be read as UTF-8 CSV: {exc}"]) from None
    table.columns = [str(c).strip().lower() for c in table.columns]
    missing = [c for c in required if c not in table.columns]
    if missing:
        raise AnalysisInputError(path, [f"{path}: row 1, {c}: required column is missing" for c in missing])
    present = [c for c in if_present if c in table.columns]
    table = table.reindex(columns=[*required, *optional, *present], fill_value="").fillna("")
    table = table.apply(lambda column: column.astype(str).str.strip())
    return table[(table != "").any(axis=1)]


def _whole_numbers(values: pd.Series, low: int, high: float = np.inf) -> tuple[pd.Series, pd.Series]:
    """``values`` as Int64 (<NA> where empty or invalid) and the mask of non-empty invalid cells."""
    number = pd.to_numeric(values.where(values != ""), errors="coerce")
    valid = number.notna() & (number % 1 == 0) & (number >= low) & (number <= high)
    return number.where(valid).astype("Int64"), (values != "") & ~valid
