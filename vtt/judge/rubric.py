"""The judge's prompts (``prompts.toml``) and the reading of its replies.

A prompt is identified by the SHA-256 of its template (system text, user text and its dimension's task): a
suggestion made with another template, or another model, is another suggestion.

A player's answer is data, never instructions: the question, the reference answer and the answer each go between
tags (``<player_answer>`` ... ``</player_answer>``) with ``&``, ``<`` and ``>`` escaped, so no text can close its tag
or open another, and the system prompt says what the tags hold.

Replies are read as MovieCORE's judge gives them, a Python dictionary string ``{'score': N}`` (JSON too), perhaps
in a code fence, after a ``<think>`` block or prose. Only the reply's last score counts, and only when nothing but
punctuation follows it: a reply that quotes an answer's ``{'score': 5}`` and then gives its own is read by its own,
one that gives a score and then goes on is ambiguous. A reply that is ambiguous, over-long
(:data:`vtt.model_calls.replies.MAX_READ`) or holds no whole score in the dimension's range is unread
(:class:`vtt.model_calls.replies.UnreadReply`), never guessed at. JSON is read strictly
(:mod:`vtt.protocol.strict_json`), and a Python literal is held to the same rule: a last dictionary holding NaN,
Infinity, a number such as 1e999 or nesting too deep makes the reply unread, saying so.
"""

from __future__ import annotations

import ast
import hashlib
import html
import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model_calls.replies import UnreadReply, ends_at, said_of, shown
from ..models import RUBRIC_DIMENSIONS
from ..protocol import strict_json

PROMPTS_FILE = Path(__file__).with_name("prompts.toml")
VERDICT = "verdict"  # the correct (1) / incorrect (0) call
DIMENSIONS = (VERDICT, *RUBRIC_DIMENSIONS)  # in the order they are asked and shown
MAX_FIELD = 4000  # characters of a question, reference or answer put in a prompt
SCORE = re.compile(r"\{[^{}]*\}")


@dataclass(frozen=True)
class Prompt:
    dimension: str
    low: int
    high: int
    system: str
    user: str  # with {question} {reference} {answer} {task} {low} {high}
    task: str

    @property
    def sha256(self) -> str:
        template = json.dumps([self.dimension, self.low, self.high, self.system, self.user, self.task])
        return hashlib.sha256(template.encode()).hexdigest()

    def messages(self, question: str, reference: str, answer: str) -> list[dict[str, str]]:
        text = self.user.format(
            question=_field(question),
            reference=_field(reference),
            answer=_field(answer),
            task=self.task,
            low=self.low,
            high=self.high,
        )
        return [{"role": "system", "content": self.system}, {"role": "user", "content": text}]

    def read(self, reply: str) -> int:
        """The score ending ``reply``; UnreadReply when it is not one in ``low``..``high`` (module docstring)."""
        said = said_of(reply)
        scores = [(match, value) for match in SCORE.finditer(said) if (value := _score_of(match.group(0))) is not _NONE]
        if not scores:
            raise UnreadReply(f"no {{'score': N}} in the reply {shown(said)}")
        last, score = scores[-1]
        if isinstance(score, Refused):
            raise UnreadReply(f"the reply's score is refused: {score.reason}")
        if not ends_at(said, last.end()):
            raise UnreadReply(f"the reply does not end with its score: {shown(said)}")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or score != int(score):
            raise UnreadReply(f"the score {score!r} is not a whole number")
        if not self.low <= score <= self.high:
            raise UnreadReply(f"the score {int(score)} is outside {self.low}-{self.high}")
        return int(score)


def load_prompts(path: Path = PROMPTS_FILE) -> dict[str, Prompt]:
    """Every dimension's prompt, in ``DIMENSIONS`` order; ValueError naming what the file lacks."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    prompts = {}
    for dimension in DIMENSIONS:
        section = data.get(dimension)
        if not isinstance(section, dict) or not {"low", "high", "task"} <= set(section):
            raise ValueError(f"{path}: [{dimension}] needs low, high and task")
        prompts[dimension] = Prompt(
            dimension, int(section["low"]), int(section["high"]), data["system"], data["user"], section["task"]
        )
    return prompts


_NONE = object()  # a dictionary without a score, or no dictionary


@dataclass(frozen=True)
class Refused:
    """A dictionary the strict reader refuses (NaN, Infinity, 1e999, nesting too deep): unread, for ``reason``."""

    reason: str


def _score_of(text: str) -> Any:
    """The score of the dictionary ``text`` (JSON, read strictly, or a Python literal), Refused, or _NONE."""
    try:
        value = strict_json.loads(text)
    except strict_json.JsonRefused as refused:
        return Refused(str(refused))
    except ValueError:
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return _NONE
    if not isinstance(value, dict) or "score" not in value:
        return _NONE
    problem = strict_json.refusal(value)
    return Refused(problem) if problem else value["score"]


def _field(text: str) -> str:
    """One line of at most MAX_FIELD characters with &, < and > escaped: nothing in it can close its tag."""
    text = " ".join((text or "").split())
    return html.escape(text[:MAX_FIELD], quote=False) if text else "(none)"
