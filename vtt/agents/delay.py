"""``--typing human``: a seeded, humanlike delay before an agent's answer is sent.

A person reads the question, thinks, then taps an option or types the answer.  The delay is a
think time (log-normal, median 3 s) plus the time to act: 0.5-2 s to find and tap an option, or the
answer's length at 2.5-5.5 characters a second.  It is drawn from ``random.Random(f"{seed}:{question
id}")``, so a restarted agent waits as long for the same question, and the runner caps it by the
time left before the deadline.  The reveal hides answer times from the jury anyway: this is for the
host's screen and the logs, so that the AI's answer is not always the first to land.
"""

from __future__ import annotations

import math
import random


class HumanTyping:
    def __init__(self, seed: int):
        self.seed = seed

    def seconds(self, question_id: int, answer_text: str, mcq: bool) -> float:
        chance = random.Random(f"{self.seed}:{question_id}")
        think = chance.lognormvariate(math.log(3.0), 0.5)
        if mcq:
            act = chance.uniform(0.5, 2.0)
        else:
            act = len(answer_text) / chance.uniform(2.5, 5.5)
        return think + act

    def describe(self) -> dict[str, object]:
        return {"typing": "human", "seed": self.seed}
