"""Juries side by side (analysis/juries.py) against numbers worked out by hand from their formulas."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pandas as pd
import pytest

from analysis.juries import (
    POOLED_COLUMNS,
    ROUND_COLUMNS,
    SHARE_COLUMNS,
    TEST_COLUMNS,
    ai_jury,
    juries_differ,
    jury_order,
    jury_stats,
)
from analysis.results import juries_json
from analysis.tables import JURY_VOTE_COLUMNS, VOTE_COLUMNS

Z = 1.959963984540054
PLAYERS = pd.DataFrame({"name": ["Ann", "Bot", "Cy"], "kind": ["human", "ai", "human"]})


def wilson(k: int, n: int) -> tuple[float, float]:
    """The Wilson score interval in percent, written out."""
    p = k / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z / (1 + Z * Z / n) * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return 100 * max(centre - half, 0.0), 100 * min(centre + half, 1.0)


def jury_votes(jury: str, round_no: int, names: list, prefix: str | None = None) -> list[dict]:
    """One slot per juror: the i-th juror of ``jury`` names ``names[i]`` (None: abstains)."""
    prefix = prefix or jury
    return [
        {"round": round_no, "juror": f"{prefix}{i}", "vote": name, "slot": 1, "confidence": np.nan, "jury": jury}
        for i, name in enumerate(names)
    ]


def table(*parts: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([row for part in parts for row in part], columns=list(JURY_VOTE_COLUMNS))


def test_two_juries_fisher_exact_from_the_hypergeometric_formula():
    # live: 7 of 10 votes on the AI; displaced: 2 of 10
    votes = table(
        jury_votes("live", 1, ["Bot"] * 7 + ["Ann"] * 2 + ["Cy"]),
        jury_votes("displaced", 1, ["Bot"] * 2 + ["Ann"] * 5 + ["Cy"] * 3),
    )
    stats = jury_stats(votes, PLAYERS)
    assert stats.juries == ("live", "displaced")

    rounds = stats.rounds.set_index("jury")
    assert rounds.loc["live", ["votes", "ai_votes", "abstentions", "players"]].tolist() == [10, 7, 0, 3]
    assert rounds.loc["live", "detection_pct"] == pytest.approx(70.0)
    assert rounds.loc["displaced", "detection_pct"] == pytest.approx(20.0)
    assert rounds.loc["live", "chance_pct"] == pytest.approx(100 / 3)
    assert (rounds.loc["live", "ci_low"], rounds.loc["live", "ci_high"]) == pytest.approx(wilson(7, 10))
    assert (rounds.loc["displaced", "ci_low"], rounds.loc["displaced", "ci_high"]) == pytest.approx(wilson(2, 10))

    # margins: rows 10 and 10, 9 AI votes of 20; X = live's AI votes is hypergeometric
    def probability(x: int) -> float:
        return math.comb(10, x) * math.comb(10, 9 - x) / math.comb(20, 9)

    observed = probability(7)
    two_sided = sum(probability(x) for x in range(10) if probability(x) <= observed * (1 + 1e-7))
    assert two_sided == pytest.approx(
        (2 * (math.comb(10, 0) * math.comb(10, 9) + math.comb(10, 1) * math.comb(10, 8) + 45 * 120)) / math.comb(20, 9)
    )
    test = stats.round_tests.iloc[0]
    assert (test["round"], test["juries"], test["test"]) == (1, 2, "fisher_exact")
    assert test["p_value"] == pytest.approx(two_sided)
    assert test["statistic"] == pytest.approx((7 * 8) / (3 * 2))  # odds ratio
    assert pd.isna(test["dof"]) and test["note"] is None
    # one round: pooled = the round
    assert stats.pooled_test.iloc[0]["p_value"] == pytest.approx(two_sided)


def test_three_juries_chi_squared_from_expected_counts():
    votes = table(
        jury_votes("live", 1, ["Bot"] * 6 + ["Ann"] * 4),
        jury_votes("displaced", 1, ["Bot"] * 3 + ["Cy"] * 7),
        jury_votes(ai_jury("m1"), 1, ["Bot"] + ["Ann"] * 4),
    )
    stats = jury_stats(votes, PLAYERS)
    assert stats.juries == ("live", "displaced", "ai:m1")
    observed = [(6, 4), (3, 7), (1, 4)]
    rows = [sum(row) for row in observed]  # 10, 10, 5
    columns = [10, 15]  # AI votes, other votes
    n = 25
    statistic = sum(
        (observed[i][j] - rows[i] * columns[j] / n) ** 2 / (rows[i] * columns[j] / n)
        for i in range(3)
        for j in range(2)
    )
    # expected: live and displaced 4 and 6, the model 2 and 3
    # live 4/4 + 4/6, displaced 1/4 + 1/6, the model 1/2 + 1/3: 35/12
    assert statistic == pytest.approx(35 / 12)
    test = stats.round_tests.iloc[0]
    assert (test["test"], test["dof"]) == ("chi2", 2)
    assert test["statistic"] == pytest.approx(statistic)
    assert test["p_value"] == pytest.approx(math.exp(-statistic / 2))  # chi-squared with 2 df: P(X > x) = e^(-x/2)


def test_pooled_sums_the_rounds_and_chance_is_weighted_by_votes():
    aliases = pd.DataFrame(
        {
            "round": [1, 1, 1, 2, 2],
            "player": ["Ann", "Bot", "Cy", "Bot", "Cy"],
            "alias": ["Red", "Blue", "Green", "Gold", "Grey"],
        }
    )
    votes = table(
        jury_votes("live", 1, ["Bot", "Ann", "Bot", None]),
        jury_votes("live", 2, ["Bot", "Cy", "Bot", "Bot"]),
        jury_votes("displaced", 1, ["Cy", "Cy"]),
        jury_votes("displaced", 2, ["Bot", "Cy"]),
    )
    stats = jury_stats(votes, PLAYERS, aliases)
    pooled = stats.pooled.set_index("jury")
    assert pooled.loc["live", ["rounds", "votes", "abstentions", "ai_votes"]].tolist() == [2, 7, 1, 5]
    assert (pooled.loc["live", "ci_low"], pooled.loc["live", "ci_high"]) == pytest.approx(wilson(5, 7))
    # 3 votes at chance 1/3 and 4 at chance 1/2: (3 x 1/3 + 4 x 1/2) / 7
    assert pooled.loc["live", "chance_pct"] == pytest.approx(100 * 3 / 7)
    pooled_test = stats.pooled_test.iloc[0]
    # pooled table: live 5 AI / 2 other, displaced 1 / 3 (margins 7, 4; 6 AI of 11)
    probability = {x: math.comb(7, x) * math.comb(4, 6 - x) / math.comb(11, 6) for x in range(2, 7)}
    p_value = sum(p for p in probability.values() if p <= probability[5] * (1 + 1e-7))
    assert pooled_test["p_value"] == pytest.approx(p_value)

    shares = stats.shares.set_index(["jury", "round", "player"])
    assert shares.loc[("live", 2, "Bot"), ["alias", "votes"]].tolist() == ["Gold", 3]
    assert shares.loc[("live", 2, "Bot"), "share_pct"] == pytest.approx(75.0)
    assert shares.loc[("live", 2, "Bot"), "chance_pct"] == pytest.approx(50.0)  # two players in round 2
    assert shares.loc[("live", 1, "Ann"), "share_pct"] == pytest.approx(100 / 3)  # the abstention is not a vote
    assert shares.loc[("live", 1, "Ann"), "chance_pct"] == pytest.approx(100 / 3)
    assert ("live", 2, "Ann") not in shares.index  # Ann did not play round 2
    assert stats.rounds.set_index(["jury", "round"]).loc[("live", 2), "players"] == 2


def test_a_jury_without_cast_votes_has_no_detection_and_no_test():
    votes = table(jury_votes("live", 1, ["Bot", "Ann"]), jury_votes("displaced", 1, [None, None]))
    stats = jury_stats(votes, PLAYERS)
    displaced = stats.rounds.set_index("jury").loc["displaced"]
    assert (displaced["votes"], displaced["abstentions"]) == (0, 2)
    assert np.isnan(displaced[["detection_pct", "ci_low", "ci_high"]].astype(float)).all()
    test = stats.round_tests.iloc[0]
    assert np.isnan(test["p_value"]) and test["note"] == "no cast votes: displaced"
    assert stats.shares[stats.shares["jury"] == "displaced"]["share_pct"].isna().all()


def test_a_jury_that_skipped_a_round_is_listed_there_with_zero_votes():
    votes = table(
        jury_votes("live", 1, ["Bot"]),
        jury_votes("live", 2, ["Ann"]),
        jury_votes(ai_jury("m"), 1, ["Bot"]),
    )
    stats = jury_stats(votes, PLAYERS)
    skipped = stats.rounds.set_index(["jury", "round"]).loc[("ai:m", 2)]
    assert (skipped["votes"], skipped["abstentions"]) == (0, 0)
    assert stats.round_tests.set_index("round").loc[2, "note"] == "no cast votes: ai:m"
    assert stats.pooled.set_index("jury").loc["ai:m", "rounds"] == 1


def test_several_ai_slots_count_every_ai_vote():
    players = pd.DataFrame({"name": ["Ann", "Bot", "Cy", "Max"], "kind": ["human", "ai", "human", "ai"]})
    votes = pd.DataFrame(
        [
            {"round": 1, "juror": "j1", "vote": "Bot", "slot": 1, "jury": "live"},
            {"round": 1, "juror": "j1", "vote": "Max", "slot": 2, "jury": "live"},
            {"round": 1, "juror": "j2", "vote": "Ann", "slot": 1, "jury": "live"},
            {"round": 1, "juror": "j2", "vote": None, "slot": 2, "jury": "live"},
            {"round": 1, "juror": "m", "vote": "Cy", "slot": 1, "jury": "ai:m"},
            {"round": 1, "juror": "m", "vote": "Bot", "slot": 2, "jury": "ai:m"},
        ]
    )
    stats = jury_stats(votes, players)
    live = stats.rounds.set_index("jury").loc["live"]
    assert live[["votes", "abstentions", "ai_votes"]].tolist() == [3, 1, 2]
    assert live["chance_pct"] == pytest.approx(50.0)  # 2 AI players of 4
    shares = stats.shares.set_index(["jury", "player"])["share_pct"]
    assert shares[("live", "Max")] == pytest.approx(100 / 3)  # out of the jury's 3 cast votes
    assert stats.shares.groupby("jury")["share_pct"].sum().tolist() == pytest.approx([100.0, 100.0])
    assert set(stats.shares["chance_pct"]) == {25.0}


def test_every_vote_on_the_ai_means_the_juries_cannot_differ():
    two = juries_differ([4, 3], [4, 3], ["live", "displaced"])
    assert (two["test"], two["p_value"], two["note"]) == ("fisher_exact", 1.0, "every cast vote names an AI")
    three = juries_differ([0, 0, 0], [4, 3, 2], ["live", "displaced", "ai:m"])
    assert (three["test"], three["statistic"], three["dof"], three["p_value"]) == ("chi2", 0.0, 2, 1.0)
    assert three["note"] == "no cast vote names an AI"


def test_one_jury_is_not_compared_and_no_votes_give_empty_tables():
    stats = jury_stats(table(jury_votes("live", 1, ["Bot", "Ann"])), PLAYERS)
    test = stats.round_tests.iloc[0]
    assert test["test"] is None and np.isnan(test["p_value"])
    assert test["note"] == "fewer than two juries: nothing to compare"
    empty = jury_stats(table(), PLAYERS)
    assert empty.juries == () and empty.rounds.empty and empty.round_tests.empty and empty.shares.empty
    assert empty.pooled_test.iloc[0]["juries"] == 0 and np.isnan(empty.pooled_test.iloc[0]["p_value"])


def test_jury_labels_are_ordered_and_checked():
    assert jury_order(["ai:b", "displaced", "ai:a", "live", "ai:b"]) == ["live", "displaced", "ai:a", "ai:b"]
    for label in ("ai", "ai:", "crowd", None, ""):
        with pytest.raises(ValueError, match="jury must be"):
            jury_order([label])
    votes = table(jury_votes(" live ", 1, ["Bot"]))
    assert jury_stats(votes, PLAYERS).juries == ("live",)


def test_bad_votes_are_refused():
    with pytest.raises(ValueError, match="lacks column"):
        jury_stats(table(jury_votes("live", 1, ["Bot"])).drop(columns="jury"), PLAYERS)
    with pytest.raises(ValueError, match="unknown player"):
        jury_stats(table(jury_votes("live", 1, ["Zed"])), PLAYERS)
    twice = pd.DataFrame(
        [
            {"round": 1, "juror": "j", "vote": "Bot", "jury": "live"},
            {"round": 1, "juror": "j", "vote": "Bot", "jury": "live"},
        ]
    )
    with pytest.raises(ValueError, match="more than once"):
        jury_stats(twice, PLAYERS)
    aliases = pd.DataFrame({"round": [1, 1], "player": ["Bot", "Cy"], "alias": ["X", "Y"]})
    with pytest.raises(ValueError, match="did not play round 1"):
        jury_stats(table(jury_votes("live", 1, ["Ann"])), PLAYERS, aliases)
    with pytest.raises(ValueError, match="lack round"):
        jury_stats(table(jury_votes("live", 2, ["Bot"])), PLAYERS, aliases)


def test_the_tables_keep_their_columns_through_csv_and_json():
    assert JURY_VOTE_COLUMNS == (*VOTE_COLUMNS, "jury")
    votes = table(
        jury_votes("live", 1, ["Bot", "Bot", "Bot"]),
        jury_votes("displaced", 1, ["Ann", "Cy", None]),
    )
    stats = jury_stats(votes, PLAYERS)
    assert tuple(stats.rounds.columns) == ROUND_COLUMNS
    assert tuple(stats.pooled.columns) == POOLED_COLUMNS
    assert tuple(stats.round_tests.columns) == ("round", *TEST_COLUMNS)
    assert tuple(stats.pooled_test.columns) == TEST_COLUMNS
    assert tuple(stats.shares.columns) == SHARE_COLUMNS
    for frame in (stats.rounds, stats.pooled, stats.shares):
        back = pd.read_csv(io.StringIO(frame.to_csv(index=False)))
        assert tuple(back.columns) == tuple(frame.columns)
        numbers = frame.select_dtypes("number").columns
        np.testing.assert_allclose(back[numbers].to_numpy(dtype=float), frame[numbers].to_numpy(dtype=float))

    # live's odds are infinite (no other vote): the odds ratio is infinite, and None in JSON
    assert stats.round_tests.iloc[0]["statistic"] == np.inf
    document = json.loads(json.dumps(juries_json(stats), allow_nan=False))
    assert document["juries"] == ["live", "displaced"]
    assert document["round_tests"][0]["statistic"] is None
    assert document["round_tests"][0]["p_value"] == pytest.approx(0.1)  # 3 of 3 vs 0 of 2: C(3,3)C(2,0)/C(5,3)
    assert document["pooled_test"]["test"] == "fisher_exact" and document["pooled_test"]["dof"] is None
    assert set(document["rounds"][0]) == set(ROUND_COLUMNS)
    assert len(document["shares"]) == 2 * 3


def test_a_round_cut_short_is_labelled_and_never_pooled():
    """Round 2 was cut short in the live session (no live vote); the displaced jury judged it all the same, naming
    the AI 4 of 4 times.  Pooled over the whole round 1 only: displaced 1/4 (25 %), not 5/8; the pooled test is
    round 1's own, and round 2's test says it was cut short."""
    votes = table(
        jury_votes("live", 1, ["Bot", "Bot", "Ann", "Cy"]),
        jury_votes("displaced", 1, ["Bot", "Ann", "Ann", "Cy"]),
        jury_votes("displaced", 2, ["Bot"] * 4),
    )
    stats = jury_stats(votes, PLAYERS, cut_short=[2])
    rounds = stats.rounds.set_index(["jury", "round"])
    assert rounds["cut_short"].to_dict() == {
        ("live", 1): False,
        ("live", 2): True,
        ("displaced", 1): False,
        ("displaced", 2): True,
    }
    assert rounds.loc[("displaced", 2), ["votes", "ai_votes"]].tolist() == [4, 4]
    pooled = stats.pooled.set_index("jury")
    assert pooled.loc["displaced", ["rounds", "votes", "ai_votes"]].tolist() == [1, 4, 1]
    assert pooled.loc["displaced", "detection_pct"] == pytest.approx(25.0)
    assert (pooled.loc["displaced", "ci_low"], pooled.loc["displaced", "ci_high"]) == pytest.approx(wilson(1, 4))
    round_one = stats.round_tests.set_index("round").loc[1]
    assert stats.pooled_test.iloc[0]["p_value"] == pytest.approx(round_one["p_value"])
    assert stats.round_tests.set_index("round").loc[2, "note"] == (
        "round cut short in the live session: not pooled; no cast votes: live"
    )
    assert round_one["note"] is None or pd.isna(round_one["note"])
    whole = jury_stats(votes, PLAYERS)  # without the mark: every round counts, as before
    assert whole.pooled.set_index("jury").loc["displaced", "votes"] == 8 and not whole.rounds["cut_short"].any()
