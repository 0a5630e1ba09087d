"""How far a transcript is from what was said: the word error rate (WER).

WER = (substitutions + deletions + insertions) / words said, the word-level edit distance over the reference's
length, so it can exceed 1 when a recogniser adds words.  Words are compared in lower case, without punctuation
(apostrophes inside a word stay: "don't" is one word).
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[\w']+")


def words(text: str) -> list[str]:
    return [word.strip("'") for word in _WORD.findall(text.lower()) if word.strip("'")]


def edit_distance(reference: list[str], hypothesis: list[str]) -> int:
    """The fewest substitutions, deletions and insertions that turn ``hypothesis`` into ``reference``."""
    previous = list(range(len(hypothesis) + 1))
    for i, said in enumerate(reference, 1):
        current = [i]
        for j, heard in enumerate(hypothesis, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (said != heard)))
        previous = current
    return previous[-1]


def word_error_rate(reference: str, hypothesis: str) -> float:
    """The WER of ``hypothesis`` against ``reference`` (which must hold a word)."""
    said = words(reference)
    if not said:
        raise ValueError("the reference has no word")
    return edit_distance(said, words(hypothesis)) / len(said)


__all__ = ["edit_distance", "word_error_rate", "words"]
