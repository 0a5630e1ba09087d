"""The jury's votes: detection per round, tallies, pass/fail under a rule, groups, jurors, confidence.

Conventions (SPEC section 4, plus the choices where it is silent):

* Every row of the votes frame is one slot of one juror in one round.  A row naming a player is a
  **cast vote** (a session with several AI players gives each juror several slots: each is a cast
  vote); a row without a name (None, NaN or blank) is an **abstention** and is kept apart.  The
  rounds are those with at least one row; ``players`` counts every player of the session.
* **Detection** = share of cast votes that name an AI player (any of them).  **Chance** = the share
  a blind vote would reach: number of AI players / number of players (1 / players with one AI).
* **Majority** = one player drew more than half of the cast votes (strictly).  ``top_player`` is the
  single most-voted player, None when several share the top or nobody voted.
* ``p_value`` = one-sided exact binomial test of ``ai_votes`` out of ``votes`` against chance
  (equal to ``scipy.stats.binomtest(..., alternative="greater")``).  It treats votes as independent,
  which one juror's several slots in a round (distinct names) and, in the pooled overall test, one
  juror's votes in different rounds are not quite: read those p-values as approximate.
* ``ci_low``/``ci_high``: Wilson score 95 % interval of detection, in percent.
* Pass rules (``ai_passed``; NA for a round without cast votes):
  ``human-tie`` - the most-voted human drew at least as many votes as the most-voted AI (with
  several AI players the round is judged by the best-detected AI: all pass or none);
  ``chance`` - the binomial test is not significant (p >= alpha);
  ``threshold`` - detection <= ``threshold_pct``.
* ``groups``: pooled over rounds, cast votes of jurors with a group label only.
  ``jurors``: rounds with at least one cast vote, cast votes, hits (votes naming an AI) and
  hit rate = hits / cast votes.
* Confidence 1-5 is read as the probability that the vote is right, linearly from a blind guess to
  certainty: p = chance + (1 - chance) * (c - 1) / 4 (0.2, 0.4, ... 1.0 with five players and one
  AI).  ``brier`` = mean (p - right)^2 over cast votes with a confidence; means and Brier are None
  without any.
* Undefined numbers (a round where everyone abstained) are NaN in frames and None in dicts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import binom

from .frames import PLAYER_KINDS, require_columns

PASS_RULES = ("human-tie", "chance", "threshold")

_Z95 = 1.959963984540054  # standard normal quantile at 0.975
_CONFIDENCE_SCALE = (1.0, 5.0)


@dataclass(frozen=True)
class VoteStats:
    """Everything the reports say about the jury's votes (definitions in the module docstring).

    ``rounds``: round, players, votes, abstentions, ai_votes, detection_pct, chance_pct, majority,
    majority_player, top_player, ai_passed, p_value, ci_low, ci_high
    ``tally``: round, player, kind, votes, share_pct (every player in every round, zeros included)
    ``groups``: group, votes, ai_votes, detection_pct, ci_low, ci_high
    ``jurors``: juror, group, rounds, votes, hits, hit_rate_pct
    ``confidence``: mean_right, mean_wrong, brier
    ``summary``: rounds, rounds_passed, mean_detection_pct, overall_votes, overall_detection_pct,
    overall_ci ([low, high]), overall_p_value, majority_rounds
    """

    pass_rule: str
    alpha: float
    threshold_pct: float
    rounds: pd.DataFrame
    tally: pd.DataFrame
    groups: pd.DataFrame
    jurors: pd.DataFrame
    confidence: dict
    summary: dict


def vote_stats(
    votes: pd.DataFrame,
    players: pd.DataFrame,
    pass_rule: str = "human-tie",
    alpha: float = 0.05,
    threshold_pct: float = 70.0,
) -> VoteStats:
    """Statistics of a session's "who is the AI?" votes; ``players`` is a frame ``[name, kind]``.

    ``votes`` needs ``round, juror, vote``; ``slot``, ``confidence`` and ``group`` are optional.
    """
    if pass_rule not in PASS_RULES:
        raise ValueError(f"unknown pass rule {pass_rule!r}; choose one of {', '.join(PASS_RULES)}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, not {alpha}")
    roster = _roster(players)
    require_columns(votes, ("round", "juror", "vote"), "votes")
    blank = votes["vote"].astype("string").str.strip().eq("").fillna(False).to_numpy(dtype=bool)
    votes = votes.assign(vote=votes["vote"].mask(blank, None))
    cast = votes[votes["vote"].notna()]
    cast = cast.assign(right=_names_ai(cast["vote"], roster))
    chance = float((roster == "ai").mean())

    rounds, tally = _rounds(votes, cast, roster, chance, pass_rule, alpha, threshold_pct)
    overall_votes, overall_hits = len(cast), int(cast["right"].sum())
    overall_low, overall_high = _wilson(np.array([overall_hits]), np.array([overall_votes]))
    summary = {
        "rounds": len(rounds),
        "rounds_passed": int(rounds["ai_passed"].sum()),
        "mean_detection_pct": _number(rounds["detection_pct"].mean()),
        "overall_votes": overall_votes,
        "overall_detection_pct": _number(_percent(overall_hits, overall_votes)),
        "overall_ci": [_number(overall_low[0]), _number(overall_high[0])],
        "overall_p_value": _number(_p_greater(np.array([overall_hits]), np.array([overall_votes]), chance)[0]),
        "majority_rounds": int(rounds["majority"].sum()),
    }
    return VoteStats(
        pass_rule, alpha, threshold_pct, rounds, tally,
        _groups(cast), _jurors(votes, cast), _confidence(cast, chance), summary,
    )


def exposure(sheet: pd.DataFrame, players: pd.DataFrame) -> pd.DataFrame:
    """Per question of the judgment sheet: ``qid, marks, ai_marks, exposure_pct``.

    ``sheet`` has one row per (juror, qid, player) with ``looks_like_ai`` (bool; missing = no mark);
    ``exposure_pct`` = share of "looks like the AI" marks that fell on an AI player (NaN without
    marks).  Questions are listed in order of first appearance.
    """
    roster = _roster(players)
    require_columns(sheet, ("juror", "qid", "player", "looks_like_ai"), "sheet")
    marked = sheet["looks_like_ai"].astype("boolean").fillna(False).to_numpy(dtype=bool)
    on_ai = _names_ai(sheet["player"], roster) & marked
    per_question = pd.DataFrame({"qid": sheet["qid"], "marks": marked, "ai_marks": on_ai}).groupby(
        "qid", sort=False
    ).sum().astype(int).reset_index()
    return per_question.assign(exposure_pct=_percent(per_question["ai_marks"], per_question["marks"]))


def _rounds(votes, cast, roster, chance, pass_rule, alpha, threshold_pct) -> tuple[pd.DataFrame, pd.DataFrame]:
    round_ids = np.sort(votes["round"].unique())
    counts = (
        cast.groupby(["round", "vote"]).size().unstack(fill_value=0)
        .reindex(index=round_ids, columns=roster.index, fill_value=0)
    ).to_numpy()
    is_ai = (roster == "ai").to_numpy()
    cast_votes = counts.sum(axis=1)
    ai_votes = counts[:, is_ai].sum(axis=1)
    detection = _percent(ai_votes, cast_votes)
    p_value = _p_greater(ai_votes, cast_votes, chance)
    ci_low, ci_high = _wilson(ai_votes, cast_votes)

    most = counts.max(axis=1, initial=0)
    leader = roster.index.to_numpy()[counts.argmax(axis=1)]
    single_leader = (counts == most[:, None]).sum(axis=1) == 1
    majority = most > cast_votes / 2
    if pass_rule == "human-tie":
        passed = counts[:, ~is_ai].max(axis=1, initial=0) >= counts[:, is_ai].max(axis=1, initial=0)
    elif pass_rule == "chance":
        passed = p_value >= alpha
    else:
        passed = detection <= threshold_pct
    voted = cast_votes > 0

    rounds = pd.DataFrame({
        "round": round_ids,
        "players": len(roster),
        "votes": cast_votes,
        "abstentions": votes["vote"].isna().groupby(votes["round"]).sum().reindex(round_ids).to_numpy(),
        "ai_votes": ai_votes,
        "detection_pct": detection,
        "chance_pct": 100.0 * chance,
        "majority": majority,
        # object, not str: None (rather than NaN) where no single player leads
        "majority_player": pd.Series(np.where(majority, leader, None), dtype=object),
        "top_player": pd.Series(np.where(single_leader & voted, leader, None), dtype=object),
        "ai_passed": pd.array(np.where(voted, passed, None), dtype="boolean"),
        "p_value": p_value,
        "ci_low": ci_low,
        "ci_high": ci_high,
    })
    with np.errstate(invalid="ignore", divide="ignore"):
        shares = 100.0 * counts / cast_votes[:, None]
    tally = pd.DataFrame({
        "round": np.repeat(round_ids, len(roster)),
        "player": np.tile(roster.index.to_numpy(), len(round_ids)),
        "kind": np.tile(roster.to_numpy(), len(round_ids)),
        "votes": counts.ravel(),
        "share_pct": shares.ravel(),
    })
    return rounds, tally


def _groups(cast: pd.DataFrame) -> pd.DataFrame:
    if "group" not in cast.columns:
        cast = cast.assign(group=None)
    grouped = cast.dropna(subset=["group"]).groupby("group")["right"].agg(votes="size", ai_votes="sum")
    grouped = grouped.reset_index().astype({"votes": int, "ai_votes": int})
    ci_low, ci_high = _wilson(grouped["ai_votes"].to_numpy(), grouped["votes"].to_numpy())
    return grouped.assign(
        detection_pct=_percent(grouped["ai_votes"], grouped["votes"]), ci_low=ci_low, ci_high=ci_high
    )


def _jurors(votes: pd.DataFrame, cast: pd.DataFrame) -> pd.DataFrame:
    groups = votes["group"] if "group" in votes.columns else pd.Series(None, index=votes.index, dtype=object)
    jurors = pd.DataFrame({"juror": votes["juror"].drop_duplicates().to_numpy()})
    group = jurors["juror"].map(groups.groupby(votes["juror"]).first())
    jurors["group"] = group.astype(object).where(group.notna(), None)  # None, as in the votes frame
    by_juror = cast.groupby("juror")
    jurors["rounds"] = jurors["juror"].map(by_juror["round"].nunique()).fillna(0).astype(int)
    jurors["votes"] = jurors["juror"].map(by_juror.size()).fillna(0).astype(int)
    jurors["hits"] = jurors["juror"].map(by_juror["right"].sum()).fillna(0).astype(int)
    jurors["hit_rate_pct"] = _percent(jurors["hits"], jurors["votes"])
    return jurors


def _confidence(cast: pd.DataFrame, chance: float) -> dict:
    if "confidence" not in cast.columns:
        return {"mean_right": None, "mean_wrong": None, "brier": None}
    rated = cast.dropna(subset=["confidence"])
    level = rated["confidence"].astype(float)
    low, high = _CONFIDENCE_SCALE
    if ((level < low) | (level > high)).any():
        raise ValueError(f"confidence must lie between {low:g} and {high:g}")
    right = rated["right"].to_numpy(dtype=bool)
    probability = chance + (1.0 - chance) * (level.to_numpy() - low) / (high - low)
    return {
        "mean_right": _number(level[right].mean()),
        "mean_wrong": _number(level[~right].mean()),
        "brier": _number(np.mean((probability - right) ** 2)) if len(rated) else None,
    }


def _roster(players: pd.DataFrame) -> pd.Series:
    """Player kind indexed by name, checked."""
    require_columns(players, ("name", "kind"), "players")
    roster = pd.Series(players["kind"].to_numpy(), index=pd.Index(players["name"], name="player"), name="kind")
    if roster.empty:
        raise ValueError("players is empty")
    if not roster.index.is_unique:
        raise ValueError(f"duplicate player name(s): {', '.join(map(str, roster.index[roster.index.duplicated()]))}")
    if not roster.isin(PLAYER_KINDS).all():
        raise ValueError(f"player kind must be human or ai, not {roster[~roster.isin(PLAYER_KINDS)].iloc[0]!r}")
    return roster


def _names_ai(names: pd.Series, roster: pd.Series) -> np.ndarray:
    """Whether each name is an AI player; raises on a name that is not a player."""
    kinds = names.map(roster)
    unknown = names[kinds.isna()]
    if len(unknown):
        raise ValueError(f"unknown player(s): {', '.join(map(str, unknown.unique()))}")
    return (kinds == "ai").to_numpy(dtype=bool)


def _percent(part, whole) -> np.ndarray:
    """100 * part / whole, NaN where whole is 0."""
    part, whole = np.asarray(part, dtype=float), np.asarray(whole, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(whole > 0, 100.0 * part / whole, np.nan)


def _p_greater(successes: np.ndarray, trials: np.ndarray, chance: float) -> np.ndarray:
    """One-sided exact binomial P(X >= successes | trials, chance); NaN without trials."""
    return np.where(trials > 0, binom.sf(successes - 1, trials, chance), np.nan)


def _wilson(successes: np.ndarray, trials: np.ndarray, z: float = _Z95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval in percent; NaN without trials."""
    n = np.asarray(trials, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.asarray(successes, dtype=float) / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # clip: rounding can push a bound a hair outside [0, 100] at 0 % or 100 % detection
    return np.clip(100.0 * (centre - half), 0.0, 100.0), np.clip(100.0 * (centre + half), 0.0, 100.0)


def _number(value) -> float | None:
    """A plain float, or None for NaN."""
    return None if pd.isna(value) else float(value)
