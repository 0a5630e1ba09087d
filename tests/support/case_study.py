"""The 2021 VTT case study's votes, reconstructed: five players, 16 jurors (6 of them AI experts), five rounds."""

from __future__ import annotations

import numpy as np
import pandas as pd

PLAYERS = pd.DataFrame(
    {
        "name": ["Kid4", "Kid10", "Teen14", "Adult20", "AI"],
        "kind": ["human", "human", "human", "human", "ai"],
    }
)
JURORS = [f"J{n:02d}" for n in range(1, 17)]
EXPERTS = set(JURORS[:6])  # 6 of the 16 jurors were AI experts

# Who each juror named, round by round (None = abstained).  AI votes always come from the first jurors:
#   round 1: AI 10 (J01-J10), Adult20 4, Teen14 2            -> 62.5 %, AI majority
#   round 2: AI 12 (J01-J12), Kid10 4                        -> 75 %,   AI majority
#   round 3: AI 6 (J01-J06), Teen14 7, Adult20 3             -> 37.5 %, no majority, a human on top
#   round 4: AI 5 (J01-J05), Kid4 2, Adult20 2, 7 abstain    -> 5/9 = 55.6 %, AI majority (5 > 4.5)
#   round 5: AI 2 (J01-J02), Kid4 14                         -> 12.5 %, human majority
CASE_STUDY_ROUNDS = {
    1: ["AI"] * 10 + ["Adult20"] * 4 + ["Teen14"] * 2,
    2: ["AI"] * 12 + ["Kid10"] * 4,
    3: ["AI"] * 6 + ["Teen14"] * 7 + ["Adult20"] * 3,
    4: ["AI"] * 5 + ["Kid4"] * 2 + ["Adult20"] * 2 + [None] * 7,
    5: ["AI"] * 2 + ["Kid4"] * 14,
}


def case_study_votes() -> pd.DataFrame:
    """Confidence: 4 on every right vote, 2 on wrong ones, 5 on the wrong votes of round 5."""
    rows = []
    for round_no, named in CASE_STUDY_ROUNDS.items():
        for juror, vote in zip(JURORS, named):
            confidence = np.nan if vote is None else 4.0 if vote == "AI" else 5.0 if round_no == 5 else 2.0
            group = "expert" if juror in EXPERTS else "non-expert"
            rows.append((round_no, juror, vote, 1, confidence, group))
    return pd.DataFrame(rows, columns=["round", "juror", "vote", "slot", "confidence", "group"])
