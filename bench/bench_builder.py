"""Time the set builder on a benchmark-sized synthetic bank (CogME tags skewed as in DramaQA).

python bench/bench_builder.py [--questions 16000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from analysis.builder import build_set, element_skew
from analysis.taxonomy import ELEMENTS, Module


def skewed_bank(count: int, seed: int = 0) -> pd.DataFrame:
    """Tags drawn with Character / Identity / Recall far more likely than the rest."""
    rng = np.random.default_rng(seed)

    def draw(module: Module, favourite: str, size: int) -> tuple[str, ...]:
        names = ELEMENTS[module]
        weights = np.array([6.0 if n == favourite else 1.0 for n in names])
        return tuple(rng.choice(names, size=size, replace=False, p=weights / weights.sum()))

    rows = []
    for i in range(count):
        targets = draw(Module.TARGET, "Character", int(rng.integers(1, 4)))
        rows.append(
            {
                "qid": f"q{i}",
                "type": "mcq" if i % 2 else "open",
                "clip": "shot" if rng.random() < 0.6 else "scene",
                "targets": targets,
                "key_target": targets[0],
                "contents": draw(Module.CONTENT, "Identity", int(rng.integers(1, 4))),
                "thinking": draw(Module.THINKING, "Recall", 1)[0],
            }
        )
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=16_000)
    args = parser.parse_args()
    bank = skewed_bank(args.questions)
    times = []
    for _ in range(3):
        started = time.perf_counter()
        built = build_set(bank, 30, 5, mcq=15, shot=17, seed=0)
        times.append(time.perf_counter() - started)
    print(
        f"build_set: {args.questions:,}-question bank -> 30 questions (15 mcq, 17 shot), 5 rounds: "
        f"best of 3 {min(times) * 1000:.0f} ms"
    )
    print(f"element skew (mean CV per module): bank {element_skew(bank):.3f}, set {element_skew(built.questions):.3f}")


if __name__ == "__main__":
    main()
