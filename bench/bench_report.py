"""Time ``analysis.session_report.write_reports`` on a case-study-sized session.

30 questions x 5 players (4 humans, 1 AI) x 16 jurors x 5 rounds, as in the VTT case study; best of 3.
Run: ``.venv/bin/python bench/bench_report.py [out_dir]`` (the PDFs are kept there for a look).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.cogme import profiles
from analysis.session_report import write_reports
from analysis.tables import QUESTION_COLUMNS
from analysis.taxonomy import ELEMENTS, Module
from analysis.votes import vote_stats

PLAYERS = (
    ("민준 (4 y)", "human"),
    ("Seo-yeon (10 y)", "human"),
    ("Ji-ho (14 y)", "human"),
    ("Adult (20+ y)", "human"),
    ("VTT agent", "ai"),
)
SKILL = {"human": (0.35, 0.55, 0.7, 0.85), "ai": (0.6,)}
TARGETS, CONTENTS, THINKING = ELEMENTS[Module.TARGET], ELEMENTS[Module.CONTENT], ELEMENTS[Module.THINKING]


def synthetic_session(n_questions: int = 30, n_jurors: int = 16, n_rounds: int = 5, seed: int = 7):
    """Random but plausible questions, graded answers and votes frames (see ``analysis.tables``)."""
    rng = np.random.default_rng(seed)
    rows = []
    for index in range(n_questions):
        targets = tuple(rng.choice(TARGETS, size=rng.integers(1, 4), replace=False))
        is_mcq = index % 2 == 0
        choices = [f"option {c} for question {index + 1}" for c in "abcde"] if is_mcq else []
        rows.append(
            {
                "qid": f"q{index + 1:02d}",
                "question": f"Why does Haeyoung1 look at Dokyung in clip {index + 1}?",
                "type": "mcq" if is_mcq else "open",
                "choices": choices,
                "answer": choices[0] if is_mcq else "Because she misses him.",
                "answer_index": 0 if is_mcq else None,
                "clip": "shot" if index < n_questions * 17 // 30 else "scene",
                "category": None,
                "round": index * n_rounds // n_questions + 1,
                "targets": targets,
                "key_target": targets[0],
                "contents": tuple(rng.choice(CONTENTS, size=rng.integers(1, 3), replace=False)),
                "thinking": THINKING[index % 3],
            }
        )
    questions = pd.DataFrame(rows).astype({"answer_index": "Int64", "round": "Int64"})[list(QUESTION_COLUMNS)]

    human_skill = iter(SKILL["human"])
    answers = []
    for player, kind in PLAYERS:
        skill = SKILL["ai"][0] if kind == "ai" else next(human_skill)
        for question in questions.itertuples():
            correct = bool(rng.random() < skill)
            said = question.answer if correct else "She is hungry, I think."
            answers.append({"player": player, "qid": question.qid, "answer": said, "correct": correct, "kind": kind})
    answers = pd.DataFrame(answers)

    # Jurors lean towards the AI (weight 3 against 1 per human) and sometimes abstain (None).
    choices = [name for name, _ in PLAYERS] + [None]
    weights = np.array([3.0 if kind == "ai" else 1.0 for _, kind in PLAYERS] + [0.3])
    votes = [
        {
            "round": r,
            "juror": f"J{j + 1:02d}",
            "vote": rng.choice(choices, p=weights / weights.sum()),
            "slot": 1,
            "confidence": float(rng.integers(1, 6)),
            "group": "expert" if j < 6 else "non-expert",
        }
        for r in range(1, n_rounds + 1)
        for j in range(n_jurors)
    ]
    players = pd.DataFrame(PLAYERS, columns=["name", "kind"])
    return questions, answers, pd.DataFrame(votes), players


def main() -> None:
    out_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="vtt-bench-"))
    questions, answers, votes, players = synthetic_session()
    profile = profiles(questions, answers, "frontiers2022")
    stats = vote_stats(votes, players, "chance")
    timings = []
    for _ in range(3):
        start = time.perf_counter()
        written = write_reports(
            out_dir,
            questions=questions,
            answers=answers,
            profiles=profile,
            stats=stats,
            title="VTT case-study-sized benchmark",
            session_info={"drama": "Another Miss Oh"},
        )
        timings.append(time.perf_counter() - start)
    print(f"write_reports, 30 questions x 5 players x 16 jurors x 5 rounds -> {out_dir}")
    print("runs (s): " + ", ".join(f"{t:.3f}" for t in timings) + f"; best {min(timings):.3f} s (target < 2 s)")
    for name, path in written.items():
        print(f"  {name:22s} {path.stat().st_size / 1024:8.1f} KiB")


if __name__ == "__main__":
    main()
