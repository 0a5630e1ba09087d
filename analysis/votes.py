"""The jury's votes: detection per round and per AI, tallies, pass/fail under a rule, groups, jurors, confidence.

Each row of the votes table is one slot of one juror in one round: a row naming a player is a cast vote, a row
without a name an abstention.  Detection is the share of cast votes naming an AI player, tested against chance (AI
players / players) with a one-sided exact binomial test and a Wilson 95 % interval; each round passes or fails under
the session's rule (``human-tie``, ``chance`` or ``threshold``), and ``ai_rounds`` judges each AI alone.  A
session needs an AI player, and a juror names a player at most once per round (ValueError otherwise).  Undefined
numbers (a round where everyone abstained) are NaN in tables and None in dicts.  Every definition (shares out of
the voters, majority, several AI players, juror facets, confidence and Brier score): docs/analysis.md, "Votes".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import bdtrc  # scipy.special loads in a third of the time scipy.stats takes

from .tables import (
    EXPERT_VALUES,
    JUROR_FACETS,
    PLAYER_KINDS,
    facet_labels,
    juror_labels,
    require_columns,
    several_labels_message,
)

PASS_RULES = ("human-tie", "chance", "threshold")

_Z95 = 1.959963984540054  # standard normal quantile at 0.975
_CONFIDENCE_SCALE = (1.0, 5.0)


@dataclass(frozen=True)
class VoteStats:
    """Everything the reports say about the jury's votes (definitions in the module docstring).

    ``rounds``: round, players, votes, voters, abstentions, ai_votes, detection_pct, chance_pct,
    majority, majority_player, top_player, ai_passed, p_value, ci_low, ci_high
    ``tally``: round, player, kind, votes, share_pct (every player in every round, zeros included)
    ``ai_rounds``: round, player, votes, share_pct, detection_pct, passed (every AI player in every
    round, in the players' order)
    ``groups``: facet, group, jurors, votes, ai_votes, detection_pct, ci_low, ci_high
    ``jurors``: juror, then a column per facet present (group, expert, age_band, sex), rounds,
    votes, hits, hit_rate_pct
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
    ai_rounds: pd.DataFrame
    groups: pd.DataFrame
    jurors: pd.DataFrame
    confidence: dict
    summary: dict

    @property
    def facets(self) -> tuple[str, ...]:
        """The juror facets the votes carry (their columns in ``jurors``), in report order."""
        return tuple(facet for facet in JUROR_FACETS if facet in self.jurors.columns)


def vote_stats(
    votes: pd.DataFrame,
    players: pd.DataFrame,
    pass_rule: str = "human-tie",
    alpha: float = 0.05,
    threshold_pct: float = 70.0,
) -> VoteStats:
    """Statistics of a session's "who is the AI?" votes; ``players`` is a table ``[name, kind]``.

    ``votes`` needs ``round, juror, vote``; ``slot``, ``confidence`` and the juror facets
    ``group``, ``expert``, ``age_band``, ``sex`` are optional.
    """
    if pass_rule not in PASS_RULES:
        raise ValueError(f"unknown pass rule {pass_rule!r}; choose one of {', '.join(PASS_RULES)}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, not {alpha}")
    roster = player_roster(players, needs_ai=True)
    require_columns(votes, ("round", "juror", "vote"), "votes")
    blank = votes["vote"].astype("string").str.strip().eq("").fillna(False).to_numpy(dtype=bool)
    facets = _juror_facets(votes)
    votes = votes.assign(vote=votes["vote"].mask(blank, None), **facets)
    cast = votes[votes["vote"].notna()]
    cast = cast.assign(right=names_ai(cast["vote"], roster))
    named_twice = cast.duplicated(["round", "juror", "vote"])
    if named_twice.any():
        first = cast[named_twice].iloc[0]
        raise ValueError(f"juror {first['juror']!r} names {first['vote']!r} more than once in round {first['round']}")
    chance = float((roster == "ai").mean())

    rule = PassCriterion(pass_rule, alpha, threshold_pct)
    rounds, tally = _rounds(votes, cast, roster, chance, rule)
    facet_names = list(facets.columns)
    jurors = _jurors(votes, cast, facet_names)
    overall_votes, overall_hits = len(cast), int(cast["right"].sum())
    overall_low, overall_high = wilson_interval(np.array([overall_hits]), np.array([overall_votes]))
    with_votes = int((rounds["votes"] > 0).sum())
    summary = {
        "rounds": len(rounds),
        "rounds_with_votes": with_votes,
        "rounds_without_votes": len(rounds) - with_votes,
        "rounds_passed": int(rounds["ai_passed"].sum()),
        "mean_detection_pct": _number(rounds["detection_pct"].mean()),
        "overall_votes": overall_votes,
        "overall_detection_pct": _number(percent(overall_hits, overall_votes)),
        "overall_ci": [_number(overall_low[0]), _number(overall_high[0])],
        "overall_p_value": _number(p_greater(np.array([overall_hits]), np.array([overall_votes]), chance)[0]),
        "majority_rounds": int(rounds["majority"].sum()),
        "mean_hit_rate_pct": _number(jurors["hit_rate_pct"].mean()),
    }
    return VoteStats(
        pass_rule=pass_rule,
        alpha=alpha,
        threshold_pct=threshold_pct,
        rounds=rounds,
        tally=tally,
        ai_rounds=_ai_rounds(rounds, tally, 1.0 / len(roster), rule),
        groups=_groups(jurors, facet_names),
        jurors=jurors,
        confidence=_confidence(cast, chance),
        summary=summary,
    )


def exposure(sheet: pd.DataFrame, players: pd.DataFrame, answers: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per question of the judgment sheet: ``qid, marks, ai_marks, exposure_pct`` [, ``chance_pct``].

    ``sheet`` has one row per (juror, qid, player) with ``looks_like_ai`` (bool; missing = no mark);
    ``exposure_pct`` = share of "looks like the AI" marks that fell on an AI player (NaN without
    marks).  With ``answers`` (the answers table) ``chance_pct`` is the share blind marks would
    reach: AI answers / all answers to the question (non-empty answers, the ones the jury read;
    NaN without any).  Questions are listed in order of first appearance.  ``players`` must
    include an AI player.
    """
    roster = player_roster(players, needs_ai=True)
    require_columns(sheet, ("juror", "qid", "player", "looks_like_ai"), "sheet")
    marked = sheet["looks_like_ai"].astype("boolean").fillna(False).to_numpy(dtype=bool)
    on_ai = names_ai(sheet["player"], roster) & marked
    qids = sheet["qid"].astype(str)
    per_question = (
        pd.DataFrame({"qid": qids, "marks": marked, "ai_marks": on_ai})
        .groupby("qid", sort=False)
        .sum()
        .astype(int)
        .reset_index()
    )
    per_question = per_question.assign(exposure_pct=percent(per_question["ai_marks"], per_question["marks"]))
    if answers is None:
        return per_question
    require_columns(answers, ("player", "qid", "answer"), "answers")
    shown = answers[answers["answer"].fillna("").astype(str).str.strip() != ""]
    shown_ai = pd.Series(names_ai(shown["player"], roster), index=shown.index)
    by_question = shown_ai.groupby(shown["qid"].astype(str)).agg(["sum", "size"])
    ai_answers = per_question["qid"].map(by_question["sum"]).fillna(0)
    all_answers = per_question["qid"].map(by_question["size"]).fillna(0)
    return per_question.assign(chance_pct=percent(ai_answers, all_answers))


@dataclass(frozen=True)
class PassCriterion:
    """A pass rule (its name, one of ``PASS_RULES``: the values of :class:`vtt.kinds.PassRule`) with its parameters."""

    name: str
    alpha: float
    threshold_pct: float

    def passed(self, top_human, top_ai, detection_pct, p_value, voted) -> pd.arrays.BooleanArray:
        """Whether the AI passes, element-wise (NA where nobody voted).

        ``top_human`` / ``top_ai``: the votes of the most-voted human and of the AI judged
        (human-tie); ``p_value``: its binomial test (chance); ``detection_pct`` (threshold).
        """
        if self.name == "human-tie":
            passed = np.asarray(top_human) >= np.asarray(top_ai)
        elif self.name == "chance":
            passed = np.asarray(p_value) >= self.alpha
        else:
            passed = np.asarray(detection_pct) <= self.threshold_pct
        return pd.array(np.where(voted, passed, None), dtype="boolean")


def _rounds(votes, cast, roster, chance, rule: PassCriterion) -> tuple[pd.DataFrame, pd.DataFrame]:
    round_ids = np.sort(votes["round"].unique())
    counts = (
        cast.groupby(["round", "vote"])
        .size()
        .unstack(fill_value=0)
        .reindex(index=round_ids, columns=roster.index, fill_value=0)
    ).to_numpy()
    is_ai = (roster == "ai").to_numpy()
    cast_votes = counts.sum(axis=1)
    # jurors who cast at least one vote: the denominator of shares and majorities (one slot: = cast votes)
    voters = cast.groupby("round")["juror"].nunique().reindex(round_ids, fill_value=0).to_numpy()
    ai_votes = counts[:, is_ai].sum(axis=1)
    detection = percent(ai_votes, cast_votes)
    p_value = p_greater(ai_votes, cast_votes, chance)
    ci_low, ci_high = wilson_interval(ai_votes, cast_votes)

    most = counts.max(axis=1, initial=0)
    leader = roster.index.to_numpy()[counts.argmax(axis=1)]
    single_leader = (counts == most[:, None]).sum(axis=1) == 1
    majority = most > voters / 2
    voted = cast_votes > 0
    passed = rule.passed(
        counts[:, ~is_ai].max(axis=1, initial=0), counts[:, is_ai].max(axis=1, initial=0), detection, p_value, voted
    )

    rounds = pd.DataFrame(
        {
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
            "ai_passed": passed,
            "p_value": p_value,
            "ci_low": ci_low,
            "ci_high": ci_high,
        }
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        shares = 100.0 * counts / voters[:, None]
    tally = pd.DataFrame(
        {
            "round": np.repeat(round_ids, len(roster)),
            "player": np.tile(roster.index.to_numpy(), len(round_ids)),
            "kind": np.tile(roster.to_numpy(), len(round_ids)),
            "votes": counts.ravel(),
            "share_pct": shares.ravel(),
        }
    )
    return rounds, tally


def _ai_rounds(rounds: pd.DataFrame, tally: pd.DataFrame, blind_share: float, rule: PassCriterion) -> pd.DataFrame:
    """Each AI player in each round judged alone; ``blind_share`` = 1 / players (the chance of one AI)."""
    ai = tally[tally["kind"] == "ai"].reset_index(drop=True)
    cast_votes = ai["round"].map(rounds.set_index("round")["votes"]).to_numpy()
    top_human = ai["round"].map(tally[tally["kind"] == "human"].groupby("round")["votes"].max()).fillna(0)
    detection = percent(ai["votes"], cast_votes)
    p_value = p_greater(ai["votes"], cast_votes, blind_share)
    return ai[["round", "player", "votes", "share_pct"]].assign(
        detection_pct=detection,
        passed=rule.passed(top_human, ai["votes"], detection, p_value, cast_votes > 0),
    )


def _juror_facets(votes: pd.DataFrame) -> pd.DataFrame:
    """The facet columns present, each row holding its juror's one label (None without any).

    Raises ValueError on a cell that is no label of its facet and on a juror with two labels.
    """
    facets = {}
    for facet in (name for name in JUROR_FACETS if name in votes.columns):
        labels, not_a_label = facet_labels(votes[facet], facet)
        if not_a_label.any():
            first = votes[not_a_label].iloc[0]
            raise ValueError(f"juror {first['juror']!r}: {facet} must be {EXPERT_VALUES}, not {first[facet]!r}")
        facets[facet], two_labels = juror_labels(labels, votes["juror"])
        if two_labels.any():
            raise ValueError(several_labels_message(facet, votes["juror"][two_labels].iloc[0]))
    return pd.DataFrame(facets, index=votes.index)


def _jurors(votes: pd.DataFrame, cast: pd.DataFrame, facets: list[str]) -> pd.DataFrame:
    jurors = votes.drop_duplicates("juror")[["juror", *facets]].reset_index(drop=True)  # labels are per juror
    by_juror = cast.groupby("juror")
    jurors["rounds"] = jurors["juror"].map(by_juror["round"].nunique()).fillna(0).astype(int)
    jurors["votes"] = jurors["juror"].map(by_juror.size()).fillna(0).astype(int)
    jurors["hits"] = jurors["juror"].map(by_juror["right"].sum()).fillna(0).astype(int)
    jurors["hit_rate_pct"] = percent(jurors["hits"], jurors["votes"])
    return jurors


def _groups(jurors: pd.DataFrame, facets: list[str]) -> pd.DataFrame:
    """Per facet and label: the jurors carrying it and their votes, summed from ``jurors``."""
    # one row per (juror, facet) with a label; "label", not "group": melt refuses a name the table has
    labelled = jurors.melt(id_vars=["votes", "hits"], value_vars=facets, var_name="facet", value_name="label")
    labelled = labelled.dropna(subset=["label"]).assign(
        facet=lambda table: pd.Categorical(table["facet"], categories=facets),  # blocks in facet order
    )
    grouped = (
        labelled.groupby(["facet", "label"], observed=True)
        .agg(
            jurors=("votes", "size"),
            votes=("votes", "sum"),
            ai_votes=("hits", "sum"),
        )
        .reset_index()
        .rename(columns={"label": "group"})
    )
    grouped = grouped.astype({"facet": str, "group": str, "jurors": int, "votes": int, "ai_votes": int})
    ci_low, ci_high = wilson_interval(grouped["ai_votes"].to_numpy(), grouped["votes"].to_numpy())
    return grouped.assign(detection_pct=percent(grouped["ai_votes"], grouped["votes"]), ci_low=ci_low, ci_high=ci_high)


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


def player_roster(players: pd.DataFrame, needs_ai: bool = False) -> pd.Series:
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


def names_ai(names: pd.Series, roster: pd.Series) -> np.ndarray:
    """Whether each name is an AI player; raises on a name that is not a player."""
    kinds = names.map(roster)
    unknown = names[kinds.isna()]
    if len(unknown):
        raise ValueError(f"unknown player(s): {', '.join(map(str, unknown.unique()))}")
    return (kinds == "ai").to_numpy(dtype=bool)


def percent(part, whole) -> np.ndarray:
    """100 * part / whole, NaN where whole is 0."""
    part, whole = np.asarray(part, dtype=float), np.asarray(whole, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(whole > 0, 100.0 * part / whole, np.nan)


def p_greater(successes: np.ndarray, trials: np.ndarray, chance: float) -> np.ndarray:
    """One-sided exact binomial P(X >= successes | trials, chance); NaN without trials.

    P(X >= k) = bdtrc(k - 1, n, p), the regularised incomplete beta function; P(X >= 0) = 1.
    """
    successes, trials = np.asarray(successes, dtype=np.int64), np.asarray(trials, dtype=np.int64)
    tail = np.where(successes > 0, bdtrc(np.maximum(successes - 1, 0), trials, chance), 1.0)
    return np.where(trials > 0, tail, np.nan)


def wilson_interval(successes: np.ndarray, trials: np.ndarray, z: float = _Z95) -> tuple[np.ndarray, np.ndarray]:
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
