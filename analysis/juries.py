"""Juries side by side: detection per jury, whether the juries differ, and each jury's votes per player.

The votes table carries a ``jury`` column (``analysis.tables.JURY_VOTE_COLUMNS``): ``live`` (the room, during the
session), ``displaced`` (people judging the finished session's material later) or ``ai:<model>`` (a model;
:func:`ai_jury`), so that each model is a jury of its own.  A jury's detection is the share of its cast votes naming an
AI player (abstentions are not cast votes), with a Wilson 95 % interval, per round and pooled over rounds.  Whether the
juries differ is a test on the table (AI votes, other cast votes) x jury: Fisher's exact test (two-sided) for two
juries, the chi-squared test of independence (no continuity correction) for three or more.
A round **cut short** (the live session stopped inside it, before its vote opened: the live jury never judged it) that
another jury was offered all the same is shown per round, labelled, and never pooled with the whole rounds.
Definitions: docs/analysis.md, "Comparing juries".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .tables import require_columns
from .votes import names_ai, percent, player_roster, wilson_interval

LIVE_JURY = "live"
DISPLACED_JURY = "displaced"
AI_JURY_PREFIX = "ai:"

DETECTION_COLUMNS = ("votes", "abstentions", "ai_votes", "detection_pct", "chance_pct", "ci_low", "ci_high")
ROUND_COLUMNS = ("jury", "round", "cut_short", "players", *DETECTION_COLUMNS)
POOLED_COLUMNS = ("jury", "rounds", *DETECTION_COLUMNS)
TEST_COLUMNS = ("juries", "test", "statistic", "dof", "p_value", "note")
SHARE_COLUMNS = ("jury", "round", "player", "alias", "kind", "votes", "share_pct", "chance_pct")

FISHER = "fisher_exact"
CHI_SQUARED = "chi2"


@dataclass(frozen=True)
class JuryStats:
    """The juries compared (columns: docs/analysis.md, "Comparing juries").

    ``juries``: the jury labels, live first, then displaced, then the AI juries by name
    ``rounds``: jury, round, cut_short (bool), players, votes, abstentions, ai_votes, detection_pct, chance_pct,
    ci_low, ci_high (every jury in every round, zeros included)
    ``pooled``: jury, rounds (whole rounds with a cast vote), votes, abstentions, ai_votes, detection_pct, chance_pct
    (the vote-weighted chance of its rounds), ci_low, ci_high: over the whole rounds, a round cut short left out
    ``round_tests``: round, juries, test, statistic, dof, p_value, note (one row per round; a round cut short says so
    in ``note``)
    ``pooled_test``: juries, test, statistic, dof, p_value, note (one row: the whole rounds' tables summed)
    ``shares``: jury, round, player, alias, kind, votes, share_pct (of the jury's cast votes in the round),
    chance_pct (100 / players of the round)
    """

    juries: tuple[str, ...]
    rounds: pd.DataFrame
    pooled: pd.DataFrame
    round_tests: pd.DataFrame
    pooled_test: pd.DataFrame
    shares: pd.DataFrame


def ai_jury(model: str) -> str:
    """The jury label of the AI juror(s) running ``model``."""
    return f"{AI_JURY_PREFIX}{model}"


def jury_order(labels) -> list[str]:
    """The distinct jury labels: live, displaced, then ``ai:<model>`` by name.

    Raises ValueError on a blank label or one that is none of these (a bare ``ai`` names no model).
    """
    order = []
    for label in dict.fromkeys(labels):
        if not _is_jury(label):
            raise ValueError(f"jury must be {LIVE_JURY!r}, {DISPLACED_JURY!r} or 'ai:<model>', not {label!r}")
        order.append(label)
    rank = {LIVE_JURY: 0, DISPLACED_JURY: 1}
    return sorted(order, key=lambda label: (rank.get(label, 2), label))


def jury_stats(
    votes: pd.DataFrame, players: pd.DataFrame, aliases: pd.DataFrame | None = None, cut_short: Iterable[int] = ()
) -> JuryStats:
    """Detection per jury, tests across juries and the shares per player; ``players`` is ``[name, kind]``.

    ``votes`` needs ``round, juror, vote, jury`` (``slot`` and ``confidence`` are not read).  ``cut_short``: the
    rounds cut short in the live session (labelled per round, left out of every pooled figure).  ``aliases``
    (``round, player, alias``, e.g. from aliases.csv) says who played each round under which alias; without it
    every player plays every round and ``alias`` is None.  A vote for a player not in its round, a round of the
    votes missing from ``aliases`` and a juror naming a player twice in a round are ValueErrors.
    """
    roster = player_roster(players, needs_ai=True)
    require_columns(votes, ("round", "juror", "vote", "jury"), "votes")
    blank = votes["vote"].astype("string").str.strip().eq("").fillna(False).to_numpy(dtype=bool)
    votes = votes.assign(vote=votes["vote"].mask(blank, None), jury=votes["jury"].map(_trimmed))
    juries = jury_order(votes["jury"])
    cast = votes[votes["vote"].notna()]
    names_ai(cast["vote"], roster)  # raises on a name that is no player
    named_twice = cast.duplicated(["round", "juror", "vote"])
    if named_twice.any():
        first = cast[named_twice].iloc[0]
        raise ValueError(f"juror {first['juror']!r} names {first['vote']!r} more than once in round {first['round']}")
    round_ids = np.sort(votes["round"].unique())
    lineup = _lineup(round_ids, roster, aliases)
    outside = cast.merge(lineup, left_on=["round", "vote"], right_on=["round", "player"], how="left")["kind"].isna()
    if outside.any():
        first = cast[outside.to_numpy()].iloc[0]
        raise ValueError(f"{first['vote']!r} did not play round {first['round']}")

    shares = _shares(cast, lineup, juries)
    rounds = _rounds(votes, shares, juries, round_ids, set(cut_short))
    pooled = _pooled(rounds[~rounds["cut_short"]], juries)
    round_tests = pd.DataFrame(
        [
            {"round": round_no, **_cut_short_noted(juries_differ(rows["ai_votes"], rows["votes"], rows["jury"]), rows)}
            for round_no, rows in rounds.groupby("round", sort=True)
        ],
        columns=["round", *TEST_COLUMNS],
    ).astype({"dof": "Int64"})
    pooled_test = pd.DataFrame(
        [juries_differ(pooled["ai_votes"], pooled["votes"], pooled["jury"])], columns=list(TEST_COLUMNS)
    ).astype({"dof": "Int64"})
    return JuryStats(tuple(juries), rounds, pooled, round_tests, pooled_test, shares)


def juries_differ(ai_votes, cast_votes, juries) -> dict:
    """Whether the juries' detection differs: a test on the table of (AI votes, other cast votes), one row per jury.

    ``{juries, test, statistic, dof, p_value, note}``.  Two juries: Fisher's exact test, two-sided; ``statistic``
    the sample odds ratio (first jury's odds of an AI vote over the second's), ``dof`` <NA>.  Three or more: the
    chi-squared test of independence without continuity correction, ``dof`` = juries - 1.  ``p_value`` is NaN, with
    the reason in ``note``, with fewer than two juries or when a jury has no cast votes.  When every cast vote names
    an AI (or none does) the juries cannot differ: p = 1 (chi-squared statistic 0), and ``note`` says so.
    """
    ai_votes = np.asarray(ai_votes, dtype=np.int64)
    other = np.asarray(cast_votes, dtype=np.int64) - ai_votes
    juries = list(juries)
    test = FISHER if len(juries) == 2 else CHI_SQUARED
    result = {"juries": len(juries), "test": test, "statistic": np.nan, "dof": pd.NA, "p_value": np.nan, "note": None}
    if test == CHI_SQUARED:
        result["dof"] = max(len(juries) - 1, 0)
    if len(juries) < 2:
        return {**result, "test": None, "dof": pd.NA, "note": "fewer than two juries: nothing to compare"}
    silent = [jury for jury, votes in zip(juries, ai_votes + other) if votes == 0]
    if silent:
        return {**result, "note": f"no cast votes: {', '.join(silent)}"}
    one_sided = "no cast vote names an AI" if not ai_votes.any() else None
    one_sided = one_sided or ("every cast vote names an AI" if not other.any() else None)
    table = np.column_stack([ai_votes, other])
    # scipy.stats loads slowly (votes.py avoids it): only a comparison of juries pays for it
    from scipy.stats import chi2_contingency, fisher_exact

    if test == FISHER:
        odds_ratio, p_value = fisher_exact(table, alternative="two-sided")
        return {**result, "statistic": float(odds_ratio), "p_value": float(p_value), "note": one_sided}
    if one_sided:  # an empty column has expected counts 0: nothing departs from them
        return {**result, "statistic": 0.0, "p_value": 1.0, "note": one_sided}
    statistic, p_value, dof, _ = chi2_contingency(table, correction=False)
    return {**result, "statistic": float(statistic), "dof": int(dof), "p_value": float(p_value)}


def _cut_short_noted(test: dict, rows: pd.DataFrame) -> dict:
    """A round cut short's test says so first: the live jury never judged it, and no pooled figure counts it."""
    if not rows["cut_short"].any():
        return test
    note = "round cut short in the live session: not pooled"
    return {**test, "note": f"{note}; {test['note']}" if test["note"] else note}


def _lineup(round_ids: np.ndarray, roster: pd.Series, aliases: pd.DataFrame | None) -> pd.DataFrame:
    """``round, player, alias, kind``: who played each round (every player without ``aliases``), in roster order."""
    if aliases is None:
        return pd.DataFrame(
            {
                "round": np.repeat(round_ids, len(roster)),
                "player": np.tile(roster.index.to_numpy(), len(round_ids)),
                "alias": None,
                "kind": np.tile(roster.to_numpy(), len(round_ids)),
            }
        )
    require_columns(aliases, ("round", "player", "alias"), "aliases")
    names_ai(aliases["player"], roster)  # raises on a name that is no player
    missing = sorted(set(round_ids) - set(aliases["round"]))
    if missing:
        raise ValueError(f"aliases lack round(s): {', '.join(map(str, missing))}")
    order = {name: position for position, name in enumerate(roster.index)}
    lineup = aliases[aliases["round"].isin(round_ids)][["round", "player", "alias"]]
    lineup = lineup.assign(kind=lineup["player"].map(roster), position=lineup["player"].map(order))
    return lineup.sort_values(["round", "position"]).drop(columns="position").reset_index(drop=True)


def _shares(cast: pd.DataFrame, lineup: pd.DataFrame, juries: list[str]) -> pd.DataFrame:
    """Every jury x (round, player) of the lineup: the jury's votes on the player and their share."""
    grid = pd.DataFrame({"jury": juries}).merge(lineup, how="cross")
    counts = cast.groupby(["jury", "round", "vote"]).size()
    keys = pd.MultiIndex.from_frame(grid[["jury", "round", "player"]])
    grid["votes"] = counts.reindex(keys, fill_value=0).to_numpy()
    cast_votes = grid.groupby(["jury", "round"])["votes"].transform("sum")
    players = grid.groupby(["jury", "round"])["player"].transform("size")
    return grid.assign(share_pct=percent(grid["votes"], cast_votes), chance_pct=100.0 / players.to_numpy())[
        list(SHARE_COLUMNS)
    ]


def _rounds(
    votes: pd.DataFrame, shares: pd.DataFrame, juries: list[str], round_ids: np.ndarray, cut_short: set[int]
) -> pd.DataFrame:
    keys = pd.MultiIndex.from_product([juries, round_ids], names=["jury", "round"])
    by_round = shares.assign(ai_votes=shares["votes"].where(shares["kind"] == "ai", 0), ai=shares["kind"] == "ai")
    sums = by_round.groupby(["jury", "round"]).agg(
        players=("player", "size"), votes=("votes", "sum"), ai_votes=("ai_votes", "sum"), ai=("ai", "sum")
    )
    sums = sums.reindex(keys)
    abstentions = votes["vote"].isna().groupby([votes["jury"], votes["round"]]).sum()
    ci_low, ci_high = wilson_interval(sums["ai_votes"].to_numpy(), sums["votes"].to_numpy())
    rounds = pd.DataFrame(
        {
            "jury": keys.get_level_values("jury"),
            "round": keys.get_level_values("round"),
            "cut_short": keys.get_level_values("round").isin(cut_short),
            "players": sums["players"].to_numpy(dtype=np.int64),
            "votes": sums["votes"].to_numpy(dtype=np.int64),
            "abstentions": abstentions.reindex(keys, fill_value=0).to_numpy(dtype=np.int64),
            "ai_votes": sums["ai_votes"].to_numpy(dtype=np.int64),
            "detection_pct": percent(sums["ai_votes"], sums["votes"]),
            "chance_pct": percent(sums["ai"], sums["players"]),
            "ci_low": ci_low,
            "ci_high": ci_high,
        }
    )
    return rounds[list(ROUND_COLUMNS)]


def _pooled(rounds: pd.DataFrame, juries: list[str]) -> pd.DataFrame:
    weighted = rounds.assign(
        voted=rounds["votes"] > 0, expected=rounds["votes"] * rounds["chance_pct"].fillna(0.0) / 100.0
    )
    sums = (
        weighted.groupby("jury")[["voted", "votes", "abstentions", "ai_votes", "expected"]]
        .sum()
        .reindex(juries)
        .astype({"voted": np.int64, "votes": np.int64, "abstentions": np.int64, "ai_votes": np.int64})
    )
    ci_low, ci_high = wilson_interval(sums["ai_votes"].to_numpy(), sums["votes"].to_numpy())
    return pd.DataFrame(
        {
            "jury": juries,
            "rounds": sums["voted"].to_numpy(),
            "votes": sums["votes"].to_numpy(),
            "abstentions": sums["abstentions"].to_numpy(),
            "ai_votes": sums["ai_votes"].to_numpy(),
            "detection_pct": percent(sums["ai_votes"], sums["votes"]),
            "chance_pct": percent(sums["expected"], sums["votes"]),
            "ci_low": ci_low,
            "ci_high": ci_high,
        }
    )[list(POOLED_COLUMNS)]


def _is_jury(label) -> bool:
    if not isinstance(label, str):
        return False
    return label in (LIVE_JURY, DISPLACED_JURY) or (label.startswith(AI_JURY_PREFIX) and label != AI_JURY_PREFIX)


def _trimmed(value):
    return value.strip() if isinstance(value, str) else value
