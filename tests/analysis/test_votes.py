"""Vote statistics on a reconstruction of the 2021 VTT case study, checked by hand."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from analysis.votes import PASS_RULES, exposure, vote_stats
from tests.support.case_study import EXPERTS, JURORS, PLAYERS, case_study_votes


def binomial_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p), by hand."""
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))


def wilson_by_hand(k: int, n: int) -> tuple[float, float]:
    z = NormalDist().inv_cdf(0.975)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return 100 * (centre - half), 100 * (centre + half)


@pytest.fixture(scope="module")
def case_study():
    return vote_stats(case_study_votes(), PLAYERS)


def test_case_study_rounds(case_study):
    rounds = case_study.rounds
    assert list(rounds.columns) == [
        "round",
        "players",
        "votes",
        "voters",
        "abstentions",
        "ai_votes",
        "detection_pct",
        "chance_pct",
        "majority",
        "majority_player",
        "top_player",
        "ai_passed",
        "p_value",
        "ci_low",
        "ci_high",
    ]
    assert rounds["round"].tolist() == [1, 2, 3, 4, 5]
    assert rounds["players"].tolist() == [5] * 5
    assert rounds["votes"].tolist() == [16, 16, 16, 9, 16]
    assert rounds["voters"].tolist() == [16, 16, 16, 9, 16]  # one slot: voters = cast votes
    assert rounds["abstentions"].tolist() == [0, 0, 0, 7, 0]
    assert rounds["ai_votes"].tolist() == [10, 12, 6, 5, 2]
    assert rounds["detection_pct"].tolist() == pytest.approx([62.5, 75.0, 37.5, 100 * 5 / 9, 12.5])
    assert rounds["detection_pct"].round(1).tolist() == [62.5, 75.0, 37.5, 55.6, 12.5]
    assert rounds["chance_pct"].tolist() == [20.0] * 5
    assert rounds["majority"].tolist() == [True, True, False, True, True]
    assert rounds["majority_player"].tolist() == ["AI", "AI", None, "AI", "Kid4"]
    assert rounds["top_player"].tolist() == ["AI", "AI", "Teen14", "AI", "Kid4"]


def test_case_study_summary(case_study):
    summary = case_study.summary
    assert summary["rounds"] == 5
    assert summary["majority_rounds"] == 4
    # (62.5 + 75 + 37.5 + 55.555... + 12.5) / 5 = 48.61
    assert summary["mean_detection_pct"] == pytest.approx((62.5 + 75 + 37.5 + 500 / 9 + 12.5) / 5)
    assert round(summary["mean_detection_pct"], 1) == 48.6
    # pooled: 35 AI votes of 73 cast
    assert summary["overall_votes"] == 73
    assert summary["overall_detection_pct"] == pytest.approx(100 * 35 / 73)
    assert summary["overall_ci"] == pytest.approx(list(wilson_by_hand(35, 73)))
    assert summary["overall_p_value"] == pytest.approx(binomial_tail(35, 73, 0.2), rel=1e-9)
    assert all(type(v) in (int, float, list) for v in summary.values())


def test_p_values_are_exact_one_sided_binomial_tails(case_study):
    rounds = case_study.rounds
    by_hand = [binomial_tail(k, n, 0.2) for k, n in zip(rounds["ai_votes"], rounds["votes"])]
    assert rounds["p_value"].tolist() == pytest.approx(by_hand, rel=1e-9)
    scipy_values = [
        binomtest(k, n, 0.2, alternative="greater").pvalue for k, n in zip(rounds["ai_votes"], rounds["votes"])
    ]
    assert rounds["p_value"].tolist() == pytest.approx(scipy_values, rel=1e-9)
    # round 3: 1 - P(X <= 5), X ~ B(16, 0.2) = 0.0817; round 4: P(X >= 5), X ~ B(9, 0.2) = 0.0196
    assert rounds["p_value"][2] == pytest.approx(0.0817, abs=5e-5)
    assert rounds["p_value"][3] == pytest.approx(0.0196, abs=5e-5)


def test_wilson_interval_matches_the_formula(case_study):
    round_one = case_study.rounds.iloc[0]
    low, high = wilson_by_hand(10, 16)
    assert (round_one["ci_low"], round_one["ci_high"]) == (pytest.approx(low), pytest.approx(high))
    assert (round(low, 1), round(high, 1)) == (38.6, 81.5)


@pytest.mark.parametrize(
    ("rule", "passed"),
    [
        # human-tie: some human >= the AI only in round 3 (Teen14 7 vs 6) and round 5 (Kid4 14 vs 2)
        ("human-tie", [False, False, True, False, True]),
        # chance: p >= 0.05 in round 3 (0.082) and round 5 (0.86); round 4's p = 0.0196 is significant
        ("chance", [False, False, True, False, True]),
        # threshold 70 %: only round 2 (75 %) is above
        ("threshold", [True, False, True, True, True]),
    ],
)
def test_pass_rules_on_the_case_study(rule, passed):
    stats = vote_stats(case_study_votes(), PLAYERS, pass_rule=rule)
    assert stats.pass_rule == rule
    assert stats.rounds["ai_passed"].tolist() == passed
    assert stats.summary["rounds_passed"] == sum(passed)


def test_pass_rule_parameters():
    strict = vote_stats(case_study_votes(), PLAYERS, pass_rule="chance", alpha=0.01)
    assert strict.rounds["ai_passed"].tolist() == [False, False, True, True, True]  # 0.0196 >= 0.01
    low_bar = vote_stats(case_study_votes(), PLAYERS, pass_rule="threshold", threshold_pct=50)
    assert low_bar.rounds["ai_passed"].tolist() == [False, False, True, False, True]
    assert (strict.alpha, low_bar.threshold_pct) == (0.01, 50)


def test_tally_lists_every_player_every_round(case_study):
    tally = case_study.tally
    assert list(tally.columns) == ["round", "player", "kind", "votes", "share_pct"]
    assert len(tally) == 25
    round_two = tally[tally["round"] == 2].set_index("player")
    assert round_two["votes"].to_dict() == {"Kid4": 0, "Kid10": 4, "Teen14": 0, "Adult20": 0, "AI": 12}
    assert round_two["share_pct"].to_dict() == {"Kid4": 0.0, "Kid10": 25.0, "Teen14": 0.0, "Adult20": 0.0, "AI": 75.0}
    assert round_two.loc["AI", "kind"] == "ai"
    assert tally.groupby("round")["votes"].sum().tolist() == [16, 16, 16, 9, 16]


def test_juror_hit_rates(case_study):
    jurors = case_study.jurors.set_index("juror")
    assert jurors.index.tolist() == JURORS
    # J01, J02 named the AI every round; J03-J05 in rounds 1-4; J06 in 1-3; J07-J10 in 1-2;
    # J11, J12 in round 2 only; J13-J16 never.  J10-J16 abstained in round 4.
    expected_hits = [5, 5, 4, 4, 4, 3, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0]
    expected_rounds = [5] * 9 + [4] * 7
    assert jurors["hits"].tolist() == expected_hits
    assert jurors["rounds"].tolist() == expected_rounds
    assert jurors["votes"].tolist() == expected_rounds  # one slot per round
    expected_rates = [100 * h / r for h, r in zip(expected_hits, expected_rounds)]
    assert jurors["hit_rate_pct"].tolist() == pytest.approx(expected_rates)
    assert jurors.loc["J10", "hit_rate_pct"] == 50.0 and jurors.loc["J07", "hit_rate_pct"] == 40.0
    assert jurors.loc["J01", "group"] == "expert" and jurors.loc["J16", "group"] == "non-expert"


def test_detection_by_juror_group(case_study):
    assert list(case_study.groups.columns) == [
        "facet",
        "group",
        "jurors",
        "votes",
        "ai_votes",
        "detection_pct",
        "ci_low",
        "ci_high",
    ]
    assert case_study.groups["facet"].tolist() == ["group", "group"]  # a plain group column is facet "group"
    groups = case_study.groups.set_index("group")
    # experts J01-J06: 30 cast votes, 5 + 5 + 4 + 4 + 4 + 3 = 25 hits
    # others J07-J16: 3 x 5 + 7 x 4 = 43 cast votes, 4 x 2 + 2 x 1 = 10 hits
    assert groups["jurors"].tolist() == [6, 10]
    assert groups.loc["expert", ["votes", "ai_votes"]].tolist() == [30, 25]
    assert groups.loc["non-expert", ["votes", "ai_votes"]].tolist() == [43, 10]
    assert groups["detection_pct"].tolist() == pytest.approx([100 * 25 / 30, 100 * 10 / 43])
    assert (groups.loc["expert", "ci_low"], groups.loc["expert", "ci_high"]) == pytest.approx(wilson_by_hand(25, 30))


def test_confidence_means_and_brier(case_study):
    confidence = case_study.confidence
    # right votes: 35 at confidence 4; wrong votes: 24 at 2 and the 14 of round 5 at 5
    assert confidence["mean_right"] == pytest.approx(4.0)
    assert confidence["mean_wrong"] == pytest.approx((24 * 2 + 14 * 5) / 38)
    # p = 0.2 + 0.8 (c - 1) / 4: c = 4 -> 0.8, c = 2 -> 0.4, c = 5 -> 1.0
    # Brier = (35 (0.8 - 1)^2 + 24 (0.4 - 0)^2 + 14 (1.0 - 0)^2) / 73 = 19.24 / 73
    assert confidence["brier"] == pytest.approx(19.24 / 73)


def test_confidence_absent_gives_none():
    stats = vote_stats(case_study_votes().drop(columns=["confidence", "group"]), PLAYERS)
    assert stats.confidence == {"votes": 0, "mean_right": None, "mean_wrong": None, "brier": None}
    assert stats.groups.empty and stats.facets == ()
    assert list(stats.jurors.columns) == ["juror", "rounds", "votes", "hits", "hit_rate_pct"]  # no facet column


def test_confidence_outside_the_scale_is_refused():
    votes = case_study_votes()
    votes.loc[0, "confidence"] = 7
    with pytest.raises(ValueError, match="confidence"):
        vote_stats(votes, PLAYERS)


TWO_AI_PLAYERS = pd.DataFrame({"name": ["H1", "H2", "AI1", "AI2"], "kind": ["human", "human", "ai", "ai"]})


def two_ai_votes() -> pd.DataFrame:
    """4 jurors, 2 slots, 2 rounds with the players of ``TWO_AI_PLAYERS``."""
    return pd.DataFrame(
        [
            # round 1: AI1 3, AI2 1, H1 2, H2 1, one abstained slot
            (1, "J1", "AI1", 1),
            (1, "J1", "AI2", 2),
            (1, "J2", "AI1", 1),
            (1, "J2", "H1", 2),
            (1, "J3", "H1", 1),
            (1, "J3", "H2", 2),
            (1, "J4", "AI1", 1),
            (1, "J4", None, 2),
            # round 2: AI1 1, AI2 2, H1 3, H2 2
            (2, "J1", "H1", 1),
            (2, "J1", "H2", 2),
            (2, "J2", "H1", 1),
            (2, "J2", "AI2", 2),
            (2, "J3", "H1", 1),
            (2, "J3", "H2", 2),
            (2, "J4", "AI1", 1),
            (2, "J4", "AI2", 2),
        ],
        columns=["round", "juror", "vote", "slot"],
    )


def test_several_ai_players_and_slots():
    stats = vote_stats(two_ai_votes(), TWO_AI_PLAYERS)
    rounds = stats.rounds
    assert rounds["votes"].tolist() == [7, 8]
    assert rounds["abstentions"].tolist() == [1, 0]
    assert rounds["ai_votes"].tolist() == [4, 3]
    assert rounds["detection_pct"].tolist() == pytest.approx([400 / 7, 37.5])
    # chance = 2 AI players of 4 = 0.5; P(X >= 4 | 7, 0.5) = (35 + 21 + 7 + 1) / 128
    assert rounds["chance_pct"].tolist() == [50.0, 50.0]
    assert rounds["p_value"][0] == pytest.approx(64 / 128)
    # human-tie, judged by the best-detected AI: round 1 AI1 3 > H1 2 -> detected; round 2 H1 3 >= AI2 2 -> passed
    assert rounds["ai_passed"].tolist() == [False, True]
    # shares and majorities are out of the 4 jurors who voted, not the 7 or 8 slot votes:
    # round 1 AI1 named by 3 of 4 jurors (75 % > 50 %), round 2 H1 by 3 of 4
    assert rounds["voters"].tolist() == [4, 4]
    assert rounds["majority"].tolist() == [True, True]
    assert rounds["majority_player"].tolist() == ["AI1", "H1"]
    assert rounds["top_player"].tolist() == ["AI1", "H1"]
    shares = stats.tally.set_index(["round", "player"])["share_pct"]
    assert shares[1].to_dict() == {"H1": 50.0, "H2": 25.0, "AI1": 75.0, "AI2": 25.0}
    assert shares[2].to_dict() == {"H1": 75.0, "H2": 50.0, "AI1": 25.0, "AI2": 50.0}
    jurors = stats.jurors.set_index("juror")
    # J4: 3 cast votes over two rounds, all on an AI; J1: 2 of 4
    assert jurors.loc["J4", ["rounds", "votes", "hits"]].tolist() == [2, 3, 3]
    assert jurors.loc["J1", "hit_rate_pct"] == 50.0


def test_round_where_everyone_abstained_is_undefined_not_an_error():
    votes = pd.concat(
        [
            case_study_votes(),
            pd.DataFrame({"round": 6, "juror": JURORS, "vote": [None] * 8 + [""] * 8, "slot": 1}),
        ],
        ignore_index=True,
    )
    stats = vote_stats(votes, PLAYERS, pass_rule="chance")
    empty = stats.rounds.iloc[-1]
    assert (empty["round"], empty["votes"], empty["abstentions"], empty["ai_votes"]) == (6, 0, 16, 0)
    assert all(np.isnan(empty[c]) for c in ("detection_pct", "p_value", "ci_low", "ci_high"))
    assert not empty["majority"] and empty["majority_player"] is None and empty["top_player"] is None
    assert pd.isna(empty["ai_passed"])
    assert stats.tally[stats.tally["round"] == 6]["votes"].tolist() == [0] * 5
    assert stats.tally[stats.tally["round"] == 6]["share_pct"].isna().all()
    # the empty round does not move the summary
    assert stats.summary["mean_detection_pct"] == pytest.approx((62.5 + 75 + 37.5 + 500 / 9 + 12.5) / 5)
    assert stats.summary["rounds"] == 6 and stats.summary["rounds_passed"] == 2
    silent_ai = stats.ai_rounds.iloc[-1]
    assert (silent_ai["round"], silent_ai["votes"]) == (6, 0)
    assert np.isnan(silent_ai["detection_pct"]) and pd.isna(silent_ai["passed"])


def test_session_without_any_cast_vote():
    votes = pd.DataFrame({"round": [1, 1], "juror": ["J1", "J2"], "vote": [None, None]})
    stats = vote_stats(votes, PLAYERS)
    summary = stats.summary
    assert summary["overall_votes"] == 0
    assert summary["mean_detection_pct"] is None and summary["overall_detection_pct"] is None
    assert summary["overall_ci"] == [None, None] and summary["overall_p_value"] is None
    assert stats.jurors["hit_rate_pct"].isna().all()


def test_tie_for_the_top_names_nobody():
    votes = pd.DataFrame({"round": 1, "juror": ["J1", "J2", "J3", "J4"], "vote": ["AI", "Kid4", "AI", "Kid4"]})
    rounds = vote_stats(votes, PLAYERS).rounds
    assert rounds["top_player"].tolist() == [None]
    assert rounds["majority"].tolist() == [False]
    assert rounds["ai_passed"].tolist() == [True]  # human-tie: Kid4's 50 % >= the AI's 50 %


def test_bad_input_is_refused():
    votes = case_study_votes()
    with pytest.raises(ValueError, match="unknown pass rule"):
        vote_stats(votes, PLAYERS, pass_rule="majority")
    with pytest.raises(ValueError, match="unknown player.*Nobody"):
        vote_stats(votes.assign(vote=votes["vote"].replace("Kid4", "Nobody")), PLAYERS)
    with pytest.raises(ValueError, match="alpha"):
        vote_stats(votes, PLAYERS, alpha=1.5)
    assert set(PASS_RULES) == {"human-tie", "chance", "threshold"}


def test_exposure_of_looks_like_ai_marks():
    sheet = pd.DataFrame(
        {
            "juror": ["J1", "J1", "J2", "J2", "J1", "J2", "J1"],
            "qid": ["q1", "q1", "q1", "q1", "q2", "q2", "q3"],
            "player": ["AI", "Kid4", "AI", "Kid10", "Kid4", "Teen14", "AI"],
            "looks_like_ai": [True, True, True, None, True, False, False],
        }
    )
    result = exposure(sheet, PLAYERS)
    assert list(result.columns) == ["qid", "marks", "ai_marks", "exposure_pct"]
    assert result["qid"].tolist() == ["q1", "q2", "q3"]
    assert result["marks"].tolist() == [3, 1, 0]
    assert result["ai_marks"].tolist() == [2, 0, 0]
    assert result["exposure_pct"][:2].tolist() == pytest.approx([200 / 3, 0.0])
    assert np.isnan(result["exposure_pct"][2])


# ------------------------------------------------------------------------------- review fixes


def test_a_session_without_an_ai_player_is_refused():
    humans = PLAYERS.assign(kind="human")
    with pytest.raises(ValueError, match="no AI player"):
        vote_stats(case_study_votes().replace({"vote": {"AI": "Kid4"}}).drop_duplicates(), humans)
    sheet = pd.DataFrame({"juror": ["J1"], "qid": ["q1"], "player": ["Kid4"], "looks_like_ai": [True]})
    with pytest.raises(ValueError, match="no AI player"):
        exposure(sheet, humans)


def test_one_slot_shares_are_shares_of_the_votes(case_study):
    round_one = case_study.tally[case_study.tally["round"] == 1].set_index("player")["share_pct"]
    assert round_one.to_dict() == {"Kid4": 0.0, "Kid10": 0.0, "Teen14": 12.5, "Adult20": 25.0, "AI": 62.5}
    round_four = case_study.tally[case_study.tally["round"] == 4].set_index("player")["share_pct"]
    assert round_four["AI"] == pytest.approx(500 / 9)  # 5 of the 9 jurors who voted (7 abstained)


def test_several_slots_majority_counts_jurors_not_slot_votes():
    """3 jurors, 2 slots: AI1 named by 2 of 3 jurors is a majority although it has 2 of 6 slot votes."""
    players = pd.DataFrame({"name": ["H1", "H2", "AI1", "AI2"], "kind": ["human", "human", "ai", "ai"]})
    votes = pd.DataFrame(
        [
            (1, "J1", "AI1", 1),
            (1, "J1", "H1", 2),
            (1, "J2", "AI1", 1),
            (1, "J2", "H2", 2),
            (1, "J3", "H1", 1),
            (1, "J3", "AI2", 2),
        ],
        columns=["round", "juror", "vote", "slot"],
    )
    stats = vote_stats(votes, players)
    row = stats.rounds.iloc[0]
    assert (row["votes"], row["voters"], row["ai_votes"]) == (6, 3, 3)
    assert row["detection_pct"] == 50.0  # 3 of 6 slot votes name an AI
    assert bool(row["majority"]) is True and row["majority_player"] is None  # AI1 and H1 both 2 of 3
    shares = stats.tally.set_index("player")["share_pct"]
    assert shares.to_dict() == pytest.approx({"H1": 200 / 3, "H2": 100 / 3, "AI1": 200 / 3, "AI2": 100 / 3})


def test_a_player_named_twice_by_one_juror_in_a_round_is_refused():
    votes = pd.DataFrame({"round": 1, "juror": ["J1", "J1"], "vote": ["AI", "AI"], "slot": [1, 2]})
    with pytest.raises(ValueError, match="'J1' names 'AI' more than once in round 1"):
        vote_stats(votes, PLAYERS)


def test_a_blank_group_cell_takes_the_jurors_label():
    votes = pd.DataFrame(
        {
            "round": [1, 1, 2, 2],
            "juror": ["J1", "J2", "J1", "J2"],
            "vote": ["AI", "Kid4", "AI", "AI"],
            "group": ["expert", None, "", "lay"],
        }
    )
    stats = vote_stats(votes, PLAYERS)
    groups = stats.groups.set_index("group")
    # J1 voted twice (group given in round 1 only), J2 twice (group given in round 2 only)
    assert groups.loc["expert", ["votes", "ai_votes"]].tolist() == [2, 2]
    assert groups.loc["lay", ["votes", "ai_votes"]].tolist() == [2, 1]
    jurors = stats.jurors.set_index("juror")
    assert jurors["group"].to_dict() == {"J1": "expert", "J2": "lay"}
    # groups.csv and jurors.csv agree
    assert jurors.groupby("group")["votes"].sum().to_dict() == groups["votes"].to_dict()
    assert jurors.groupby("group")["hits"].sum().to_dict() == groups["ai_votes"].to_dict()
    with pytest.raises(ValueError, match="'J1' is in more than one group"):
        vote_stats(votes.assign(group=["expert", None, "lay", "lay"]), PLAYERS)


def test_p_value_is_an_exact_tail_without_scipy_stats():
    # k = 0 -> 1; k = n -> p^n; a pooled-size n against the hand sum
    votes = pd.DataFrame({"round": [1, 1, 2], "juror": ["J1", "J2", "J1"], "vote": ["Kid4", "Kid10", "AI"]})
    rounds = vote_stats(votes, PLAYERS).rounds
    assert rounds["p_value"].tolist() == [1.0, pytest.approx(0.2, rel=1e-12)]
    big = pd.DataFrame({"round": 1, "juror": [f"J{i}" for i in range(600)], "vote": ["AI"] * 140 + ["Kid4"] * 460})
    assert vote_stats(big, PLAYERS).rounds["p_value"][0] == pytest.approx(binomial_tail(140, 600, 0.2), rel=1e-9)
    import subprocess
    import sys

    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, analysis.votes; print('scipy.stats' in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert loaded == "False"  # scipy.stats costs ~0.6 s at start-up; scipy.special is enough


def test_rounds_without_votes_are_counted_apart():
    votes = pd.concat(
        [
            case_study_votes(),
            pd.DataFrame({"round": [6, 7], "juror": ["J01", "J01"], "vote": [None, None], "slot": 1}),
        ],
        ignore_index=True,
    )
    summary = vote_stats(votes, PLAYERS).summary
    assert (summary["rounds"], summary["rounds_with_votes"], summary["rounds_without_votes"]) == (7, 5, 2)
    assert (summary["rounds_passed"], summary["majority_rounds"]) == (2, 4)


def test_summary_mean_hit_rate_and_confidence_votes(case_study):
    expected_hits = [5, 5, 4, 4, 4, 3, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0]
    expected_rounds = [5] * 9 + [4] * 7
    rates = [100 * h / r for h, r in zip(expected_hits, expected_rounds)]
    assert case_study.summary["mean_hit_rate_pct"] == pytest.approx(sum(rates) / 16)
    assert case_study.confidence["votes"] == 73  # every cast vote has a confidence
    votes = case_study_votes()
    votes.loc[votes.index[:3], "confidence"] = np.nan
    assert vote_stats(votes, PLAYERS).confidence["votes"] == 70


def test_exposure_baseline_is_the_share_of_ai_answers():
    sheet = pd.DataFrame(
        {
            "juror": ["J1", "J2", "J1"],
            "qid": ["q1", "q1", "q2"],
            "player": ["AI", "Kid4", "AI"],
            "looks_like_ai": [True, True, True],
        }
    )
    answers = pd.DataFrame(
        {
            "player": ["AI", "Kid4", "Kid10", "AI", "Kid4"],
            "qid": ["q1", "q1", "q1", "q2", "q2"],
            "answer": ["x", "y", "z", "", "w"],  # the AI said nothing on q2: 0 of 1 answers shown
        }
    )
    result = exposure(sheet, PLAYERS, answers)
    assert list(result.columns) == ["qid", "marks", "ai_marks", "exposure_pct", "chance_pct"]
    assert result["exposure_pct"].tolist() == [50.0, 100.0]
    assert result["chance_pct"].tolist() == pytest.approx([100 / 3, 0.0])


# ------------------------------------------------------------------------------- juror facets

# Age bands of the 16 case-study jurors (tests/data/case_study_votes_facets.csv has the same):
#   20s J01 J07 J08 J13 J14: 5 + 5 + 5 + 4 + 4 = 23 votes, 5 + 2 + 2 + 0 + 0 = 9 hits
#   30s J02 J03 J09 J10 J15: 5 + 5 + 5 + 4 + 4 = 23 votes, 5 + 4 + 2 + 2 + 0 = 13 hits
#   40s J04 J05 J06 J11 J12 J16: 5 + 5 + 5 + 4 + 4 + 4 = 27 votes, 4 + 4 + 3 + 1 + 1 + 0 = 13 hits
AGE_BANDS = {
    "20s": ["J01", "J07", "J08", "J13", "J14"],
    "30s": ["J02", "J03", "J09", "J10", "J15"],
    "40s": ["J04", "J05", "J06", "J11", "J12", "J16"],
}
AGE_BAND_OF = {juror: band for band, jurors in AGE_BANDS.items() for juror in jurors}


def case_study_with_facets() -> pd.DataFrame:
    """The case study with all four facets, columns deliberately out of the report order.

    sex: only J01, J13 (F) and J02 (M) say; expert in every spelling the frame accepts; age_band
    given in round 1 only (later rows take the juror's label); group: J01-J08 "panel", J09-J16 "online".
    """
    votes = case_study_votes().drop(columns=["group"])
    expert_spellings = {True: [True, "YES", 1, 1.0, "true", "expert"], False: [False, "no", 0, "0", "Non-Expert"]}
    expert = [
        expert_spellings[juror in EXPERTS][i % len(expert_spellings[juror in EXPERTS])]
        for i, juror in enumerate(votes["juror"])
    ]
    return votes.assign(
        sex=votes["juror"].map({"J01": "F", "J13": "F", "J02": "M"}),
        age_band=np.where(votes["round"] == 1, votes["juror"].map(AGE_BAND_OF), ""),
        expert=pd.Series(expert, index=votes.index, dtype=object),
        group=np.where(votes["juror"] <= "J08", "panel", "online"),
    )


def test_detection_by_every_juror_facet():
    stats = vote_stats(case_study_with_facets(), PLAYERS)
    assert stats.facets == ("group", "expert", "age_band", "sex")
    groups = stats.groups
    assert list(groups.columns) == [
        "facet",
        "group",
        "jurors",
        "votes",
        "ai_votes",
        "detection_pct",
        "ci_low",
        "ci_high",
    ]
    # group: panel J01-J08 8 x 5 = 40 votes, 5 + 5 + 4 + 4 + 4 + 3 + 2 + 2 = 29 hits;
    #        online J09-J16 5 + 7 x 4 = 33 votes, 2 + 2 + 1 + 1 = 6 hits
    # expert as in test_detection_by_juror_group; sex: F = J01 (5 of 5) and J13 (0 of 4), M = J02 (5 of 5)
    assert groups[["facet", "group", "jurors", "votes", "ai_votes"]].values.tolist() == [
        ["group", "online", 8, 33, 6],
        ["group", "panel", 8, 40, 29],
        ["expert", "expert", 6, 30, 25],
        ["expert", "non-expert", 10, 43, 10],
        ["age_band", "20s", 5, 23, 9],
        ["age_band", "30s", 5, 23, 13],
        ["age_band", "40s", 6, 27, 13],
        ["sex", "F", 2, 9, 5],
        ["sex", "M", 1, 5, 5],
    ]
    assert groups["detection_pct"].tolist() == pytest.approx(
        [
            100 * 6 / 33,
            100 * 29 / 40,
            100 * 25 / 30,
            100 * 10 / 43,
            100 * 9 / 23,
            100 * 13 / 23,
            100 * 13 / 27,
            100 * 5 / 9,
            100.0,
        ]
    )
    twenties = groups.iloc[4]
    assert (twenties["ci_low"], twenties["ci_high"]) == pytest.approx(wilson_by_hand(9, 23))
    # p = 9/23, z² = 3.8415: centre (p + z²/46) / (1 + z²/23) = 0.4069, half-width 0.1853
    assert (round(twenties["ci_low"], 1), round(twenties["ci_high"], 1)) == (22.2, 59.2)
    # every facet pools all 73 cast votes, except sex, which 13 of the 16 jurors left blank
    assert groups.groupby("facet", sort=False)["votes"].sum().to_dict() == {
        "group": 73,
        "expert": 73,
        "age_band": 73,
        "sex": 14,
    }

    jurors = stats.jurors.set_index("juror")
    assert list(stats.jurors.columns) == [
        "juror",
        "group",
        "expert",
        "age_band",
        "sex",
        "rounds",
        "votes",
        "hits",
        "hit_rate_pct",
    ]
    assert jurors.loc["J01", ["group", "expert", "age_band", "sex"]].tolist() == ["panel", "expert", "20s", "F"]
    assert jurors.loc["J16", ["group", "expert", "age_band", "sex"]].tolist() == ["online", "non-expert", "40s", None]
    for facet in stats.facets:  # groups and jurors count the same jurors and votes
        by_label = jurors.groupby(facet).agg(jurors=("votes", "size"), votes=("votes", "sum"), ai_votes=("hits", "sum"))
        block = groups[groups["facet"] == facet].set_index("group")[["jurors", "votes", "ai_votes"]]
        assert block.to_dict() == by_label.to_dict()
    # facets change nothing else
    plain = vote_stats(case_study_votes(), PLAYERS)
    assert stats.rounds.equals(plain.rounds) and stats.summary == plain.summary


def test_a_facet_without_any_label_has_no_block():
    votes = case_study_votes().assign(sex="", age_band=None)
    stats = vote_stats(votes, PLAYERS)
    assert stats.facets == ("group", "age_band", "sex")  # present columns, even blank ones
    assert stats.groups["facet"].tolist() == ["group", "group"]
    assert stats.jurors["sex"].isna().all() and stats.jurors["age_band"].isna().all()


def test_expert_cells_must_be_a_yes_or_no():
    votes = pd.DataFrame({"round": 1, "juror": ["J1", "J2"], "vote": ["AI", "Kid4"], "expert": ["yes", "maybe"]})
    with pytest.raises(
        ValueError,
        match=r"juror 'J2': expert must be yes/no, true/false, 1/0 or expert/non-expert, "
        r"not 'maybe'",
    ):
        vote_stats(votes, PLAYERS)


def test_a_juror_with_two_labels_of_a_facet_is_refused():
    votes = pd.DataFrame(
        {
            "round": [1, 2, 1, 2],
            "juror": ["J1", "J1", "J2", "J2"],
            "vote": ["AI", "Kid4", "AI", "AI"],
            "expert": [True, "yes", "no", None],
            "age_band": ["20s", None, "30s", "40s"],
        }
    )
    with pytest.raises(ValueError, match="juror 'J2' is in more than one age_band group"):
        vote_stats(votes, PLAYERS)
    with pytest.raises(ValueError, match="juror 'J1' is in more than one expert group"):
        vote_stats(votes.assign(expert=[True, "no", "no", None], age_band=None), PLAYERS)
    fine = vote_stats(votes.assign(age_band=["20s", None, "30s", "30s"]), PLAYERS)
    # True and "yes" are one label; J2's blank expert cell takes "non-expert"
    assert fine.jurors[["expert", "age_band"]].values.tolist() == [["expert", "20s"], ["non-expert", "30s"]]
    assert fine.groups[["facet", "group", "votes", "ai_votes"]].values.tolist() == [
        ["expert", "expert", 2, 1],
        ["expert", "non-expert", 2, 2],
        ["age_band", "20s", 2, 1],
        ["age_band", "30s", 2, 2],
    ]


# -------------------------------------------------------------------------------- several AIs


def test_ai_rounds_judge_each_ai_alone():
    stats = vote_stats(two_ai_votes(), TWO_AI_PLAYERS)
    ai_rounds = stats.ai_rounds
    assert list(ai_rounds.columns) == ["round", "player", "votes", "share_pct", "detection_pct", "passed"]
    assert ai_rounds[["round", "player", "votes"]].values.tolist() == [
        [1, "AI1", 3],
        [1, "AI2", 1],
        [2, "AI1", 1],
        [2, "AI2", 2],
    ]
    # shares of the 4 voting jurors; detection out of the 7 and 8 cast votes
    assert ai_rounds["share_pct"].tolist() == [75.0, 25.0, 25.0, 50.0]
    assert ai_rounds["detection_pct"].tolist() == pytest.approx([300 / 7, 100 / 7, 12.5, 25.0])
    # human-tie: top human 2 in round 1 (H1) is beaten by AI1's 3 only; round 2's H1 3 beats both
    assert ai_rounds["passed"].tolist() == [False, True, True, True]
    assert stats.rounds["ai_passed"].tolist() == [False, True]  # the round: judged by the best-detected AI
    # threshold 40 %: AI1's 42.9 % in round 1 is above; pooled, round 1 (57.1 %) is detected, round 2 (37.5 %) not
    strict = vote_stats(two_ai_votes(), TWO_AI_PLAYERS, pass_rule="threshold", threshold_pct=40)
    assert strict.ai_rounds["passed"].tolist() == [False, True, True, True]
    assert strict.rounds["ai_passed"].tolist() == [False, True]


def test_ai_rounds_under_the_chance_rule_test_each_ai_against_one_in_players():
    """10 jurors, 2 slots, 5 players: AI1 9, AI2 2, H1 4, H2 3, H3 2 of 20 cast votes.

    Pooled, 11 AI votes of 20 against 2 / 5: P(X >= 11) = 0.128, the round passes.  Alone, against
    1 / 5: AI1 P(X >= 9 | 20, 0.2) = 0.00998 (detected), AI2 P(X >= 2 | 20, 0.2) = 0.931 (passed).
    """
    players = pd.DataFrame({"name": ["H1", "H2", "H3", "AI1", "AI2"], "kind": ["human"] * 3 + ["ai"] * 2})
    jurors = [f"J{n}" for n in range(1, 11)]
    first = ["AI1"] * 9 + ["AI2"]
    second = ["AI2"] + ["H1"] * 4 + ["H2"] * 3 + ["H3"] * 2
    votes = pd.DataFrame({"round": 1, "juror": jurors * 2, "vote": first + second, "slot": [1] * 10 + [2] * 10})
    stats = vote_stats(votes, players, pass_rule="chance")
    assert binomial_tail(11, 20, 0.4) == pytest.approx(0.1275, abs=5e-5)
    assert stats.rounds["p_value"][0] == pytest.approx(binomial_tail(11, 20, 0.4), rel=1e-9)
    assert stats.rounds["ai_passed"].tolist() == [True]
    assert stats.ai_rounds["player"].tolist() == ["AI1", "AI2"]
    assert stats.ai_rounds["votes"].tolist() == [9, 2]
    assert stats.ai_rounds["share_pct"].tolist() == [90.0, 20.0]  # of the 10 jurors
    assert stats.ai_rounds["detection_pct"].tolist() == [45.0, 10.0]  # of the 20 cast votes
    assert binomial_tail(9, 20, 0.2) == pytest.approx(0.00998, abs=5e-6)
    assert binomial_tail(2, 20, 0.2) == pytest.approx(0.9308, abs=5e-5)
    assert stats.ai_rounds["passed"].tolist() == [False, True]
    # AI1's p = 0.00998 lies between 0.005 and 0.05
    assert vote_stats(votes, players, pass_rule="chance", alpha=0.005).ai_rounds["passed"].tolist() == [True, True]


@pytest.mark.parametrize("rule", PASS_RULES)
def test_with_one_ai_player_ai_rounds_repeat_the_rounds(rule):
    stats = vote_stats(case_study_votes(), PLAYERS, pass_rule=rule)
    ai_rounds, rounds = stats.ai_rounds, stats.rounds
    assert (ai_rounds["player"] == "AI").all()
    assert ai_rounds["round"].tolist() == rounds["round"].tolist()
    assert ai_rounds["votes"].tolist() == rounds["ai_votes"].tolist()
    assert ai_rounds["detection_pct"].tolist() == pytest.approx(rounds["detection_pct"].tolist())
    assert ai_rounds["passed"].tolist() == rounds["ai_passed"].tolist()
