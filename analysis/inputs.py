"""Readers for the files ``vtt analyze`` takes: players' answers, the jury's votes and judgment sheets (UTF-8 CSV).

The readers check the whole file, collect every problem and raise one :class:`InputError`; they
never return part of a file.  A problem names the file, the row as a spreadsheet shows it (the
header is row 1, the first data row is row 2) and the field.  Column names are case-insensitive,
cells are trimmed, blank lines are skipped and extra columns are ignored.

answers CSV  ``player, qid, answer`` [, ``correct``] [, ``kind``]
    * ``correct``: 0/1/true/false (case-insensitive); when given it wins over the answer key.
    * Without ``correct``, an mcq answer is graded against the key.  The answer may be the option
      text (case- and space-insensitive; it wins when an option reads like a letter or number), the
      option letter (A = first) or the 0-based option index (see :mod:`analysis.options`).  A
      letter or index beyond the question's options (``F`` or ``7`` with five options) is an error;
      any other text that matches no option is a wrong answer.
    * An empty answer is wrong (no answer).  A non-empty open-ended answer without ``correct`` is
      an error: it needs a human judgement.
    * Player names are case-sensitive here but votes and sheets match them case-insensitively, so
      two names that differ only by case (``Minjun``, ``minjun``) are an error.
    * ``kind``: human | ai; a kind given on one of a player's rows holds for all of them.  Where the
      file says nothing, players named in ``ai_names`` (matched case-insensitively) are ai and the
      others human.  A name in ``ai_names`` without any row (a mistyped ``--ai``) and a name in
      ``ai_names`` whose rows say ``human`` are errors.
votes CSV  ``round, juror, vote`` [, ``confidence``] [, ``slot``] and any of the juror facets ``group``,
           ``expert``, ``age_band``, ``sex``
    * ``vote``: a player's name (case-insensitive; returned as the players' spelling), empty = abstain.
      A name without a row in the answers file is an error: a player who answered nothing needs
      rows with an empty answer.
    * ``round`` and ``slot`` (default 1) are whole numbers >= 1; ``confidence`` a whole number 1-5.
    * One row per (round, juror, slot); a juror names a player at most once per round.
    * Juror facets (``analysis.frames.JUROR_FACETS``): ``group``, ``age_band`` and ``sex`` are free
      text, ``expert`` is yes/no, true/false or 1/0 (any case; or the labels expert/non-expert),
      read as "expert"/"non-expert".  Only the facet columns the file has are returned.  A juror has
      one label per facet: a cell left blank on some of the juror's rows takes the juror's label,
      two different labels are an error.
sheet CSV  ``juror, qid, player, looks_like_ai`` (the jurors' judgment sheets)
    * ``qid`` a question of the set; ``player`` a player's name (as for votes); ``looks_like_ai``
      0/1/true/false, empty = no mark.  One row per (juror, qid, player).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from .frames import (
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
from .options import chosen_options, option_label

_TRUE = {"1", "true"}
_FALSE = {"0", "false"}
_MAX_ROWS_LISTED = 10
_UNKNOWN_PLAYER = (
    "unknown player {!r} (no row in the answers file; a player who answered nothing needs rows with an empty answer)"
)
SHEET_COLUMNS = ("juror", "qid", "player", "looks_like_ai")


class InputError(ValueError):
    """Everything wrong with one input file; ``problems`` holds one line per problem."""

    def __init__(self, path: str | Path, problems: list[str]):
        self.problems = problems
        count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
        super().__init__(f"{count} in {path}:\n" + "\n".join(f"  {p}" for p in problems))


def read_answers(path: str | Path, questions: pd.DataFrame, ai_names: Iterable[str] = ()) -> pd.DataFrame:
    """The answers frame (``player, qid, answer, correct, kind``) of an answers CSV; see the module docstring."""
    return check_answers(_read_csv(path, ("player", "qid", "answer"), ("correct", "kind")), path, questions, ai_names)


def check_answers(
    frame: pd.DataFrame, path: str | Path, questions: pd.DataFrame, ai_names: Iterable[str] = ()
) -> pd.DataFrame:
    """The answers frame of rows read from ``path`` (strings: ``player, qid, answer, correct, kind``), checked
    as an answers CSV is (``analysis.predictions`` reads predictions files into such rows)."""
    require_columns(questions, ("qid", "type", "choices", "answer_index"), "questions")
    problems = _Problems(path)

    problems.add(frame["player"] == "", "player", "is empty")
    folded = frame["player"].str.casefold()
    spellings = frame["player"].groupby(folded).agg(lambda names: " and ".join(map(repr, dict.fromkeys(names))))
    problems.add_each(
        frame["player"].groupby(folded).transform("nunique") > 1,
        folded.map(spellings),
        "player",
        "{} differ only by case (votes and sheets match names case-insensitively)",
    )
    question = questions.assign(qid=questions["qid"].astype(str)).set_index("qid")
    known = frame["qid"].isin(question.index)
    problems.add_each(~known, frame["qid"], "qid", "unknown question {!r}")

    kind = frame["kind"].str.lower()
    problems.add_each((kind != "") & ~kind.isin(PLAYER_KINDS), frame["kind"], "kind", "must be human or ai, not {!r}")
    stated = kind.where(kind.isin(PLAYER_KINDS)).groupby(frame["player"])
    problems.add_each(
        stated.transform("nunique") > 1, frame["player"], "kind", "player {!r} is marked both human and ai"
    )
    # a kind stated on any of a player's rows holds for all of them; otherwise --ai decides
    ai_players = {name.strip().casefold(): name.strip() for name in ai_names}
    default_kind = pd.Series(
        np.where(frame["player"].str.casefold().isin(list(ai_players)), "ai", "human"), index=frame.index
    )
    kind = stated.transform("first").fillna(default_kind)
    problems.add_each(
        (default_kind == "ai") & (frame["kind"].str.lower() == "human"),
        frame["player"],
        "kind",
        "player {!r} is named by --ai but marked human here",
    )
    named = set(folded)
    for name_folded, name in ai_players.items():
        if name_folded not in named:
            problems.add_file(f"player: AI player {name!r} has no row")

    given = frame["correct"].str.lower()
    problems.add_each(
        ~given.isin(_TRUE | _FALSE | {""}), frame["correct"], "correct", "must be 0/1/true/false, not {!r}"
    )
    chosen, out_of_range = chosen_options(frame["qid"], frame["answer"], questions)
    options = (
        frame["qid"]
        .map(question["choices"].where(question["type"] == "mcq"))
        .map(lambda value: len(value) if isinstance(value, (list, tuple)) else 0)
    )
    last = (options - 1).clip(lower=0)
    problems.add_messages(
        out_of_range,
        (
            frame["answer"].map(repr)
            + " names no option of question "
            + frame["qid"].map(repr)
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
    key = frame["qid"].map(question["answer_index"].where(question["type"] == "mcq"))
    graded = pd.Series(pd.NA, index=frame.index, dtype="boolean")
    has_key = key.notna()
    graded[has_key] = (chosen[has_key] == key[has_key].astype(float)).fillna(False)
    needs_judgement = known & (given == "") & (frame["answer"] != "") & graded.isna()
    problems.add_each(
        needs_judgement,
        frame["qid"],
        "correct",
        "question {!r} is open-ended or has no key: its answers need a correct value (0/1)",
    )
    problems.add_each(
        frame.duplicated(["player", "qid"], keep=False),
        frame["player"] + " / " + frame["qid"],
        "player/qid",
        "answered twice: {}",
    )
    problems.raise_any()

    correct = given.isin(_TRUE).where(given != "", graded.fillna(False)).astype(bool)
    answers = frame.assign(correct=correct, kind=kind)[list(ANSWER_COLUMNS)]
    return answers.reset_index(drop=True)


def read_votes(path: str | Path, players: pd.DataFrame | Iterable[str]) -> pd.DataFrame:
    """The votes frame (``round, juror, vote, slot, confidence`` and the file's facet columns) of a votes CSV.

    ``players`` is the players frame (its ``name`` column is used) or the player names.  The facet
    columns (of ``group, expert, age_band, sex``, in that order) are those the file has.
    """
    names = players["name"] if isinstance(players, pd.DataFrame) else pd.Series(list(players), dtype=object)
    spelling = {str(name).casefold(): str(name) for name in names}
    problems = _Problems(path)
    frame = _read_csv(path, ("round", "juror", "vote"), ("confidence", "slot"), JUROR_FACETS)

    round_no, bad_round = _whole_numbers(frame["round"], low=1)
    problems.add(frame["round"] == "", "round", "is empty")
    problems.add_each(bad_round, frame["round"], "round", "must be a whole number >= 1, not {!r}")
    problems.add(frame["juror"] == "", "juror", "is empty")
    vote = frame["vote"].str.casefold().map(spelling)
    problems.add_each((frame["vote"] != "") & vote.isna(), frame["vote"], "vote", _UNKNOWN_PLAYER)
    confidence, bad_confidence = _whole_numbers(frame["confidence"], low=1, high=5)
    problems.add_each(bad_confidence, frame["confidence"], "confidence", "must be a whole number 1-5, not {!r}")
    slot, bad_slot = _whole_numbers(frame["slot"].where(frame["slot"] != "", "1"), low=1)
    problems.add_each(bad_slot, frame["slot"], "slot", "must be a whole number >= 1, not {!r}")

    ballot = frame["juror"] + " in round " + frame["round"]
    problems.add_each(
        frame.assign(slot=slot).duplicated(["round", "juror", "slot"], keep=False),
        ballot + ", slot " + slot.astype(str),
        "round/juror/slot",
        "more than one row for {}",
    )
    problems.add_each(
        vote.notna() & frame.assign(vote=vote).duplicated(["round", "juror", "vote"], keep=False),
        ballot + " names " + frame["vote"],
        "vote",
        "{} more than once",
    )
    facets = {}
    for facet in (name for name in JUROR_FACETS if name in frame.columns):
        labels, not_a_label = facet_labels(frame[facet], facet)
        problems.add_each(not_a_label, frame[facet], facet, f"must be {EXPERT_VALUES}, not {{!r}}")
        facets[facet], two_labels = juror_labels(labels, frame["juror"])
        problems.add_messages(two_labels, frame["juror"].map(partial(several_labels_message, facet)), facet)
    problems.raise_any()

    votes = pd.DataFrame(
        {
            "round": round_no.astype(int),
            "juror": frame["juror"],
            "vote": vote.astype(object).where(vote.notna(), None),
            "slot": slot.astype(int),
            "confidence": confidence.astype(float),
            **facets,
        }
    )
    return votes[[*VOTE_COLUMNS, *facets]].reset_index(drop=True)


def read_sheet(path: str | Path, questions: pd.DataFrame, players: pd.DataFrame | Iterable[str]) -> pd.DataFrame:
    """The judgment-sheet frame (``juror, qid, player, looks_like_ai``) of a sheet CSV.

    ``questions`` is the questions frame (its ``qid`` column is used); ``players`` the players frame
    (its ``name`` column) or the player names.  ``looks_like_ai`` is True, False or <NA> (no mark).
    """
    require_columns(questions, ("qid",), "questions")
    names = players["name"] if isinstance(players, pd.DataFrame) else pd.Series(list(players), dtype=object)
    spelling = {str(name).casefold(): str(name) for name in names}
    problems = _Problems(path)
    frame = _read_csv(path, SHEET_COLUMNS, ())

    problems.add(frame["juror"] == "", "juror", "is empty")
    problems.add_each(
        ~frame["qid"].isin(set(questions["qid"].astype(str))), frame["qid"], "qid", "unknown question {!r}"
    )
    problems.add(frame["player"] == "", "player", "is empty")
    player = frame["player"].str.casefold().map(spelling)
    problems.add_each((frame["player"] != "") & player.isna(), frame["player"], "player", _UNKNOWN_PLAYER)
    mark = frame["looks_like_ai"].str.lower()
    problems.add_each(
        ~mark.isin(_TRUE | _FALSE | {""}),
        frame["looks_like_ai"],
        "looks_like_ai",
        "must be 0/1/true/false (or empty: no mark), not {!r}",
    )
    problems.add_each(
        player.notna() & frame.assign(player=player).duplicated(["juror", "qid", "player"], keep=False),
        frame["juror"] + " on " + frame["qid"] + " / " + player.fillna(""),
        "juror/qid/player",
        "more than one row for {}",
    )
    problems.raise_any()

    looks = pd.array(mark.map(lambda m: True if m in _TRUE else False if m in _FALSE else None), dtype="boolean")
    sheet = pd.DataFrame(
        {"juror": frame["juror"], "qid": frame["qid"], "player": player.astype(object), "looks_like_ai": looks}
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
            raise InputError(self.path, problems + self._file)


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
        frame = pd.read_csv(
            path,
            dtype=str,
            keep_default_na=False,
            skip_blank_lines=False,
            encoding="utf-8-sig",
        )
    except pd.errors.EmptyDataError:
        raise InputError(path, [f"{path}: row 1: the file is empty (expected a header {','.join(required)})"]) from None
    except (OSError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise InputError(path, [f"{path}: cannot be read as UTF-8 CSV: {exc}"]) from None
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise InputError(path, [f"{path}: row 1, {c}: required column is missing" for c in missing])
    present = [c for c in if_present if c in frame.columns]
    frame = frame.reindex(columns=[*required, *optional, *present], fill_value="").fillna("")
    frame = frame.apply(lambda column: column.astype(str).str.strip())
    return frame[(frame != "").any(axis=1)]


def _whole_numbers(values: pd.Series, low: int, high: float = np.inf) -> tuple[pd.Series, pd.Series]:
    """``values`` as Int64 (<NA> where empty or invalid) and the mask of non-empty invalid cells."""
    number = pd.to_numeric(values.where(values != ""), errors="coerce")
    valid = number.notna() & (number % 1 == 0) & (number >= low) & (number <= high)
    return number.where(valid).astype("Int64"), (values != "") & ~valid
