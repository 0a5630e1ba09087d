"""Time CogME profiles (5,000 questions x 20 players) and vote statistics (1,000 jurors x 5 rounds).

Run: ``.venv/bin/python bench/bench_profiles.py``.  Prints the best of three runs; asserts nothing.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from analysis.cogme import METHODS, profiles
from analysis.tables import QUESTION_COLUMNS
from analysis.taxonomy import ELEMENTS, Module
from analysis.votes import vote_stats

SEED = 2021
QUESTIONS, PLAYERS = 5_000, 20
JURORS, ROUNDS, VOTE_PLAYERS = 1_000, 5, 5
REPEATS = 3


def random_questions(rng: np.random.Generator, count: int) -> pd.DataFrame:
    """Valid tags: 1-3 TARGET (a key target on about two questions in three), 1-3 CONTENT, one THINKING."""
    targets_pool, contents_pool = ELEMENTS[Module.TARGET], ELEMENTS[Module.CONTENT]
    targets = [tuple(rng.choice(targets_pool, rng.integers(1, 4), replace=False)) for _ in range(count)]
    contents = [tuple(rng.choice(contents_pool, rng.integers(1, 4), replace=False)) for _ in range(count)]
    keys = [t[0] if rng.random() < 2 / 3 else None for t in targets]
    return pd.DataFrame(
        {
            "qid": [f"q{n}" for n in range(count)],
            "question": "?",
            "type": "mcq",
            "choices": [["a", "b", "c", "d", "e"]] * count,
            "answer": "a",
            "answer_index": pd.array([0] * count, dtype="Int64"),
            "clip": "shot",
            "category": None,
            "round": pd.array([1] * count, dtype="Int64"),
            "targets": targets,
            "key_target": keys,
            "contents": contents,
            "thinking": rng.choice(ELEMENTS[Module.THINKING], count),
        }
    )[list(QUESTION_COLUMNS)]


def random_answers(rng: np.random.Generator, questions: pd.DataFrame, players: int) -> pd.DataFrame:
    names = [f"P{n:02d}" for n in range(players)]
    return pd.DataFrame(
        {
            "player": np.repeat(names, len(questions)),
            "qid": np.tile(questions["qid"].to_numpy(), players),
            "answer": "a",
            "correct": rng.random(players * len(questions)) < 0.6,
            "kind": np.repeat(["ai"] + ["human"] * (players - 1), len(questions)),
        }
    )


def random_votes(rng: np.random.Generator, players: pd.DataFrame) -> pd.DataFrame:
    rows = JURORS * ROUNDS
    named = rng.choice(np.append(players["name"].to_numpy(), None), rows, p=[0.3, 0.15, 0.15, 0.15, 0.15, 0.1])
    return pd.DataFrame(
        {
            "round": np.repeat(np.arange(1, ROUNDS + 1), JURORS),
            "juror": np.tile([f"J{n:04d}" for n in range(JURORS)], ROUNDS),
            "vote": named,
            "slot": 1,
            "confidence": rng.integers(1, 6, rows).astype(float),
            "group": np.tile(rng.choice(["expert", "non-expert"], JURORS), ROUNDS),
        }
    )


def best_of(repeats: int, run) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    rng = np.random.default_rng(SEED)
    questions = random_questions(rng, QUESTIONS)
    answers = random_answers(rng, questions, PLAYERS)
    print(f"profiles: {QUESTIONS:,} questions x {PLAYERS} players = {len(answers):,} answers (best of {REPEATS})")
    for method in METHODS:
        seconds = best_of(REPEATS, lambda method=method: profiles(questions, answers, method))
        print(f"  {method:<14} {seconds * 1000:8.1f} ms")

    players = pd.DataFrame({"name": ["AI", "H1", "H2", "H3", "H4"], "kind": ["ai"] + ["human"] * 4})
    votes = random_votes(rng, players)
    seconds = best_of(REPEATS, lambda: vote_stats(votes, players))
    print(f"vote_stats: {JURORS:,} jurors x {ROUNDS} rounds = {len(votes):,} votes (best of {REPEATS})")
    print(f"  {'human-tie':<14} {seconds * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
