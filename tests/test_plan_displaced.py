"""`vtt plan displaced`: a displaced jury's size for a target width or power, against hand-computed values.

Width: at 50 % detection the Wilson 95 % interval (z = 1.959964, z² = 3.841459) is
2z sqrt(0.25/N + z²/(4N²)) / (1 + z²/N) wide: N = 92 gives 2(1.959964) sqrt(0.0027174 + 0.0001135) / 1.0417550 =
0.20020, N = 93 gives 2(1.959964) sqrt(0.0026882 + 0.0001110) / 1.0413060 = 0.19917: 93 votes, 19 jurors of 5 rounds.

Against chance 20 % at 30 % detection, one-sided alpha 0.05 (z = 1.644854), power 0.8 (z = 0.841621):
N = ((1.644854 x 0.4 + 0.841621 x sqrt(0.21)) / 0.1)² = (10.43622)² = 108.92: 109 votes, 22 jurors of 5 rounds.
"""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from analysis.displaced_planner import against_chance, against_live, for_width, wilson_width
from vtt.cli.main import main


def invoke(*args: str):
    return CliRunner().invoke(main, ["plan", "displaced", *args], catch_exceptions=False)


def phi(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def live_power(p: float, p1: float, n1: int, n: int) -> float:
    """Two proportions, two-sided at 0.05 (z = 1.959964), written out."""
    pooled = (n1 * p1 + n * p) / (n1 + n)
    null = 1.959964 * math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n))
    return phi((abs(p - p1) - null) / math.sqrt(p1 * (1 - p1) / n1 + p * (1 - p) / n))


def test_the_width_target():
    assert wilson_width(0.5, 92) == pytest.approx(0.20020, abs=1e-5)
    assert wilson_width(0.5, 93) == pytest.approx(0.19917, abs=1e-5)
    size = for_width(0.5, 0.2, 5)
    assert (size.votes, size.jurors) == (93, 19)
    result = invoke("--rounds-per-juror", "5", "--rate", "50", "--width", "20")
    assert result.exit_code == 0, result.output
    assert "19 displaced jurors x 5 rounds = 95 votes (the target needs 93: width 19.92 points)" in result.output


def test_the_power_against_chance():
    size = against_chance(0.3, 0.2, 0.8, 0.05, 5)
    assert (size.votes, size.jurors) == (109, 22)
    result = invoke("--rounds-per-juror", "5", "--rate", "30", "--power", "0.8", "--json")
    assert json.loads(result.output)["jurors"] == 22  # 5 players, 1 AI: chance 20 %


def test_the_power_against_the_live_jury():
    size = against_live(0.7, 0.5, 100, 0.8, 0.05, 4)
    assert live_power(0.7, 0.5, 100, size.votes - 1) < 0.8 <= live_power(0.7, 0.5, 100, size.votes)
    assert (size.votes, size.jurors) == (88, 22)
    assert size.achieved == pytest.approx(live_power(0.7, 0.5, 100, 88), abs=1e-5)
    result = invoke(
        *("--rounds-per-juror", "4", "--rate", "70", "--power", "0.8"),
        *("--against", "live", "--live-rate", "50", "--live-votes", "100"),
    )
    assert "22 displaced jurors x 4 rounds = 88 votes" in result.output


def test_a_live_jury_too_small_caps_the_power():
    # the limit with an unbounded displaced jury: phi((0.05 - 1.959964 sqrt(0.55 x 0.45 / 100)) / 0.05) = 17.1 %
    limit = phi((0.05 - 1.959964 * math.sqrt(0.55 * 0.45 / 100)) / 0.05)
    assert limit == pytest.approx(0.171, abs=1e-3)
    size = against_live(0.55, 0.5, 100, 0.8, 0.05, 4)
    assert size.jurors is None and "cap the power at 17.1%" in size.note
    result = invoke(
        *("--rounds-per-juror", "4", "--rate", "55", "--power", "0.8"),
        *("--against", "live", "--live-rate", "50", "--live-votes", "100"),
    )
    assert "no displaced jury reaches it" in result.output


def test_a_target_is_required_and_the_live_jury_named():
    result = invoke("--rounds-per-juror", "4")
    assert result.exit_code == 2 and "give --width, --power or both" in result.output
    result = invoke("--rounds-per-juror", "4", "--power", "0.8", "--against", "live")
    assert result.exit_code == 2 and "--live-rate and --live-votes" in result.output


def test_the_plan_of_a_session_still_needs_its_jury():
    result = CliRunner().invoke(main, ["plan", "--rounds", "5"])
    assert result.exit_code == 2 and "Missing option '--jurors'" in result.output
