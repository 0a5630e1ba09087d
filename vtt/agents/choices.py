"""Which option of a multiple-choice question an answer names.

Two readers:

* :func:`option_index`: an answer given as data (a predictions file, a Python backend's return
  value), read as ``vtt analyze`` reads it (:mod:`analysis.options`): the option's text (case- and
  space-insensitive) wins, then a single letter (A = first), then a whole number (the 0-based
  index); a letter or number beyond the options, or any other text, names no option.
* :func:`option_in_reply`: a language model's free reply to a prompt that lists the options as
  ``A. ...``, ``B. ...``: a letter ("B", "(B)", "B. a red dress", "Answer: B", "**B**"), an option's
  text (the whole reply or, alone among the options, inside it), or a number counted from 1 as a
  person numbers options.  None when the reply names no option, or names several.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence

LETTERS = string.ascii_uppercase


class NoOption(ValueError):
    """An answer that names no option; the message says why (for the host and the log)."""


def normalised(text: str) -> str:
    return " ".join(str(text).casefold().split())


def option_index(answer: object, choices: Sequence[str]) -> int:
    """The 0-based option ``answer`` names (an int is the index itself); raises :class:`NoOption`."""
    count = len(choices)
    if isinstance(answer, bool) or not isinstance(answer, (int, str)):
        raise NoOption(f"expected an option index, letter or text, not {type(answer).__name__} {answer!r}")
    if isinstance(answer, int):
        if not 0 <= answer < count:
            raise NoOption(f"option index {answer} is beyond the {count} options (0 to {count - 1})")
        return answer
    text = normalised(answer)
    if not text:
        raise NoOption("the answer is empty")
    for index, choice in enumerate(choices):
        if normalised(choice) == text:
            return index
    if len(text) == 1 and text in string.ascii_lowercase:
        index = string.ascii_lowercase.index(text)
    elif re.fullmatch(r"\d+", text):
        index = int(text)
    else:
        raise NoOption(f"{answer!r} is none of the {count} options (by text, letter or 0-based index)")
    if index >= count:
        raise NoOption(f"{answer!r} is beyond the {count} options")
    return index


_THINKING = re.compile(r"<think>.*?</think>", re.S | re.I)
_MARKUP = re.compile(r"[*_`]+")
_LETTER_PATTERNS = (
    re.compile(r"^\W*\(?\[?([A-Z])\)?\]?\W*$", re.I),  # "B", "(b)", "B.", "[B]"
    re.compile(r"^\s*\(?([A-Z])(?:\)|\.|:|\])\s"),  # "B. A red dress", "(B) a red dress"
    # "Answer: B", "the option is (C)"
    re.compile(r"\b(?:answer|option|choice)\b(?:\s+is)?\s*[:\-=]?\s*\(?\[?([A-Z])\b(?!['’])", re.I),
)


def option_in_reply(reply: str, choices: Sequence[str]) -> int | None:
    """The 0-based option a model's free reply picks, or None (see the module's doc)."""
    count = len(choices)
    text = _MARKUP.sub("", _THINKING.sub("", reply or "")).strip()
    if not text or not count:
        return None
    whole = normalised(text.rstrip("."))
    named = [index for index, choice in enumerate(choices) if normalised(choice) == whole]
    if named:
        return named[0]
    for pattern in _LETTER_PATTERNS:
        found = pattern.search(text)
        if found:
            letter = found.group(1).upper()
            keyword = pattern is _LETTER_PATTERNS[2]  # "the answer is a ...": an article, not option A
            if LETTERS.index(letter) < count and not (keyword and found.group(1).islower()):
                return LETTERS.index(letter)
    number = re.fullmatch(r"\W*(\d+)\W*", text)
    if number and 1 <= int(number.group(1)) <= count:
        return int(number.group(1)) - 1
    inside = {
        index
        for index, choice in enumerate(choices)
        if normalised(choice) and re.search(rf"(?<!\w){re.escape(normalised(choice))}(?!\w)", normalised(text))
    }
    if len(inside) == 1:
        return inside.pop()
    return None


def lettered(choices: Sequence[str]) -> str:
    """The options as a prompt lists them: ``A. ...`` one a line."""
    return "\n".join(f"{LETTERS[index] if index < 26 else index + 1}. {choice}" for index, choice in enumerate(choices))
