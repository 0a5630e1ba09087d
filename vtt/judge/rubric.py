"""The judge's prompts (``prompts.toml``) and the reading of its replies.

A prompt is identified by the SHA-256 of its template (system text, user text and its dimension's task): a
suggestion made with another template, or another model, is another suggestion. Replies are read as MovieCORE's
judge gives them, a Python dictionary string ``{'score': N}`` (JSON too), perhaps wrapped in prose or a code fence;
a reply with no whole score in the dimension's range is unread (``UnreadReply``), never guessed at.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..models import RUBRIC_DIMENSIONS

PROMPTS_FILE = Path(__file__).with_name("prompts.toml")
VERDICT = "verdict"  # the correct (1) / incorrect (0) call
DIMENSIONS = (VERDICT, *RUBRIC_DIMENSIONS)  # in the order they are asked and shown
MAX_FIELD = 4000  # characters of a question, reference or answer put in a prompt


class UnreadReply(ValueError):
    """A reply without a score the prompt allows; the message says what was wrong."""


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
        """The score in ``reply``; UnreadReply when it holds none in ``low``..``high``."""
        said = re.sub(r"<think>.*?</think>", "", reply or "", flags=re.S | re.I).strip()
        score = _score_in(said)
        if score is None:
            raise UnreadReply(f"no {{'score': N}} in the reply {_shown(said)}")
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


def _score_in(said: str) -> Any:
    for match in re.finditer(r"\{[^{}]*\}", said):
        for parse in (ast.literal_eval, json.loads):
            try:
                value = parse(match.group(0))
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            if isinstance(value, dict) and "score" in value:
                return value["score"]
    return None


def _field(text: str) -> str:
    text = " ".join((text or "").split())
    return text[:MAX_FIELD] if text else "(none)"


def _shown(said: str) -> str:
    return json.dumps(" ".join(said.split())[:200], ensure_ascii=False)
