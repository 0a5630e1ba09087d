"""Designing a case study before running it: what a jury of a given size can show.

A :class:`Design` is J jurors, R rounds, P players per round of whom A are AI players, and v "who is the AI?" votes
per juror and round (v > 1 only with several AI players: v distinct names).  Its pass rule is judged by
:mod:`analysis.votes`' own code.  Every figure rests on one model, said in words in :data:`ASSUMPTIONS`: each vote
names an AI with the assumed detection rate d and otherwise a human the juror has not named yet; jurors and rounds
are independent; nobody abstains.  Figures are exact where that is cheap (:func:`exact_round_pass`) and simulated
with a seeded numpy Generator otherwise (:func:`simulated_round_pass`, which draws the same model by another route,
so the two check each other); each :class:`Estimate` says which.  How each figure is computed: docs/analysis.md,
"The study planner".
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from scipy.special import bdtrc, gammaln, xlog1py, xlogy

from .votes import PASS_RULES, PassCriterion, p_greater, percent, wilson_interval

DEFAULT_RATE = 0.486  # the VTT case study's mean detection over its 5 rounds (62.5, 75, 37.5, 55.6, 12.5 %)
DEFAULT_POWER = 0.8
DEFAULT_SIMULATIONS = 20_000
DEFAULT_SEED = 1
JURY_CAP = 10_000
EXACT_JURY_LIMIT = 2_000  # human-tie exact: (P - 1) convolutions of about J^2 / 4 steps per AI-vote count
EXACT_HUMAN_LIMIT = 10
SCAN_LIMIT = 200  # human-tie: juries tried one by one up to here, then by doubling and bisection

ASSUMPTIONS = (
    "each vote names an AI player with the assumed detection rate, the same for every juror and round",
    "a vote that does not name an AI falls uniformly on the humans (the juror's not yet named ones)",
    "with several AI players, a vote naming an AI picks one uniformly among those the juror has not named yet",
    "jurors vote independently of each other, and rounds are independent",
    "every juror votes in every round (no abstentions)",
)


@dataclass(frozen=True)
class Design:
    """A candidate case study: the jury, the rounds, the players of a round and the pass rule.

    ``players`` counts every player of a round, ``ai_players`` of them AIs; ``ai_votes`` is v, the
    names each juror gives per round (1 <= v <= ai_players).  ValueError names the field at fault.
    """

    jurors: int
    rounds: int
    players: int = 5
    ai_players: int = 1
    ai_votes: int = 1
    pass_rule: str = "human-tie"
    alpha: float = 0.05
    threshold_pct: float = 70.0

    def __post_init__(self) -> None:
        for name in ("jurors", "rounds", "players", "ai_players", "ai_votes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, not {getattr(self, name)}")
        if self.players <= self.ai_players:
            raise ValueError(
                f"players ({self.players}) must exceed ai_players ({self.ai_players}): a round needs a human"
            )
        if self.ai_votes > self.ai_players:
            raise ValueError(f"ai_votes ({self.ai_votes}) cannot exceed ai_players ({self.ai_players})")
        if self.pass_rule not in PASS_RULES:
            raise ValueError(f"unknown pass_rule {self.pass_rule!r}; choose one of {', '.join(PASS_RULES)}")
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must lie strictly between 0 and 1, not {self.alpha}")
        if not 0 <= self.threshold_pct <= 100:
            raise ValueError(f"threshold_pct must lie between 0 and 100, not {self.threshold_pct}")

    @property
    def humans(self) -> int:
        return self.players - self.ai_players

    @property
    def chance(self) -> float:
        """The detection blind votes reach: AI players / players (as in :mod:`analysis.votes`)."""
        return self.ai_players / self.players

    @property
    def round_votes(self) -> int:
        """Cast votes in a round: J v."""
        return self.jurors * self.ai_votes

    def with_(self, **changes) -> Design:
        """A copy with some fields changed (checked again)."""
        return Design(**{**asdict(self), **changes})


@dataclass(frozen=True)
class Estimate:
    """A probability or width with how it was obtained: ``exact``, or ``simulated`` with its standard error."""

    value: float
    method: str
    std_error: float | None = None


@dataclass(frozen=True)
class RoundsPassed:
    """How many of R independent rounds the AI passes, each with probability ``round_pass``."""

    distribution: tuple[float, ...]  # P(exactly r rounds passed), r = 0..R
    expected: Estimate
    at_least_half: Estimate  # P(passes >= ceil(R / 2) rounds)
    every_round: Estimate
    half: int  # ceil(R / 2)


@dataclass(frozen=True)
class IntervalWidth:
    """The Wilson 95 % interval of detection over ``votes`` cast votes: its width in percentage points."""

    votes: int
    mean: Estimate
    median: float
    at_rate: tuple[float, float]  # the interval should detection come out exactly as expected (``model_detection``)


@dataclass(frozen=True)
class JurySize:
    """The smallest jury J (None: none up to ``cap``) with P(the AI is caught in a round) >= ``power``.

    ``caught``: that probability at ``jurors``; ``steady_from``: the smallest J from which every jury
    up to ``cap`` reaches the power (known only where the whole curve is exact, else None);
    ``method`` says how J was searched; ``note`` why none was found, when none was.
    """

    pass_rule: str
    power: float
    jurors: int | None
    caught: Estimate | None
    steady_from: int | None
    cap: int
    method: str
    note: str | None = None


@dataclass(frozen=True)
class Plan:
    """Everything :func:`plan` says about a design at an assumed detection ``rate`` (0..1)."""

    design: Design
    rate: float
    detection: float  # the detection the model expects: the rate, or more when the humans run out
    round_pass: Estimate
    rounds_passed: RoundsPassed
    pooled_interval: IntervalWidth
    round_interval: IntervalWidth
    smallest_juries: tuple[JurySize, ...]  # the design's own rule first, then the other two
    simulations: int
    seed: int
    assumptions: tuple[str, ...] = ASSUMPTIONS

    @property
    def simulated(self) -> bool:
        """Whether any figure was simulated (then ``simulations`` and ``seed`` matter)."""
        estimates = [self.round_pass, self.pooled_interval.mean, self.round_interval.mean]
        estimates += [jury.caught for jury in self.smallest_juries if jury.caught is not None]
        return any(estimate.method == "simulated" for estimate in estimates) or any(
            "simulat" in jury.method for jury in self.smallest_juries
        )

    def to_dict(self) -> dict:
        """Plain JSON-ready data (no NaN)."""
        data = asdict(self)
        data["design"] = {**data["design"], "chance_pct": 100.0 * self.design.chance}
        data["rate_pct"] = 100.0 * data.pop("rate")
        data["detection_pct"] = 100.0 * data.pop("detection")
        data["rounds_passed"]["distribution"] = list(data["rounds_passed"]["distribution"])
        for interval in ("pooled_interval", "round_interval"):
            data[interval]["at_rate"] = list(data[interval]["at_rate"])
        data["smallest_juries"] = list(data["smallest_juries"])
        data["assumptions"] = list(data["assumptions"])
        data["simulation"] = {"rounds": self.simulations, "seed": self.seed} if self.simulated else None
        del data["simulations"], data["seed"]
        return data


# --- the round: exact ---------------------------------------------------------------------------------------


def binomial_pmf(trials: int, p: float) -> np.ndarray:
    """P(X = k) for k = 0..trials, X ~ Binomial(trials, p) (in log space: no overflow for large juries)."""
    k = np.arange(trials + 1)
    log_pmf = gammaln(trials + 1) - gammaln(k + 1) - gammaln(trials - k + 1) + xlogy(k, p) + xlog1py(trials - k, -p)
    return np.exp(log_pmf)


def humans_all_at_most(votes: int, most: int, humans: int) -> float:
    """P(no human gets more than ``most`` of ``votes`` votes falling independently and uniformly on ``humans``).

    The multinomial probability m! / H^m * sum over (c_1..c_H), each c_i <= most, sum m, of prod 1 / c_i!
    is computed as P(H independent Poisson(m / H) counts are all <= most and add up to m) divided by
    P(Poisson(m) = m): truncated Poisson probabilities convolved H times (positive terms only).
    """
    if votes == 0:
        return 1.0
    if most < 0 or humans * most < votes:
        return 0.0
    if most >= votes:
        return 1.0
    width = min(most, votes) + 1
    mean = votes / humans  # centres the Poisson weights on the counts that matter: no underflow
    counts = np.arange(width)
    weights = np.exp(xlogy(counts, mean) - mean - gammaln(counts + 1))
    total = np.ones(1)
    for _ in range(humans):
        total = np.convolve(total, weights)[: votes + 1]  # sums beyond ``votes`` never come back down
    at_votes = math.exp(xlogy(votes, votes) - votes - gammaln(votes + 1))
    return float(np.clip(total[votes] / at_votes, 0.0, 1.0))


def exact_applies(design: Design) -> bool:
    """Whether :func:`exact_round_pass` can compute the design's round pass probability."""
    if design.pass_rule == "human-tie":
        return design.ai_players == 1 and design.jurors <= EXACT_JURY_LIMIT and design.humans <= EXACT_HUMAN_LIMIT
    return design.humans >= design.ai_votes  # every slot is then a Bernoulli(rate) trial


def exact_round_pass(design: Design, rate: float) -> float:
    """P(the AI passes one round), exactly (ValueError where :func:`exact_applies` is False).

    ``chance``/``threshold``: sum over k of P(K = k) [the rule passes k AI votes of J v], K ~ Bin(J v, d).
    ``human-tie`` (one AI): sum over k of P(K = k) P(some human gets >= k of the other J - k votes).
    """
    _check_rate(rate)
    if not exact_applies(design):
        raise ValueError(f"no exact computation for this design ({_why_not_exact(design)}): simulate it")
    n = design.round_votes
    pmf = binomial_pmf(n, rate)
    if design.pass_rule != "human-tie":
        return float(pmf[_rule_passes(design, np.arange(n + 1))].sum())
    # k = 0: a human has at least as many votes (0) as the AI; beyond, skip terms below double precision
    passed = pmf[0]
    for k in np.flatnonzero(pmf > 1e-18):
        if k > 0:
            passed += pmf[k] * (1.0 - humans_all_at_most(n - k, k - 1, design.humans))
    return float(min(passed, 1.0))


def _rule_passes(design: Design, ai_votes: np.ndarray, top_ai=None, top_human=None) -> np.ndarray:
    """Whether the AI passes rounds with these AI votes (and top counts), by ``analysis.votes``' own rule."""
    ai_votes = np.asarray(ai_votes)
    n = design.round_votes
    rule = PassCriterion(design.pass_rule, design.alpha, design.threshold_pct)
    top_ai = ai_votes if top_ai is None else top_ai
    top_human = np.zeros_like(ai_votes) if top_human is None else top_human
    passed = rule.passed(
        top_human, top_ai, percent(ai_votes, n), p_greater(ai_votes, np.full_like(ai_votes, n), design.chance), True
    )
    return passed.to_numpy(dtype=bool)


# --- the round: simulated -----------------------------------------------------------------------------------


def juror_ai_names(design: Design, rate: float) -> np.ndarray:
    """P(a juror names a AI players in a round), a = 0..v: v slots, humans named = min(Bin(v, 1 - d), P - A)."""
    v, humans = design.ai_votes, design.humans
    human_outcomes = binomial_pmf(v, 1.0 - rate)
    named = np.zeros(v + 1)
    for g, probability in enumerate(human_outcomes):
        named[v - min(g, humans)] += probability
    return named / named.sum()


def model_detection(design: Design, rate: float) -> float:
    """The share of votes naming an AI the model expects: ``rate``, unless jurors run out of humans to name."""
    named = juror_ai_names(design, rate)
    return float(named @ np.arange(design.ai_votes + 1)) / design.ai_votes


def simulate_rounds(design: Design, rate: float, simulations: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Simulated rounds: per round the AI votes, the most-voted AI's and the most-voted human's votes.

    Jurors are first split by how many AIs they name (multinomial); then, player by player, each
    group of jurors still needing r names among the m players left names this player with
    probability r / m (binomial).  That gives each juror a uniformly random set of distinct names.
    """
    _check_rate(rate)
    groups = rng.multinomial(design.jurors, juror_ai_names(design, rate), size=simulations)
    ai_counts = _name_players(groups, design.ai_players, rng)
    human_counts = _name_players(groups[:, ::-1], design.humans, rng)  # a juror naming a AIs names v - a humans
    return {
        "ai_votes": ai_counts.sum(axis=1),
        "top_ai": ai_counts.max(axis=1),
        "top_human": human_counts.max(axis=1),
    }


def _name_players(needing: np.ndarray, players: int, rng: np.random.Generator) -> np.ndarray:
    """Votes per player when needing[:, r] jurors each name r distinct players of ``players``, uniformly."""
    needing = needing.copy()
    slots = np.arange(needing.shape[1])
    counts = np.empty((needing.shape[0], players), dtype=np.int64)
    for player in range(players):
        left = players - player
        chosen = rng.binomial(needing, np.minimum(slots / left, 1.0))
        counts[:, player] = chosen.sum(axis=1)
        needing -= chosen
        needing[:, :-1] += chosen[:, 1:]  # a juror who named this player needs one name fewer
    return counts


def simulated_round_pass(
    design: Design, rate: float, simulations: int = DEFAULT_SIMULATIONS, seed: int = DEFAULT_SEED
) -> Estimate:
    """P(the AI passes one round), simulated: the share of ``simulations`` seeded rounds it passes."""
    rounds = simulate_rounds(design, rate, simulations, np.random.default_rng(seed))
    passed = _rule_passes(design, rounds["ai_votes"], rounds["top_ai"], rounds["top_human"])
    share = float(passed.mean())
    return Estimate(share, "simulated", math.sqrt(share * (1 - share) / simulations))


def round_pass(
    design: Design, rate: float, simulations: int = DEFAULT_SIMULATIONS, seed: int = DEFAULT_SEED
) -> Estimate:
    """P(the AI passes one round): exact where :func:`exact_applies`, simulated otherwise."""
    if exact_applies(design):
        return Estimate(exact_round_pass(design, rate), "exact")
    return simulated_round_pass(design, rate, simulations, seed)


# --- over the rounds ----------------------------------------------------------------------------------------


def rounds_passed(rounds: int, round_pass: Estimate) -> RoundsPassed:
    """The number of rounds passed out of ``rounds`` independent ones: Binomial(R, p).

    A simulated p carries its standard error over by the delta method.
    """
    p, se = round_pass.value, round_pass.std_error
    half = math.ceil(rounds / 2)
    distribution = binomial_pmf(rounds, p)
    at_least_half = float(distribution[half:].sum())
    every = p**rounds

    def carried(value: float, slope: float) -> Estimate:
        return Estimate(value, round_pass.method, None if se is None else abs(slope) * se)

    # d/dp P(X >= c) = R C(R-1, c-1) p^(c-1) (1-p)^(R-c), the Beta(c, R-c+1) density
    tail_slope = rounds * math.comb(rounds - 1, half - 1) * p ** (half - 1) * (1 - p) ** (rounds - half)
    return RoundsPassed(
        distribution=tuple(float(x) for x in distribution),
        expected=carried(rounds * p, rounds),
        at_least_half=carried(at_least_half, tail_slope),
        every_round=carried(every, rounds * p ** (rounds - 1)),
        half=half,
    )


# --- the detection interval ---------------------------------------------------------------------------------


def wilson_width_pct(ai_votes, votes: int) -> np.ndarray:
    """Width in percentage points of the Wilson 95 % interval of ``ai_votes`` out of ``votes``."""
    low, high = wilson_interval(np.asarray(ai_votes, dtype=float), np.full(np.shape(ai_votes), votes))
    return high - low


def interval_width(
    design: Design,
    rate: float,
    rounds: int | None = None,
    simulations: int = DEFAULT_SIMULATIONS,
    seed: int = DEFAULT_SEED,
) -> IntervalWidth:
    """The Wilson 95 % interval of detection pooled over ``rounds`` rounds (default: the design's).

    Exact over K ~ Binomial(J v R, d) when the humans never run out (P - A >= v); otherwise K is
    simulated as the sum of the jurors' AI names (``simulations`` draws).
    """
    _check_rate(rate)
    rounds = design.rounds if rounds is None else rounds
    votes = design.round_votes * rounds
    low, high = wilson_interval(np.array([model_detection(design, rate) * votes]), np.array([votes]))
    at_rate = (float(low[0]), float(high[0]))
    if design.humans >= design.ai_votes:
        pmf = binomial_pmf(votes, rate)
        widths = wilson_width_pct(np.arange(votes + 1), votes)
        order = np.argsort(widths, kind="stable")
        median = float(widths[order][np.searchsorted(np.cumsum(pmf[order]), 0.5)])
        return IntervalWidth(votes, Estimate(float(pmf @ widths), "exact"), median, at_rate)
    rng = np.random.default_rng(seed)
    named = rng.multinomial(design.jurors * rounds, juror_ai_names(design, rate), size=simulations)
    widths = wilson_width_pct(named @ np.arange(design.ai_votes + 1), votes)
    mean = Estimate(float(widths.mean()), "simulated", float(widths.std(ddof=1) / math.sqrt(simulations)))
    return IntervalWidth(votes, mean, float(np.median(widths)), at_rate)


# --- the smallest jury --------------------------------------------------------------------------------------


def caught_curve(design: Design, rate: float, cap: int = JURY_CAP) -> np.ndarray:
    """P(the AI is caught in a round) for J = 1..cap under ``chance`` or ``threshold``, exactly.

    For each J the rule's critical AI-vote count is found (``threshold``: the most AI votes still at
    or below the threshold; ``chance``: the fewest whose binomial test is significant, by bisection
    over k, the p-value falling as k grows) and P(K beyond it) = bdtrc(..., J v, d).
    """
    _check_rate(rate)
    if design.pass_rule == "human-tie" or design.humans < design.ai_votes:
        raise ValueError("caught_curve needs the chance or threshold rule and P - A >= v (a binomial AI-vote count)")
    n = np.arange(1, cap + 1, dtype=np.int64) * design.ai_votes
    # bisection on the rule itself (so rounding matches analysis.votes); both rules pass k = 0 and
    # turn to "fails" once, as k grows: invariant k <= passing passes, k >= failing fails
    passing, failing = np.zeros_like(n), n + 1
    while np.any(open_ := failing - passing > 1):
        middle = (passing + failing) // 2
        ok = _passes_curve(design, middle, n)
        passing = np.where(open_ & ok, middle, passing)
        failing = np.where(open_ & ~ok, middle, failing)
    return bdtrc(passing, n, rate)  # P(K > the most AI votes that pass); 0 when every count passes


def _passes_curve(design: Design, ai_votes: np.ndarray, votes: np.ndarray) -> np.ndarray:
    """The rule's verdict on ``ai_votes`` of ``votes`` (chance / threshold), element-wise."""
    rule = PassCriterion(design.pass_rule, design.alpha, design.threshold_pct)
    zeros = np.zeros_like(ai_votes)
    detection = percent(ai_votes, votes)
    p_value = p_greater(ai_votes, votes, design.chance)
    return rule.passed(zeros, zeros, detection, p_value, True).to_numpy(dtype=bool)


def smallest_jury(
    design: Design,
    rate: float,
    power: float = DEFAULT_POWER,
    cap: int = JURY_CAP,
    simulations: int = DEFAULT_SIMULATIONS,
    seed: int = DEFAULT_SEED,
) -> JurySize:
    """The smallest J (design's jury size ignored) with P(the AI fails the rule in a round) >= ``power``.

    * ``chance``/``threshold`` with a binomial AI-vote count: the exact curve for every J = 1..cap
      (:func:`caught_curve`), so the answer is the true smallest J and ``steady_from`` is known.
    * ``human-tie`` with one AI: exact for J = 1..:data:`SCAN_LIMIT` one by one, then doubling and
      bisection (exact up to :data:`EXACT_JURY_LIMIT` jurors, simulated beyond); the bisection assumes
      the probability rises with J there (the even/odd sawtooth of small juries has faded by then).
    * Otherwise doubling and bisection on simulated rounds (same seed at every J).

    The probability is not monotone in J (a tie needs an even split; a test's critical count moves
    in steps), so a jury a little larger than the answer can fall just short of the power.
    """
    _check_rate(rate)
    if not 0 < power < 1:
        raise ValueError(f"power must lie strictly between 0 and 1, not {power}")
    unreachable = _never_caught(design, rate, power)

    def answer(jurors, caught, method, steady=None):
        note = None if jurors is not None else (unreachable or f"no jury of up to {cap:,} jurors reaches it")
        return JurySize(design.pass_rule, power, jurors, caught, steady, cap, method, note)

    if design.pass_rule != "human-tie" and design.humans >= design.ai_votes:
        curve = caught_curve(design, rate, cap)
        method = f"exact: every jury of 1 to {cap:,} jurors computed"
        reached = np.flatnonzero(curve >= power)
        if not len(reached):
            return answer(None, None, method)
        short = np.flatnonzero(curve < power)  # index i is J = i + 1
        steady = 1 if not len(short) else int(short[-1]) + 2 if short[-1] + 1 < cap else None
        return answer(int(reached[0]) + 1, Estimate(float(curve[reached[0]]), "exact"), method, steady)
    if unreachable:  # proven: no need to search
        return answer(None, None, "not searched: proven out of reach")

    methods = set()

    def caught_at(jurors: int) -> Estimate:
        passed = round_pass(design.with_(jurors=jurors), rate, simulations, seed)
        methods.add(passed.method)
        return Estimate(1.0 - passed.value, passed.method, passed.std_error)

    start = 1
    if exact_applies(design.with_(jurors=1)):
        for jurors in range(1, min(SCAN_LIMIT, cap) + 1):
            caught = caught_at(jurors)
            if caught.value >= power:
                return answer(jurors, caught, f"exact: juries of 1 to {jurors} jurors tried in turn")
        start = min(SCAN_LIMIT, cap)
        jurors, caught = _double_and_bisect(caught_at, power, start, cap)
        method = f"exact for every jury of 1 to {start} jurors, then doubling and bisection"
        if "simulated" in methods:
            method += f" (simulated beyond {EXACT_JURY_LIMIT:,} jurors: {simulations:,} rounds per jury, seed {seed})"
        return answer(jurors, caught, method)
    jurors, caught = _double_and_bisect(caught_at, power, start, cap)
    return answer(jurors, caught, f"simulated ({simulations:,} rounds per jury, seed {seed}), doubling and bisection")


def _double_and_bisect(caught_at, power: float, start: int, cap: int) -> tuple[int | None, Estimate | None]:
    """The first J reaching ``power`` on J = start, 2 start, 4 start ... cap, then bisection below it."""
    failing, jurors = start, start
    first = caught_at(start)
    if first.value >= power:
        return start, first
    while jurors < cap:
        failing, jurors = jurors, min(2 * jurors, cap)
        caught = caught_at(jurors)
        if caught.value >= power:
            break
    else:
        return None, None
    while jurors - failing > 1:
        middle = (failing + jurors) // 2
        probe = caught_at(middle)
        if probe.value >= power:
            jurors, caught = middle, probe
        else:
            failing = middle
    return jurors, caught


def _never_caught(design: Design, rate: float, power: float) -> str | None:
    """Why no jury can reach ``power``, when that is proven; None otherwise."""
    chance_pct = f"{100 * design.chance:.1f}%"
    if (
        design.pass_rule == "chance"
        and design.humans >= design.ai_votes
        and rate <= design.chance
        and power > design.alpha
    ):
        # the test's rejection region is an upper tail: at or below chance it is hit at most alpha of the time
        return (
            f"no jury can: at or below chance ({chance_pct}) the test finds the AI at most "
            f"{100 * design.alpha:g}% of the time, whatever the jury"
        )
    if design.pass_rule == "human-tie" and design.ai_players == 1 and rate <= design.chance and power > design.chance:
        # at or below chance each human is at least as likely to be named as the AI: swapping the AI's
        # count with a human's shows the AI tops the votes alone no more often than any human does
        return (
            f"no jury can: at or below chance ({chance_pct}) the AI tops the votes alone at most "
            f"{chance_pct} of the time, whatever the jury"
        )
    if design.pass_rule == "threshold" and design.humans >= design.ai_votes and 100 * rate <= design.threshold_pct:
        # Hoeffding: P(K / n > t) <= exp(-2 n (t - d)^2) shrinks with n; a small jury may still get lucky
        return (
            f"no jury reaches it: at or below the threshold ({design.threshold_pct:g}%) a bigger jury "
            "finds detection above it less often, not more"
        )
    return None


# --- the whole plan -----------------------------------------------------------------------------------------


def plan(
    design: Design,
    rate: float = DEFAULT_RATE,
    *,
    power: float = DEFAULT_POWER,
    simulations: int = DEFAULT_SIMULATIONS,
    seed: int = DEFAULT_SEED,
    cap: int = JURY_CAP,
) -> Plan:
    """What ``design`` can show if jurors name the AI with probability ``rate`` (0..1).

    The smallest jury is given for the design's own pass rule and for the other two (same alpha and
    threshold), so a plan shows what each rule asks of the jury.
    """
    _check_rate(rate)
    if simulations < 2:
        raise ValueError(f"simulations must be at least 2, not {simulations}")
    passed = round_pass(design, rate, simulations, seed)
    rules = (design.pass_rule, *(rule for rule in PASS_RULES if rule != design.pass_rule))
    return Plan(
        design=design,
        rate=rate,
        detection=model_detection(design, rate),
        round_pass=passed,
        rounds_passed=rounds_passed(design.rounds, passed),
        pooled_interval=interval_width(design, rate, simulations=simulations, seed=seed),
        round_interval=interval_width(design, rate, rounds=1, simulations=simulations, seed=seed),
        smallest_juries=tuple(
            smallest_jury(design.with_(pass_rule=rule), rate, power, cap, simulations, seed) for rule in rules
        ),
        simulations=simulations,
        seed=seed,
    )


def _check_rate(rate: float) -> None:
    if not 0 <= rate <= 1:
        raise ValueError(f"the detection rate must lie between 0 and 1, not {rate}")


def _why_not_exact(design: Design) -> str:
    if design.pass_rule != "human-tie":
        return f"{design.ai_votes} votes per juror but only {design.humans} humans"
    if design.ai_players > 1:
        return "several AI players"
    return f"more than {EXACT_JURY_LIMIT:,} jurors or {EXACT_HUMAN_LIMIT} humans"
