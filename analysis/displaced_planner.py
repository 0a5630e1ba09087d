"""Planning a displaced jury's size (``vtt plan displaced``): how many people, each judging ``R`` rounds of a finished
session, give the pooled detection a target precision or a target power.

A displaced juror casts one vote per round judged, so ``n`` jurors give ``N = n R`` votes, treated as independent (as
the reports treat them; one juror's votes are not, so read the sizes as lower bounds).  Formulas (docs/planning.md,
"A displaced jury's size"), with ``p`` the assumed detection of the displaced jury and ``z_q`` the standard normal
quantile:

* **width**: the Wilson 95 % interval at ``p`` with ``N`` votes is ``2 z sqrt(p(1-p)/N + z²/(4N²)) / (1 + z²/N)``
  wide (z = z_0.975); ``N`` is the smallest count at or under the target width (the width falls as ``N`` grows);
* **against chance** ``c`` (AI players / players), one-sided at ``alpha`` as the chance pass rule:
  ``N = ceil(((z_(1-alpha) sqrt(c(1-c)) + z_power sqrt(p(1-p))) / (p - c))²)``;
* **against the live jury** (detection ``p1`` over ``N1`` votes), two-sided at ``alpha`` as the reports' test across
  juries (normal approximation of it): the power with ``N`` votes is
  ``Phi((|p - p1| - z_(1-alpha/2) sqrt(pbar(1-pbar)(1/N1 + 1/N))) / sqrt(p1(1-p1)/N1 + p(1-p)/N))``, ``pbar`` the
  pooled share; ``N`` is the smallest count reaching the power (found by doubling, then bisection).  The live jury's
  own ``N1`` bounds it: with ``N`` unbounded the power tends to
  ``Phi((|p - p1| - z_(1-alpha/2) sqrt(p(1-p)/N1)) / sqrt(p1(1-p1)/N1))``, and a target above that is unreachable.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from scipy.special import ndtr, ndtri

Z95 = float(ndtri(0.975))
VOTES_CAP = 100_000_000  # a search stops here: "unreachable"


@dataclass(frozen=True)
class DisplacedSize:
    """The displaced jury a target needs: ``votes`` (N) and ``jurors`` (ceil(N / rounds_per_juror)), None when it is
    unreachable (``note`` says why); ``achieved``: the width (percentage points) or the power at that size."""

    target: str  # "width", "chance" or "live"
    rounds_per_juror: int
    rate: float  # the displaced jury's assumed detection, 0-1
    votes: int | None
    jurors: int | None
    achieved: float | None
    note: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def wilson_width(rate: float, votes: int) -> float:
    """The width (0-1) of the Wilson 95 % interval around ``rate`` with ``votes`` votes (not
    :func:`analysis.planner.wilson_width_pct`, in percentage points of counted AI names)."""
    z2 = Z95 * Z95
    return 2 * Z95 * math.sqrt(rate * (1 - rate) / votes + z2 / (4 * votes * votes)) / (1 + z2 / votes)


def for_width(rate: float, width: float, rounds_per_juror: int) -> DisplacedSize:
    """The jurors whose pooled votes narrow the Wilson interval at ``rate`` to ``width`` (0-1) or less."""
    _check(rate, rounds_per_juror)
    if not 0 < width < 1:
        raise ValueError(f"the width must be between 0 and 100 percentage points, not {100 * width:g}")
    votes = _smallest(lambda n: wilson_width(rate, n) <= width)
    return _size("width", rate, rounds_per_juror, votes, wilson_width(rate, votes) if votes else None)


def power_against_chance(rate: float, chance: float, votes: int, alpha: float) -> float:
    """The power of the one-sided test of detection above ``chance`` with ``votes`` votes (normal approximation)."""
    z_alpha = float(ndtri(1 - alpha))
    return float(ndtr(((rate - chance) * math.sqrt(votes) - z_alpha * math.sqrt(chance * (1 - chance))) / _sd(rate)))


def against_chance(rate: float, chance: float, power: float, alpha: float, rounds_per_juror: int) -> DisplacedSize:
    """The jurors whose votes tell a detection of ``rate`` from ``chance`` (one-sided at ``alpha``) with ``power``."""
    _check(rate, rounds_per_juror)
    if rate <= chance:
        return _size("chance", rate, rounds_per_juror, None, None, "a detection at or below chance is never above it")
    z_alpha, z_power = float(ndtri(1 - alpha)), float(ndtri(power))
    root = (z_alpha * math.sqrt(chance * (1 - chance)) + z_power * math.sqrt(rate * (1 - rate))) / (rate - chance)
    votes = max(1, math.ceil(root * root - 1e-9))
    return _size("chance", rate, rounds_per_juror, votes, power_against_chance(rate, chance, votes, alpha))


def power_against_live(rate: float, live_rate: float, live_votes: int, votes: float, alpha: float) -> float:
    """The power of the two-sided test of two proportions (displaced ``rate`` over ``votes`` votes, live ``live_rate``
    over ``live_votes``) at ``alpha``, normal approximation; ``votes`` may be ``math.inf`` (the limit)."""
    z_alpha = float(ndtri(1 - alpha / 2))
    inverse = 1 / live_votes + (0 if math.isinf(votes) else 1 / votes)
    pooled = rate if math.isinf(votes) else (live_votes * live_rate + votes * rate) / (live_votes + votes)
    own = 0 if math.isinf(votes) else rate * (1 - rate) / votes
    spread = math.sqrt(live_rate * (1 - live_rate) / live_votes + own)
    if spread == 0:
        return 1.0 if rate != live_rate else 0.0
    return float(ndtr((abs(rate - live_rate) - z_alpha * math.sqrt(pooled * (1 - pooled) * inverse)) / spread))


def against_live(
    rate: float, live_rate: float, live_votes: int, power: float, alpha: float, rounds_per_juror: int
) -> DisplacedSize:
    """The jurors whose votes tell a detection of ``rate`` from the live jury's ``live_rate`` over ``live_votes``."""
    _check(rate, rounds_per_juror)
    if not 0 <= live_rate <= 1 or live_votes < 1:
        raise ValueError("the live jury needs a detection between 0 and 100 % and at least one vote")
    if rate == live_rate:
        return _size("live", rate, rounds_per_juror, None, None, "the same detection as the live jury's")
    ceiling = power_against_live(rate, live_rate, live_votes, math.inf, alpha)
    if ceiling < power:
        return _size(
            "live",
            rate,
            rounds_per_juror,
            None,
            None,
            f"the live jury's {live_votes} votes cap the power at {100 * ceiling:.1f}% however large the displaced "
            "jury",
        )
    votes = _smallest(lambda n: power_against_live(rate, live_rate, live_votes, n, alpha) >= power)
    achieved = power_against_live(rate, live_rate, live_votes, votes, alpha) if votes else None
    return _size("live", rate, rounds_per_juror, votes, achieved)


def _smallest(reaches) -> int | None:
    """The smallest vote count for which ``reaches`` holds (it holds from some count on), None up to the cap."""
    high = 1
    while not reaches(high):
        if high >= VOTES_CAP:
            return None
        high *= 2
    low = high // 2  # reaches(low) is False (or low is 0)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if reaches(middle) else (middle, high)
    return high


def _size(target, rate, rounds_per_juror, votes, achieved, note=None) -> DisplacedSize:
    if votes is None:
        return DisplacedSize(target, rounds_per_juror, rate, None, None, None, note or "unreachable")
    return DisplacedSize(target, rounds_per_juror, rate, votes, math.ceil(votes / rounds_per_juror), achieved, note)


def _sd(rate: float) -> float:
    return math.sqrt(rate * (1 - rate)) or 1e-12


def _check(rate: float, rounds_per_juror: int) -> None:
    if not 0 <= rate <= 1:
        raise ValueError(f"the assumed detection must be between 0 and 100 %, not {100 * rate:g}")
    if rounds_per_juror < 1:
        raise ValueError("a displaced juror judges at least one round")
