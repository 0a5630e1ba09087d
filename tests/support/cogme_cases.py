"""The CogME worked examples (CogME 2022, Figure 2) as tables, shared by the CogME and results tests."""

from __future__ import annotations

import pandas as pd

from analysis.tables import QUESTION_COLUMNS


def questions_table(rows: list[tuple]) -> pd.DataFrame:
    """A questions table from ``(qid, targets, key_target, contents, thinking)`` rows (mcq, 5 options, answer A)."""
    table = pd.DataFrame(
        {
            "qid": [r[0] for r in rows],
            "question": [f"question {r[0]}" for r in rows],
            "type": "mcq",
            "choices": [["alpha", "beta", "gamma", "delta", "epsilon"] for _ in rows],
            "answer": "alpha",
            "answer_index": pd.array([0] * len(rows), dtype="Int64"),
            "clip": "shot",
            "category": None,
            "round": pd.array([1] * len(rows), dtype="Int64"),
            "targets": [tuple(r[1]) for r in rows],
            "key_target": [r[2] for r in rows],
            "contents": [tuple(r[3]) for r in rows],
            "thinking": [r[4] for r in rows],
        }
    )
    return table[list(QUESTION_COLUMNS)]


# The five tagged examples of CogME 2022, Figure 2.
WORKED_EXAMPLES = [
    ("1", ["Character", "Object"], "Object", ["Identity"], "Recall"),
    ("2", ["Character", "Behavior"], "Character", ["Identity"], "Recognition"),
    ("3", ["Character", "Emotion"], "Emotion", ["Feature"], "Reasoning"),
    ("4", ["Character", "Event"], "Event", ["Sequence"], "Recognition"),
    ("5", ["Character", "Conversation", "Emotion"], "Conversation", ["Context", "Motivation"], "Reasoning"),
]


def worked_questions() -> pd.DataFrame:
    return questions_table(WORKED_EXAMPLES)


def worked_answers() -> pd.DataFrame:
    """Player A (human) right on 1, 2, 4 and wrong on 3, 5; player B (ai) right on 1, 3, wrong on 5,
    no answer to 2 and 4."""
    return pd.DataFrame(
        {
            "player": ["A"] * 5 + ["B"] * 3,
            "qid": ["1", "2", "3", "4", "5", "1", "3", "5"],
            "answer": ["alpha"] * 8,
            "correct": [True, True, False, True, False, True, True, False],
            "kind": ["human"] * 5 + ["ai"] * 3,
        }
    )
