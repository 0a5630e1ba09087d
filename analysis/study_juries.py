"""A study's juries side by side: each jury's detection per session and pooled over the sessions, and whether the
juries differ (:mod:`analysis.juries` per session; definitions: docs/studies.md, "Juries").

A jury is its label (``live``, ``displaced``, ``ai:<model>``), so the AI juries of one model pool across sessions.
Per session a jury's row is :func:`analysis.juries.jury_stats`' pooled row of that session; the study's row of a jury
(session :data:`analysis.study.ALL`) sums its sessions' votes (chance: the vote-weighted mean of the sessions'
chances, Wilson 95 % interval).  The test across juries is :func:`analysis.juries.juries_differ` per session and on the
pooled rows.  A study whose sessions only the live jury judged has no rows (and the PDF no section).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .juries import POOLED_COLUMNS, TEST_COLUMNS, juries_differ, jury_order, jury_stats
from .study import ALL, StudyData
from .votes import percent, wilson_interval

STUDY_JURY_COLUMNS = ("session", *POOLED_COLUMNS)
STUDY_JURY_TEST_COLUMNS = ("session", *TEST_COLUMNS)
STUDY_JURY_CSVS = ("juries.csv", "juries_differ.csv")  # written only when a session has more than the live jury


def study_juries(data: StudyData) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(juries, tests)``: ``session, jury, rounds, votes, abstentions, ai_votes, detection_pct, chance_pct, ci_low,
    ci_high`` per session with votes and per jury pooled (session ``all``), and ``session, juries, test, statistic,
    dof, p_value, note`` per session and pooled; both empty when no session has a jury other than the live one."""
    empty = (pd.DataFrame(columns=list(STUDY_JURY_COLUMNS)), pd.DataFrame(columns=list(STUDY_JURY_TEST_COLUMNS)))
    votes = data.jury_votes
    if votes is None or not len(votes) or set(votes["jury"]) <= {"live"}:
        return empty
    per_session, tests = [], []
    for code in data.codes:
        own = data.of(votes, code)
        if not len(own):
            continue
        aliases = data.of(data.aliases, code) if data.aliases is not None else None
        # a round cut short in the live session (vtt's jury_votes mark it) is never pooled with the whole rounds
        cut_short = sorted(set(own.loc[own["cut_short"].astype(bool), "round"])) if "cut_short" in own else []
        stats = jury_stats(own, data.roster(code), aliases if aliases is not None and len(aliases) else None, cut_short)
        per_session.append(stats.pooled.assign(session=code))
        tests.append(stats.pooled_test.assign(session=code))
    sessions = pd.concat(per_session, ignore_index=True)
    juries = jury_order(sessions["jury"])
    expected = sessions["votes"] * sessions["chance_pct"].fillna(0.0) / 100
    sums = (
        sessions.assign(expected=expected)
        .groupby("jury")[["rounds", "votes", "abstentions", "ai_votes", "expected"]]
        .sum()
        .reindex(juries)
    )
    ci_low, ci_high = wilson_interval(sums["ai_votes"].to_numpy(), sums["votes"].to_numpy())
    pooled = pd.DataFrame(
        {
            "session": ALL,
            "jury": juries,
            "rounds": sums["rounds"].to_numpy(dtype=np.int64),
            "votes": sums["votes"].to_numpy(dtype=np.int64),
            "abstentions": sums["abstentions"].to_numpy(dtype=np.int64),
            "ai_votes": sums["ai_votes"].to_numpy(dtype=np.int64),
            "detection_pct": percent(sums["ai_votes"], sums["votes"]),
            "chance_pct": percent(sums["expected"], sums["votes"]),
            "ci_low": ci_low,
            "ci_high": ci_high,
        }
    )
    # per_session is in the study's order already; within a session, juries in jury_order
    rank = {jury: position for position, jury in enumerate(juries)}
    order = {code: position for position, code in enumerate(data.codes)}
    sessions = sessions.assign(order=sessions["session"].map(order), rank=sessions["jury"].map(rank))
    sessions = sessions.sort_values(["order", "rank"], kind="stable").drop(columns=["order", "rank"])
    table = pd.concat([sessions, pooled], ignore_index=True)[list(STUDY_JURY_COLUMNS)]
    pooled_test = pd.DataFrame(
        [{"session": ALL, **juries_differ(pooled["ai_votes"], pooled["votes"], pooled["jury"])}]
    ).astype({"dof": "Int64"})
    tests_table = pd.concat([*tests, pooled_test], ignore_index=True)[list(STUDY_JURY_TEST_COLUMNS)]
    return table.reset_index(drop=True), tests_table
