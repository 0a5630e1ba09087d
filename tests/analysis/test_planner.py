"""The case-study planner: exact figures against hand computation and enumeration, simulation against exact."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from analysis.planner import (
    ASSUMPTIONS,
    Design,
    caught_curve,
    exact_applies,
    exact_round_pass,
    humans_all_at_most,
    interval_width,
    juror_ai_names,
    model_detection,
    plan,
    round_pass,
    rounds_passed,
    simulated_round_pass,
    smallest_jury,
)

CASE_STUDY = Design(jurors=16, rounds=5, players=5, ai_players=1, ai_votes=1, pass_rule="human-tie")
CASE_STUDY_RATE = 0.486


def binomial(n: int, k: int, p: float) -> float:
    return math.comb(n, k) * p**k * (1 - p) ** (n - k)


def within(simulated, exact: float, standard_errors: float = 4.0) -> bool:
    """The simulated estimate is within ``standard_errors`` standard errors of the exact value."""
    return abs(simulated.value - exact) <= standard_errors * simulated.std_error


# --- (a) chance and threshold against a hand-computed binomial ---------------------------------------------


def test_chance_and_threshold_match_a_binomial_computed_by_hand():
    # J = 5 jurors, P = 5 players (chance 0.2), d = 0.4.  P-values by hand, P(X >= k | 5, 0.2):
    tail = {k: sum(binomial(5, i, 0.2) for i in range(k, 6)) for k in range(6)}
    assert tail[3] == pytest.approx(0.05792)  # 10 * 0.008 * 0.64 + 5 * 0.0016 * 0.8 + 0.00032
    assert tail[4] == pytest.approx(0.00672)
    # alpha 0.05: k = 3 is not significant (0.0579 >= 0.05), k = 4 is: the AI passes iff k <= 3
    at_most_3 = sum(binomial(5, k, 0.4) for k in range(4))
    assert at_most_3 == pytest.approx(1 - (5 * 0.4**4 * 0.6 + 0.4**5)) == pytest.approx(0.91296)
    design = Design(jurors=5, rounds=1, players=5, pass_rule="chance", alpha=0.05)
    assert exact_round_pass(design, 0.4) == pytest.approx(0.91296, abs=1e-12)
    # alpha 0.06 makes k = 3 significant too: passes iff k <= 2
    at_most_2 = 0.6**5 + 5 * 0.4 * 0.6**4 + 10 * 0.4**2 * 0.6**3
    assert at_most_2 == pytest.approx(0.68256)
    assert exact_round_pass(design.with_(alpha=0.06), 0.4) == pytest.approx(0.68256, abs=1e-12)

    # threshold: detection = 20 k %; "at or below" passes, so 60 % lets k = 3 pass and 50 % does not
    threshold = design.with_(pass_rule="threshold")
    assert exact_round_pass(threshold.with_(threshold_pct=60), 0.4) == pytest.approx(0.91296, abs=1e-12)
    assert exact_round_pass(threshold.with_(threshold_pct=50), 0.4) == pytest.approx(0.68256, abs=1e-12)
    assert exact_round_pass(threshold.with_(threshold_pct=100), 0.4) == pytest.approx(1.0)
    assert exact_round_pass(threshold.with_(threshold_pct=0), 0.4) == pytest.approx(0.6**5)


def test_the_caught_curve_is_one_minus_the_round_pass_probability():
    for rule, extra in (("chance", {"alpha": 0.05}), ("threshold", {"threshold_pct": 55})):
        design = Design(jurors=1, rounds=1, players=4, pass_rule=rule, **extra)
        curve = caught_curve(design, 0.42, cap=60)
        for jurors in (1, 2, 7, 17, 18, 40, 60):
            assert curve[jurors - 1] == pytest.approx(
                1 - exact_round_pass(design.with_(jurors=jurors), 0.42), abs=1e-12
            )


# --- (b) human-tie against brute-force enumeration ---------------------------------------------------------


def brute_force_human_tie(jurors: int, players: int, rate: float) -> float:
    """Every vote vector: player 0 is the AI (probability d), the others humans ((1 - d) / (P - 1) each)."""
    human = (1 - rate) / (players - 1)
    passed = 0.0
    for votes in itertools.product(range(players), repeat=jurors):
        counts = np.bincount(votes, minlength=players)
        if counts[1:].max() >= counts[0]:  # some human drew at least as many votes as the AI
            passed += math.prod(rate if vote == 0 else human for vote in votes)
    return passed


@pytest.mark.parametrize(("jurors", "players", "rate"), [(4, 3, 0.4), (5, 3, 0.5), (6, 4, 0.3), (7, 5, 0.486)])
def test_exact_human_tie_matches_enumerating_every_vote_vector(jurors, players, rate):
    design = Design(jurors=jurors, rounds=1, players=players)
    assert exact_round_pass(design, rate) == pytest.approx(brute_force_human_tie(jurors, players, rate), abs=1e-12)


def test_exact_human_tie_by_hand_for_four_jurors_and_three_players():
    # J = 4, P = 3, d = 0.4, h = 0.3 per human.  The AI is caught when it tops the votes alone:
    # k = 4 (0.4^4); k = 3 (4 * 0.4^3 * 0.6); k = 2 with the other two split 1-1 (6 * 0.4^2 * 2 * 0.3^2)
    caught = 0.4**4 + 4 * 0.4**3 * 0.6 + 6 * 0.4**2 * 2 * 0.3**2
    assert caught == pytest.approx(0.352)
    assert exact_round_pass(Design(jurors=4, rounds=1, players=3), 0.4) == pytest.approx(1 - caught, abs=1e-12)


def test_humans_all_at_most_matches_the_multinomial():
    for votes, most, humans in [(6, 2, 3), (9, 3, 4), (5, 1, 5), (7, 4, 2), (0, 0, 3), (4, 0, 2)]:
        expected = sum(
            math.factorial(votes) / math.prod(math.factorial(c) for c in counts) / humans**votes
            for counts in itertools.product(range(most + 1), repeat=humans)
            if sum(counts) == votes
        )
        assert humans_all_at_most(votes, most, humans) == pytest.approx(expected, abs=1e-13), (votes, most, humans)


# --- (c) the simulation against the exact results -----------------------------------------------------------


@pytest.mark.parametrize(
    ("design", "rate"),
    [
        (Design(jurors=30, rounds=5, players=5, pass_rule="human-tie"), 0.35),
        (Design(jurors=30, rounds=5, players=5, pass_rule="chance"), 0.3),
        (Design(jurors=30, rounds=5, players=5, pass_rule="threshold", threshold_pct=40), 0.35),
        (Design(jurors=25, rounds=5, players=6, ai_players=2, ai_votes=1, pass_rule="chance"), 0.42),
        (
            Design(jurors=20, rounds=5, players=6, ai_players=2, ai_votes=2, pass_rule="threshold", threshold_pct=45),
            0.4,
        ),
    ],
)
def test_the_simulation_agrees_with_the_exact_result_within_four_standard_errors(design, rate):
    exact = exact_round_pass(design, rate)
    simulated = simulated_round_pass(design, rate, simulations=20_000, seed=7)
    assert simulated.method == "simulated"
    assert simulated.std_error == pytest.approx(math.sqrt(exact * (1 - exact) / 20_000), rel=0.05)
    assert within(simulated, exact), (simulated, exact)


def test_the_simulation_of_several_ais_matches_enumeration():
    # 4 jurors, 2 AIs (players 0, 1) and 2 humans, one name each: an AI with d / 2, a human with (1 - d) / 2
    rate, jurors = 0.45, 4
    probabilities = [rate / 2, rate / 2, (1 - rate) / 2, (1 - rate) / 2]
    passed = 0.0
    for votes in itertools.product(range(4), repeat=jurors):
        counts = np.bincount(votes, minlength=4)
        if counts[2:].max() >= counts[:2].max():  # human-tie judges the most-voted AI
            passed += math.prod(probabilities[vote] for vote in votes)
    design = Design(jurors=jurors, rounds=1, players=4, ai_players=2)
    assert not exact_applies(design)
    assert within(round_pass(design, rate, simulations=20_000, seed=3), passed)


def test_the_simulation_of_two_names_per_juror_matches_enumeration():
    # 3 jurors name 2 of 4 players (AIs 0, 1; humans 2, 3): a ~ Bin(2, d) AI names, each set uniform
    rate = 0.6
    named = {0: (1 - rate) ** 2, 1: 2 * rate * (1 - rate), 2: rate**2}
    pairs = list(itertools.combinations(range(4), 2))
    ways = {0: 1, 1: 4, 2: 1}  # pairs with a AIs: C(2, a) C(2, 2 - a)
    pair_probability = {pair: named[sum(p < 2 for p in pair)] / ways[sum(p < 2 for p in pair)] for pair in pairs}
    assert sum(pair_probability.values()) == pytest.approx(1.0)
    assert np.allclose(
        juror_ai_names(Design(jurors=3, rounds=1, players=4, ai_players=2, ai_votes=2), rate), [0.16, 0.48, 0.36]
    )
    passed = 0.0
    for ballots in itertools.product(pairs, repeat=3):
        counts = np.bincount([p for pair in ballots for p in pair], minlength=4)
        if counts[2:].max() >= counts[:2].max():
            passed += math.prod(pair_probability[pair] for pair in ballots)
    design = Design(jurors=3, rounds=1, players=4, ai_players=2, ai_votes=2)
    assert within(round_pass(design, rate, simulations=20_000, seed=5), passed)


def test_jurors_who_run_out_of_humans_name_ais():
    # 3 players, 2 AIs, 2 names: at most 1 human, so a = 2 - min(G, 1) with G ~ Bin(2, 1 - d) human outcomes
    design = Design(jurors=16, rounds=5, players=3, ai_players=2, ai_votes=2, pass_rule="chance")
    rate = 0.486
    assert np.allclose(juror_ai_names(design, rate), [0, 1 - rate**2, rate**2])
    assert model_detection(design, rate) == pytest.approx((1 + rate**2) / 2)  # 61.8 %
    assert not exact_applies(design)
    width = interval_width(design, rate, simulations=4_000)
    assert width.mean.method == "simulated" and width.votes == 160
    assert width.at_rate[0] < 100 * model_detection(design, rate) < width.at_rate[1]


# --- (d) the VTT case study's own design ------------------------------------------------------------------


def case_study_pass_by_fractions(rate: Fraction) -> Fraction:
    """P(a human draws at least as many votes as the AI): 16 jurors, 4 humans, every split of the others counted."""
    jurors, humans = 16, 4
    total = Fraction(0)
    for k in range(jurors + 1):
        others = jurors - k
        tie_or_more = Fraction(0)
        for counts in itertools.product(range(others + 1), repeat=humans - 1):
            last = others - sum(counts)
            if last < 0:
                continue
            split = (*counts, last)
            if max(split) >= k:
                ways = math.factorial(others) // math.prod(math.factorial(c) for c in split)
                tie_or_more += Fraction(ways, humans**others)
        total += math.comb(jurors, k) * rate**k * (1 - rate) ** (jurors - k) * tie_or_more
    return total


@pytest.fixture(scope="module")
def case_study_plan():
    return plan(CASE_STUDY, CASE_STUDY_RATE)


def test_the_case_study_design_lets_the_ai_pass_a_round_about_one_time_in_ten(case_study_plan):
    by_fractions = float(case_study_pass_by_fractions(Fraction(486, 1000)))
    assert by_fractions == pytest.approx(0.0948487232623, abs=1e-12)
    passed = case_study_plan.round_pass
    assert passed.method == "exact" and passed.std_error is None
    assert passed.value == pytest.approx(by_fractions, abs=1e-12)
    over = case_study_plan.rounds_passed
    assert over.half == 3
    assert over.expected.value == pytest.approx(5 * by_fractions)  # 0.474 rounds
    assert over.distribution[0] == pytest.approx((1 - by_fractions) ** 5)  # 60.8 %: the AI passes no round
    assert (
        over.at_least_half.value
        == pytest.approx(sum(binomial(5, r, by_fractions) for r in (3, 4, 5)))
        == pytest.approx(0.00736492, abs=1e-8)
    )
    assert over.every_round.value == pytest.approx(by_fractions**5) == pytest.approx(7.6764e-6, rel=1e-4)


def test_the_case_study_detection_interval(case_study_plan):
    pooled, one = case_study_plan.pooled_interval, case_study_plan.round_interval
    assert (pooled.votes, one.votes) == (80, 16)
    assert pooled.mean.value == pytest.approx(21.2683, abs=1e-4) and pooled.mean.method == "exact"
    assert pooled.median == pytest.approx(21.3476, abs=1e-4)
    assert one.mean.value == pytest.approx(42.8318, abs=1e-4)
    assert one.median == pytest.approx(43.7228, abs=1e-4)
    # the interval at exactly 48.6 % of 80 votes
    assert pooled.at_rate == pytest.approx((37.9656, 59.3627), abs=1e-4)
    # expected width by hand: sum over K ~ Bin(80, d) of the Wilson width at K
    z = 1.959963984540054
    by_hand = 0.0
    for k in range(81):
        p, n = k / 80, 80
        half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        by_hand += binomial(80, k, CASE_STUDY_RATE) * 200 * half
    assert pooled.mean.value == pytest.approx(by_hand, abs=1e-9)


def test_the_case_study_smallest_juries(case_study_plan):
    tie, chance, threshold = case_study_plan.smallest_juries
    assert [jury.pass_rule for jury in case_study_plan.smallest_juries] == ["human-tie", "chance", "threshold"]
    assert (tie.jurors, tie.power) == (11, 0.8)
    assert tie.caught.value == pytest.approx(1 - exact_round_pass(CASE_STUDY.with_(jurors=11), CASE_STUDY_RATE))
    assert tie.caught.value == pytest.approx(0.81766, abs=1e-5)
    assert 1 - exact_round_pass(CASE_STUDY.with_(jurors=10), CASE_STUDY_RATE) < 0.8  # 10 jurors fall short

    # chance: 17 jurors; by hand, the fewest AI votes of 17 that are significant against 20 %, and the power
    assert chance.jurors == 17
    critical = min(k for k in range(18) if sum(binomial(17, i, 0.2) for i in range(k, 18)) < 0.05)
    assert critical == 7
    power = sum(binomial(17, k, CASE_STUDY_RATE) for k in range(critical, 18))
    assert chance.caught.value == pytest.approx(power, abs=1e-12) == pytest.approx(0.80314, abs=1e-5)
    # 18 jurors need 8 AI votes and fall back below 80 %; from 20 jurors on every jury reaches it
    assert caught_curve(CASE_STUDY.with_(pass_rule="chance"), CASE_STUDY_RATE, cap=19)[17] < 0.8
    assert chance.steady_from == 20

    # threshold 70 %: d = 48.6 % is below it, so a bigger jury catches the AI less often
    assert threshold.jurors is None and threshold.caught is None
    assert "at or below the threshold" in threshold.note


def test_the_plan_states_its_assumptions_and_is_plain_data(case_study_plan):
    data = case_study_plan.to_dict()
    assert data["assumptions"] == list(ASSUMPTIONS)
    assert any("uniformly on the humans" in line for line in ASSUMPTIONS)
    assert any("independently" in line for line in ASSUMPTIONS)
    assert any("every juror votes" in line for line in ASSUMPTIONS)
    assert data["rate_pct"] == pytest.approx(48.6) and data["detection_pct"] == pytest.approx(48.6)
    assert data["design"]["chance_pct"] == pytest.approx(20.0)
    assert data["simulation"] is None  # everything exact


# --- (e) sanity: more jurors, narrower intervals; a better detected AI passes less --------------------------


def test_more_jurors_narrow_the_interval():
    widths = [interval_width(CASE_STUDY.with_(jurors=jurors), CASE_STUDY_RATE).mean.value for jurors in (4, 8, 16, 32)]
    assert widths == sorted(widths, reverse=True)
    # roughly 1 / sqrt(J): doubling the jury takes about 29 % off
    assert widths[3] / widths[2] == pytest.approx(1 / math.sqrt(2), rel=0.03)


@pytest.mark.parametrize("rule", ["human-tie", "chance", "threshold"])
def test_a_better_detected_ai_passes_less_often(rule):
    design = CASE_STUDY.with_(pass_rule=rule, threshold_pct=50)
    passing = [exact_round_pass(design, rate) for rate in (0.1, 0.2, 0.3, 0.486, 0.6, 0.8)]
    assert all(later < earlier for earlier, later in zip(passing, passing[1:]))


# --- the smallest jury when none suffices, and the rounds' standard errors -----------------------------------


def test_at_or_below_chance_no_jury_catches_the_ai():
    chance = smallest_jury(CASE_STUDY.with_(pass_rule="chance"), 0.2)
    assert chance.jurors is None and "at or below chance" in chance.note
    tie = smallest_jury(CASE_STUDY, 0.15)
    assert tie.jurors is None and "at or below chance" in tie.note
    barely = smallest_jury(CASE_STUDY.with_(pass_rule="chance"), 0.21, cap=500)
    assert barely.jurors is None and barely.note == "no jury of up to 500 jurors reaches it"


def test_beyond_two_hundred_jurors_human_tie_is_searched_by_doubling_and_bisection():
    # d = 25 % barely beats chance (20 %): 200 jurors are not enough, doubling finds 400, bisection 246
    jury = smallest_jury(CASE_STUDY, 0.25)
    assert jury.jurors == 246 and jury.method == "exact for every jury of 1 to 200 jurors, then doubling and bisection"
    caught = [1 - exact_round_pass(CASE_STUDY.with_(jurors=jurors), 0.25) for jurors in (200, 245, 246)]
    assert caught[0] < caught[1] < 0.8 <= caught[2] == pytest.approx(jury.caught.value)


def test_a_simulated_round_carries_its_standard_error_over_the_rounds():
    design = Design(jurors=16, rounds=4, players=6, ai_players=2)
    result = plan(design, 0.486, simulations=5_000, seed=2)
    passed = result.round_pass
    assert passed.method == "simulated"
    assert passed.std_error == pytest.approx(math.sqrt(passed.value * (1 - passed.value) / 5_000))
    assert result.rounds_passed.expected.std_error == pytest.approx(4 * passed.std_error)
    assert result.to_dict()["simulation"] == {"rounds": 5_000, "seed": 2}
    # the same seed gives the same figures
    assert plan(design, 0.486, simulations=5_000, seed=2).round_pass == passed
    assert rounds_passed(4, passed).distribution == pytest.approx(
        [math.comb(4, r) * passed.value**r * (1 - passed.value) ** (4 - r) for r in range(5)]
    )


def test_designs_are_checked():
    with pytest.raises(ValueError, match="players .* must exceed ai_players"):
        Design(jurors=16, rounds=5, players=2, ai_players=2)
    with pytest.raises(ValueError, match="ai_votes .* cannot exceed ai_players"):
        Design(jurors=16, rounds=5, ai_votes=2)
    with pytest.raises(ValueError, match="jurors must be at least 1"):
        Design(jurors=0, rounds=5)
    with pytest.raises(ValueError, match="unknown pass_rule"):
        Design(jurors=16, rounds=5, pass_rule="majority")
    with pytest.raises(ValueError, match="detection rate"):
        plan(CASE_STUDY, 1.2)
    with pytest.raises(ValueError, match="no exact computation"):
        exact_round_pass(Design(jurors=16, rounds=5, players=6, ai_players=2), 0.5)
