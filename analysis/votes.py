"""The jury's votes: detection per round, tallies, pass/fail under a rule, groups, jurors, confidence.

Conventions (SPEC section 4, plus the choices where it is silent):

* Every row of the votes frame is one slot of one juror in one round.  A row naming a player is a
  **cast vote** (a session with several AI players gives each juror several slots: each is a cast
  vote); a row without a name (None, NaN or blank) is an **abstention** and is kept apart.  The
  rounds are those with at least one row; ``players`` counts every player of the session, and at
  least one of them must be an AI (without one, detection and pass/fail mean nothing: ValueError).
* A juror names a player at most once per round (ValueError otherwise) and belongs to one group:
  the label on any of the juror's rows holds for all of them (a blank cell takes it too).
* **Detection** = share of cast votes (slot votes) that name an AI player (any of them).
  **Chance** = the share a blind vote would reach: number of AI players / number of players
  (1 / players with one AI).
* ``voters`` = jurors who cast at least one vote in the round.  A player's ``share_pct`` =
  100 * votes / voters (the share of voting jurors who named the player) and **majority** = one
  player was named by more than half of the voters (strictly).  With one slot per juror voters =
  cast votes, so this is the plain share of the votes; with several slots the shares of a round add
  up to more than 100 %.  ``top_player`` is the single most-voted player, None when several share
  the top or nobody voted; ``majority_player`` is the top player when that player has a majority
  (None when several players with a majority share the top, which only several slots allow).
* ``p_value`` = one-sided exact binomial test of ``ai_votes`` out of ``votes`` against chance,
  P(X >= k) = ``scipy.special.bdtrc(k - 1, n, chance)`` (1 for k = 0; equal to
  ``scipy.stats.binomtest(..., alternative="greater")``).  It treats votes as independent,
  which one juror's several slots in a round (distinct names) and, in the pooled overall test, one
  juror's votes in different rounds are not quite: read those p-values as approximate.
* ``ci_low``/``ci_high``: Wilson score 95 % interval of detection, in percent.
* Pass rules (``ai_passed``; NA for a round without cast votes):
  ``human-tie`` - the most-voted human drew at least as many votes as the most-voted AI (with
  several AI players the round is judged by the best-detected AI: all pass or none);
  ``chance`` - the binomial test is not significant (p >= alpha);
  ``threshold`` - detection <= ``threshold_pct``.
* ``groups``: pooled over rounds, cast votes of jurors with a group label only (every cast vote of
  such a juror, so ``groups`` and ``jurors`` agree).
  ``jurors``: rounds with at least one cast vote, cast votes, hits (votes naming an AI) and
  hit rate = hits / cast votes.
* Confidence 1-5 is read as the probability that the vote is right, linearly from a blind guess to
  certainty: p = chance + (1 - chance) * (c - 1) / 4 (0.2, 0.4, ... 1.0 with five players and one
  AI).  ``brier`` = mean (p - right)^2 over cast votes with a confidence; means and Brier are None
  without any; ``votes`` counts the cast votes with a confidence.
* A round where everyone abstained has no detection, verdict or majority: it is counted apart in
  the summary (``rounds_without_votes``), not among the rounds passed, detected or without majority.
* Undefined numbers (a round where everyone abstained) are NaN in frames and None in dicts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import bdtrc  # scipy.special loads in a third of the time scipy.stats takes

from .frames import PLAYER_KINDS, require_columns

PASS_RULES = ("human-tie", "chance", "threshold")

_Z95 = 1.959963984540054  # standard normal quantile at 0.975
_CONFIDENCE_SCALE = (1.0, 5.0)


@dataclass(frozen=True)
class VoteStats:
    """Everything the reports say about the jury's votes (definitions in the module docstring).

    ``rounds``: round, players, votes, voters, abstentions, ai_votes, detection_pct, chance_pct,
    majority, majority_player, top_player, ai_passed, p_value, ci_low, ci_high
    ``tally``: round, player, kind, votes, share_pct (every player in every round, zeros included)
    ``groups``: group, votes, ai_votes, detection_pct, ci_low, ci_high
    ``jurors``: juror, group, rounds, votes, hits, hit_rate_pct
    ``confidence``: votes (cast votes with a confidence), mean_right, mean_wrong, brier
    ``summary``: rounds (all), rounds_with_votes, rounds_without_votes, rounds_passed,
    mean_detection_pct, overall_votes, overall_detection_pct, overall_ci ([low, high]),
    overall_p_value, majority_rounds, mean_hit_rate_pct (mean over jurors who cast a vote)
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
    roster = _roster(players, needs_ai=True)
    require_columns(votes, ("round", "juror", "vote"), "votes")
    blank = votes["vote"].astype("string").str.strip().eq("").fillna(False).to_numpy(dtype=bool)
    votes = votes.assign(vote=votes["vote"].mask(blank, None), group=_juror_groups(votes))
    cast = votes[votes["vote"].notna()]
    cast = cast.assign(right=_names_ai(cast["vote"], roster))
    named_twice = cast.duplicated(["round", "juror", "vote"])
    if named_twice.any():
        first = cast[named_twice].iloc[0]
        raise ValueError(f"juror {first['juror']!r} names {first['vote']!r} more than once in round {first['round']}")
    chance = float((roster == "ai").mean())

    rounds, tally = _rounds(votes, cast, roster, chance, pass_rule, alpha, threshold_pct)
    jurors = _jurors(votes, cast)
    overall_votes, overall_hits = len(cast), int(cast["right"].sum())
    overall_low, overall_high = _wilson(np.array([overall_hits]), np.array([overall_votes]))
    with_votes = int((rounds["votes"] > 0).sum())
    summary = {
        "rounds": len(rounds),
        "rounds_with_votes": with_votes,
        "rounds_without_votes": len(rounds) - with_votes,
        "rounds_passed": int(rounds["ai_passed"].sum()),
        "mean_detection_pct": _number(rounds["detection_pct"].mean()),
        "overall_votes": overall_votes,
        "overall_detection_pct": _number(_percent(overall_hits, overall_votes)),
        "overall_ci": [_number(overall_low[0]), _number(overall_high[0])],
        "overall_p_value": _number(_p_greater(np.array([overall_hits]), np.array([overall_votes]), chance)[0]),
        "majority_rounds": int(rounds["majority"].sum()),
        "mean_hit_rate_pct": _number(jurors["hit_rate_pct"].mean()),
    }
    return VoteStats(
        pass_rule, alpha, threshold_pct, rounds, tally,
        _groups(cast), jurors, _confidence(cast, chance), summary,
    )


def exposure(sheet: pd.DataFrame, players: pd.DataFrame, answers: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per question of the judgment sheet: ``qid, marks, ai_marks, exposure_pct`` [, ``chance_pct``].

    ``sheet`` has one row per (juror, qid, player) with ``looks_like_ai`` (bool; missing = no mark);
    ``exposure_pct`` = share of "looks like the AI" marks that fell on an AI player (NaN without
    marks).  With ``answers`` (the answers frame) ``chance_pct`` is the share blind marks would
    reach: AI answers / all answers to the question (non-empty answers, the ones the jury read;
    NaN without any).  Questions are listed in order of first appearance.  ``players`` must
    include an AI player.
    """
    roster = _roster(players, needs_ai=True)
    require_columns(sheet, ("juror", "qid", "player", "looks_like_ai"), "sheet")
    marked = sheet["looks_like_ai"].astype("boolean").fillna(False).to_numpy(dtype=bool)
    on_ai = _names_ai(sheet["player"], roster) & marked
    qids = sheet["qid"].astype(str)
    per_question = pd.DataFrame({"qid": qids, "marks": marked, "ai_marks": on_ai}).groupby(
        "qid", sort=False
    ).sum().astype(int).reset_index()
    per_question = per_question.assign(exposure_pct=_percent(per_question["ai_marks"], per_question["marks"]))
    if answers is None:
        return per_question
    require_columns(answers, ("player", "qid", "answer"), "answers")
    shown = answers[answers["answer"].fillna("").astype(str).str.strip() != ""]
    shown_ai = pd.Series(_names_ai(shown["player"], roster), index=shown.index)
    by_question = shown_ai.groupby(shown["qid"].astype(str)).agg(["sum", "size"])
    ai_answers = per_question["qid"].map(by_question["sum"]).fillna(0)
    all_answers = per_question["qid"].map(by_question["size"]).fillna(0)
    return per_question.assign(chance_pct=_percent(ai_answers, all_answers))


def _rounds(votes, cast, roster, chance, pass_rule, alpha, threshold_pct) -> tuple[pd.DataFrame, pd.DataFrame]:
    round_ids = np.sort(votes["round"].unique())
    counts = (
        cast.groupby(["round", "vote"]).size().unstack(fill_value=0)
        .reindex(index=round_ids, columns=roster.index, fill_value=0)
    ).to_numpy()
    is_ai = (roster == "ai").to_numpy()
    cast_votes = counts.sum(axis=1)
    # jurors who cast at least one vote: the denominator of shares and majorities (one slot: = cast votes)
    voters = cast.groupby("round")["juror"].nunique().reindex(round_ids, fill_value=0).to_numpy()
    ai_votes = counts[:, is_ai].sum(axis=1)
    detection = _percent(ai_votes, cast_votes)
    p_value = _p_greater(ai_votes, cast_votes, chance)
    ci_low, ci_high = _wilson(ai_votes, cast_votes)

    most = counts.max(axis=1, initial=0)
    leader = roster.index.to_numpy()[counts.argmax(axis=1)]
    single_leader = (counts == most[:, None]).sum(axis=1) == 1
    majority = most > voters / 2
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
        "voters": voters,
        "abstentions": votes["vote"].isna().groupby(votes["round"]).sum().reindex(round_ids).to_numpy(),
        "ai_votes": ai_votes,
        "detection_pct": detection,
        "chance_pct": 100.0 * chance,
        "majority": majority,
        # object, not str: None (rather than NaN) where no single player leads
        # with several slots two players can both pass half of the voters: then nobody is named
        "majority_player": pd.Series(np.where(majority & single_leader, leader, None), dtype=object),
        "top_player": pd.Series(np.where(single_leader & voted, leader, None), dtype=object),
        "ai_passed": pd.array(np.where(voted, passed, None), dtype="boolean"),
        "p_value": p_value,
        "ci_low": ci_low,
        "ci_high": ci_high,
    })
    with np.errstate(invalid="ignore", divide="ignore"):
        shares = 100.0 * counts / voters[:, None]
    tally = pd.DataFrame({
        "round": np.repeat(round_ids, len(roster)),
        "player": np.tile(roster.index.to_numpy(), len(round_ids)),
        "kind": np.tile(roster.to_numpy(), len(round_ids)),
        "votes": counts.ravel(),
        "share_pct": shares.ravel(),
    })
    return rounds, tally


def _juror_groups(votes: pd.DataFrame) -> pd.Series:
    """Each row's group as the juror's one label (None without any); raises on a juror in two groups."""
    if "group" not in votes.columns:
        return pd.Series(None, index=votes.index, dtype=object)
    labels = votes["group"].astype(object).where(votes["group"].notna(), None)
    labels = labels.where(labels.astype("string").str.strip().ne("").fillna(False), None)
    per_juror = labels.groupby(votes["juror"])
    several = per_juror.nunique()
    if (several > 1).any():
        raise ValueError(f"juror {several.index[several > 1][0]!r} is in more than one group")
    group = per_juror.transform("first")
    return group.astype(object).where(group.notna(), None)


def _groups(cast: pd.DataFrame) -> pd.DataFrame:
    grouped = cast.dropna(subset=["group"]).groupby("group")["right"].agg(votes="size", ai_votes="sum")
    grouped = grouped.reset_index().astype({"votes": int, "ai_votes": int})
    ci_low, ci_high = _wilson(grouped["ai_votes"].to_numpy(), grouped["votes"].to_numpy())
    return grouped.assign(
        detection_pct=_percent(grouped["ai_votes"], grouped["votes"]), ci_low=ci_low, ci_high=ci_high
    )


def _jurors(votes: pd.DataFrame, cast: pd.DataFrame) -> pd.DataFrame:
    jurors = pd.DataFrame({"juror": votes["juror"].drop_duplicates().to_numpy()})
    group = jurors["juror"].map(votes["group"].groupby(votes["juror"]).first())
    jurors["group"] = group.astype(object).where(group.notna(), None)  # None, as in the votes frame
    by_juror = cast.groupby("juror")
    jurors["rounds"] = jurors["juror"].map(by_juror["round"].nunique()).fillna(0).astype(int)
    jurors["votes"] = jurors["juror"].map(by_juror.size()).fillna(0).astype(int)
    jurors["hits"] = jurors["juror"].map(by_juror["right"].sum()).fillna(0).astype(int)
    jurors["hit_rate_pct"] = _percent(jurors["hits"], jurors["votes"])
    return jurors


def _confidence(cast: pd.DataFrame, chance: float) -> dict:
    if "confidence" not in cast.columns:
        return {"votes": 0, "mean_right": None, "mean_wrong": None, "brier": None}
    rated = cast.dropna(subset=["confidence"])
    level = rated["confidence"].astype(float)
    low, high = _CONFIDENCE_SCALE
    if ((level < low) | (level > high)).any():
        raise ValueError(f"confidence must lie between {low:g} and {high:g}")
    right = rated["right"].to_numpy(dtype=bool)
    probability = chance + (1.0 - chance) * (level.to_numpy() - low) / (high - low)
    return {
        "votes": len(rated),
        "mean_right": _number(level[right].mean()),
        "mean_wrong": _number(level[~right].mean()),
        "brier": _number(np.mean((probability - right) ** 2)) if len(rated) else None,
    }


def _roster(players: pd.DataFrame, needs_ai: bool = False) -> pd.Series:
    """Player kind indexed by name, checked (with ``needs_ai``: at least one AI player)."""
    require_columns(players, ("name", "kind"), "players")
    roster = pd.Series(players["kind"].to_numpy(), index=pd.Index(players["name"], name="player"), name="kind")
    if roster.empty:
        raise ValueError("players is empty")
    if not roster.index.is_unique:
        raise ValueError(f"duplicate player name(s): {', '.join(map(str, roster.index[roster.index.duplicated()]))}")
    if not roster.isin(PLAYER_KINDS).all():
        raise ValueError(f"player kind must be human or ai, not {roster[~roster.isin(PLAYER_KINDS)].iloc[0]!r}")
    if needs_ai and not (roster == "ai").any():
        raise ValueError(
            f"the players ({', '.join(map(str, roster.index))}) include no AI player: detection, chance and "
            "pass/fail need at least one player of kind 'ai'"
        )
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
    """One-sided exact binomial P(X >= successes | trials, chance); NaN without trials.

    P(X >= k) = bdtrc(k - 1, n, p), the regularised incomplete beta function; P(X >= 0) = 1.
    """
    successes, trials = np.asarray(successes, dtype=np.int64), np.asarray(trials, dtype=np.int64)
    tail = np.where(successes > 0, bdtrc(np.maximum(successes - 1, 0), trials, chance), 1.0)
    return np.where(trials > 0, tail, np.nan)


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
