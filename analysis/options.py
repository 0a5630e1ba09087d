"""Which option of a multiple-choice question an answer names: by its text, its letter or its index.

One rule for grading (:mod:`analysis.inputs`) and display (the Q&A sheet of :mod:`analysis.session_report`):

* the option's text, case- and space-insensitive, wins (so an option that reads "b" or "3" is
  chosen by that text, not as a letter or an index); when two options read the same, the first;
* otherwise a single letter names an option by position (A = first, case-insensitive) and a whole
  number by its 0-based index;
* a letter or number beyond the question's options names no option and is **out of range** (the
  reader reports it as a problem); any other text names no option (a wrong answer).

Only ``mcq`` questions are considered (answers to open questions name no option); the range is
checked only when the question lists its options.
"""

from __future__ import annotations

import string

import numpy as np
import pandas as pd

from .tables import require_columns

_LETTER_INDEX = {letter: index for index, letter in enumerate(string.ascii_lowercase)}


def chosen_options(qids: pd.Series, answers: pd.Series, questions: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """For each (qid, answer) pair: the 0-based option chosen (float, NaN for none) and the out-of-range mask.

    ``qids`` and ``answers`` share an index; ``questions`` needs ``qid, type, choices``.
    """
    require_columns(questions, ("qid", "type", "choices"), "questions")
    mcq = questions[questions["type"] == "mcq"]
    choices = pd.Series(mcq["choices"].to_numpy(), index=mcq["qid"].astype(str).to_numpy())
    choices = choices[~choices.index.duplicated()]
    option_count = choices.map(lambda value: len(value) if isinstance(value, (list, tuple)) else 0)
    options = choices[option_count > 0].explode()
    by_text = (
        pd.DataFrame(
            {
                "qid": options.index.to_numpy(),
                "text": normalised(options.astype("string")).to_numpy(),
                "index": options.groupby(level=0).cumcount().to_numpy(),
            }
        )
        .dropna()
        .drop_duplicates(["qid", "text"])
    )  # the first option wins if two read the same

    qids = qids.astype(str)
    answer = normalised(answers.fillna("").astype(str))
    asked = pd.DataFrame({"qid": qids.to_numpy(), "text": answer.to_numpy()})
    chosen_text = pd.Series(
        asked.merge(by_text, on=["qid", "text"], how="left")["index"].to_numpy(dtype=float), index=answers.index
    )
    by_position = answer.map(_LETTER_INDEX).astype(float)
    number = answer.where(answer.str.fullmatch(r"\d+").fillna(False).astype(bool))
    by_position = by_position.fillna(pd.to_numeric(number, errors="coerce").astype(float))

    count = qids.map(option_count).astype(float)  # NaN: not an mcq question
    positional = chosen_text.isna() & by_position.notna() & count.notna()
    out_of_range = positional & (count > 0) & (by_position >= count)
    chosen = chosen_text.fillna(by_position.where(positional & ~out_of_range))
    return chosen.where(count.notna(), np.nan), out_of_range.astype(bool)


def option_label(index: int) -> str:
    """``A`` for option 0, ... ``Z``; beyond that the 0-based number."""
    return string.ascii_uppercase[index] if 0 <= index < 26 else str(index)


def normalised(text: pd.Series) -> pd.Series:
    """Case- and space-insensitive form of an answer or option."""
    return text.str.casefold().str.split().str.join(" ")
