"""`vtt plan`: a case study's design, text and JSON, and the options it refuses."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from analysis.planner import DEFAULT_RATE
from vtt.cli.main import main
from vtt.cli.plan import CASE_STUDY_RATE_PCT, run_plan

CASE_STUDY = ["--jurors", "16", "--rounds", "5"]


def invoke(*args: str):
    return CliRunner().invoke(main, ["plan", *args], catch_exceptions=False)


def test_the_case_study_design_in_words():
    result = invoke(*CASE_STUDY)
    assert result.exit_code == 0, result.output
    text = result.output
    assert "16 jurors, 5 rounds, 5 players per round (4 humans, 1 AI), 1 AI vote per juror and round" in text
    assert "Pass rule: human-tie: the AI passes a round when some human draws at least as many votes" in text
    assert "48.6% of votes name an AI (the VTT case study's mean detection); chance 20.0%" in text
    assert "falls uniformly on the humans" in text and "every juror votes in every round" in text
    assert "One round: P(the AI passes) = 9.48% [exact]" in text
    assert "P(passes at least 3 of 5) = 0.74%" in text
    assert "all rounds pooled, 80 votes: expected width 21.27 (median 21.35) [exact]" in text
    assert "at 48.6% detection: 38.0% to 59.4%" in text
    assert "one round, 16 votes: expected width 42.83" in text
    assert "human-tie: 11 jurors (caught 81.8%)" in text
    assert "chance (alpha 0.05): 17 jurors (caught 80.3%; every jury from 20 to 10,000 jurors reaches it)" in text
    assert "threshold (70%): no jury reaches it" in text
    assert "simulated" not in text


def test_json_is_one_object_with_every_figure():
    result = invoke(*CASE_STUDY, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["design"] == {
        "jurors": 16,
        "rounds": 5,
        "players": 5,
        "ai_players": 1,
        "ai_votes": 1,
        "pass_rule": "human-tie",
        "alpha": 0.05,
        "threshold_pct": 70.0,
        "chance_pct": 20.0,
    }
    assert data["rate_pct"] == pytest.approx(48.6) and data["rate_source"] == "the VTT case study's mean detection"
    assert data["round_pass"] == {"value": pytest.approx(0.0948487, abs=1e-7), "method": "exact", "std_error": None}
    assert data["rounds_passed"]["at_least_half"]["value"] == pytest.approx(0.0073649, abs=1e-7)
    assert len(data["rounds_passed"]["distribution"]) == 6
    assert data["pooled_interval"]["votes"] == 80
    assert data["pooled_interval"]["mean"]["value"] == pytest.approx(21.2683, abs=1e-4)
    juries = {jury["pass_rule"]: jury for jury in data["smallest_juries"]}
    assert (juries["human-tie"]["jurors"], juries["chance"]["jurors"], juries["threshold"]["jurors"]) == (11, 17, None)
    assert juries["chance"]["steady_from"] == 20
    assert data["simulation"] is None
    assert len(data["assumptions"]) == 5


def test_a_simulated_design_says_so_with_its_standard_error_and_seed():
    args = [*CASE_STUDY, "--players", "6", "--ai", "2", "--ai-votes", "2", "--simulations", "4000", "--seed", "3"]
    text = invoke(*args).output
    assert "6 players per round (4 humans, 2 AI), 2 AI votes per juror and round" in text
    assert "[simulated, 4,000 rounds, seed 3]" in text
    assert ", SE " in text
    data = json.loads(invoke(*args, "--json").stdout)
    assert data["round_pass"]["method"] == "simulated" and data["round_pass"]["std_error"] > 0
    assert data["simulation"] == {"rounds": 4000, "seed": 3}
    assert data == json.loads(invoke(*args, "--json").stdout)  # seeded: the same figures again


def test_rule_rate_and_power_options():
    data = json.loads(
        invoke(
            *CASE_STUDY, "--pass-rule", "chance", "--alpha", "0.01", "--rate", "60", "--power", "0.9", "--json"
        ).stdout
    )
    assert data["design"]["pass_rule"] == "chance" and data["design"]["alpha"] == 0.01
    assert data["rate_pct"] == pytest.approx(60) and data["rate_source"] == "--rate"
    assert [jury["pass_rule"] for jury in data["smallest_juries"]] == ["chance", "human-tie", "threshold"]
    assert all(jury["power"] == 0.9 for jury in data["smallest_juries"])
    text = invoke(*CASE_STUDY, "--pass-rule", "threshold", "--threshold", "50", "--rate", "10").output
    assert "threshold 50%" in text
    assert "human-tie: no jury can: at or below chance (20.0%)" in text


def test_a_caller_can_supply_the_default_rate(capsys):
    assert CASE_STUDY_RATE_PCT == pytest.approx(100 * DEFAULT_RATE)
    run_plan(
        jurors=16, rounds=5, as_json=True, default_rate_pct=55.0, default_rate_source="study pilot's pooled detection"
    )
    data = json.loads(capsys.readouterr().out)
    assert data["rate_pct"] == pytest.approx(55.0) and data["rate_source"] == "study pilot's pooled detection"
    run_plan(jurors=16, rounds=5, rate_pct=40.0, as_json=True, default_rate_pct=55.0, default_rate_source="study")
    assert json.loads(capsys.readouterr().out)["rate_pct"] == pytest.approx(40.0)  # --rate wins


@pytest.mark.parametrize(
    ("args", "option", "words"),
    [
        (["--players", "2", "--ai", "2"], "--players", "must exceed --ai"),
        (["--ai-votes", "2"], "--ai-votes", "cannot exceed --ai"),
        (["--rate", "120"], "--rate", "120"),
        (["--rate", "-1"], "--rate", "-1"),
        (["--alpha", "0"], "--alpha", "0"),
        (["--power", "1"], "--power", "1"),
        (["--jurors", "0"], "--jurors", "0"),
        (["--pass-rule", "majority"], "--pass-rule", "majority"),
        (["--simulations", "5"], "--simulations", "5"),
    ],
)
def test_bad_options_are_refused_naming_the_option(args, option, words):
    result = invoke(*CASE_STUDY, *args)
    assert result.exit_code == 2
    assert f"Invalid value for '{option}'" in result.output and words in result.output


def test_the_jury_and_the_rounds_are_required():
    result = invoke("--rounds", "5")
    assert result.exit_code == 2 and "Missing option '--jurors'" in result.output
