"""The analysis as one JSON-ready dict: plain Python types, unrounded percentages, None where undefined."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .cogme import Profiles
from .juries import JuryStats
from .votes import VoteStats

_ELEMENT_FIELDS = ("module", "element", "questions", "correct", "accuracy_pct", "score_pct")


def analysis_json(profiles: Profiles, stats: VoteStats | None = None) -> dict:
    """``{method, pass_rule, players: [...], rounds: [...], mean_detection_pct}``.

    ``json.dumps(..., allow_nan=False)`` accepts the result: NaN and <NA> become None.  Without
    ``stats`` (no votes) ``pass_rule`` and ``mean_detection_pct`` are None and ``rounds`` is empty.
    """
    elements = {
        player: [_plain_record(row, _ELEMENT_FIELDS) for row in rows.to_dict("records")]
        for player, rows in profiles.elements.groupby("player", sort=False)
    }
    players = [
        {
            "name": _plain(row["player"]),
            "kind": _plain(row["kind"]),
            **_plain_record(row, ("questions", "correct", "accuracy_pct", "element_sd")),
            "elements": elements.get(row["player"], []),
        }
        for row in profiles.players.to_dict("records")
    ]
    return {
        "method": profiles.method,
        "pass_rule": stats.pass_rule if stats else None,
        "players": players,
        "rounds": _rounds(stats) if stats else [],
        "mean_detection_pct": stats.summary["mean_detection_pct"] if stats else None,
    }


def _rounds(stats: VoteStats) -> list[dict]:
    tallies = {
        round_no: {_plain(player): _plain(votes) for player, votes in zip(rows["player"], rows["votes"])}
        for round_no, rows in stats.tally.groupby("round", sort=False)
    }
    return [
        {
            **_plain_record(row, ("round", "votes", "abstentions")),
            "tally": tallies[row["round"]],
            **_plain_record(row, ("detection_pct", "majority", "ai_passed", "p_value")),
            "ci95": [_plain(row["ci_low"]), _plain(row["ci_high"])],
        }
        for row in stats.rounds.to_dict("records")
    ]


def _plain_record(row: dict, fields: tuple[str, ...]) -> dict:
    return {field: _plain(row[field]) for field in fields}


def _plain(value):
    """A JSON-safe Python value: numpy scalars unwrapped, NaN and <NA> as None."""
    if value is None or value is pd.NA:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def juries_json(stats: JuryStats) -> dict:
    """``{juries, rounds, pooled, round_tests, pooled_test, shares}``: the tables of :class:`JuryStats` as lists of
    records (``pooled_test`` one record), NaN, <NA> and an infinite odds ratio as None."""

    def records(table: pd.DataFrame) -> list[dict]:
        return [_plain_record(row, tuple(table.columns)) for row in table.to_dict("records")]

    return {
        "juries": list(stats.juries),
        "rounds": records(stats.rounds),
        "pooled": records(stats.pooled),
        "round_tests": records(stats.round_tests.replace([np.inf, -np.inf], np.nan)),
        "pooled_test": records(stats.pooled_test.replace([np.inf, -np.inf], np.nan))[0],
        "shares": records(stats.shares),
    }
