"""Seeded behaviour of simulated people: how long they think, what they write, how they vote.

Every bot draws from its own ``random.Random`` seeded by the run's seed and the bot's name, so a
run with the same seed makes the same choices in the same order (timing on a busy machine may
still interleave them differently).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

NOTES = (
    "answers too evenly",
    "sounds like a child",
    "very literal",
    "gets the feelings right",
    "too fluent for a kid",
    "misses the point of the scene",
    "short and unsure",
    "names every detail",
    "같은 말을 반복함",
    "감정을 잘 읽음",
    "너무 정확해서 의심스러움",
)
REASONS = (
    "too fluent",
    "never hesitates",
    "answers like a textbook",
    "odd word choice",
    "gut feeling",
    "답이 너무 매끄러움",
)
OPEN_ANSWERS = {
    "human": (
        "Because she was sad about her father.",
        "He wanted to say sorry but could not.",
        "I think they were angry at each other.",
        "She hid the letter so nobody would see it.",
        "엄마가 걱정돼서 그랬어요.",
        "I don't know, maybe he was tired?",
    ),
    "ai": (
        "She hides the letter because she fears her mother's reaction.",
        "He is apologising indirectly; his tone shows regret.",
        "The two characters are in conflict over the inheritance.",
        "She feels guilty about the accident, so she avoids him.",
    ),
}


@dataclass(frozen=True)
class Habits:
    """How a crowd of bots behaves; the defaults make a lively but orderly session."""

    pace: float = 1.0  # multiplies every think time (0.1: a fast test; 3: a slow, realistic room)
    note_share: float = 0.8  # share of revealed answers a juror writes a sheet line about
    typing_saves: float = 0.5  # chance a sheet line is saved twice (a draft while typing, then the whole)
    abstain: float = 0.03  # chance a juror abstains in a round
    change_vote: float = 0.1  # chance a juror changes the vote once
    refresh: float = 0.05  # chance, per juror and round, of reloading the page before voting
    drop: float = 0.05  # chance, per juror and round, of losing the network for a moment before voting
    change_answer: float = 0.1  # chance a player answers again before answering closes


class Behaviour:
    def __init__(self, seed: int, who: str, habits: Habits):
        self.random = random.Random(f"{seed}:{who}")
        self.habits = habits

    def think(self, low: float, high: float) -> float:
        return self.random.uniform(low, high) * self.habits.pace

    def chance(self, probability: float) -> bool:
        return self.random.random() < probability

    def note(self) -> str:
        return self.random.choice(NOTES)

    def likeness(self) -> int:
        return self.random.randint(1, 5)

    def confidence(self) -> int:
        return self.random.randint(1, 5)

    def reason(self) -> str | None:
        return self.random.choice(REASONS) if self.chance(0.6) else None

    def suspects(self, aliases: list[str], likeness: dict[str, int], count: int) -> list[str]:
        """The ``count`` aliases that seemed least human on this juror's sheet (ties broken at random)."""
        ranked = sorted(aliases, key=lambda alias: (likeness.get(alias, 3), self.random.random()))
        return ranked[:count]

    def choice(self, options: int) -> int:
        return self.random.randrange(options)

    def open_answer(self, kind: str) -> str:
        return self.random.choice(OPEN_ANSWERS["ai" if kind == "ai" else "human"])
