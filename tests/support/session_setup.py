"""A new session as the host sets it up: the console's new-session form, and a design given as a file would."""

from __future__ import annotations

from tests.support.apps import form_token

BANK = "Spec examples"  # the bank setup_form names (tests/data/spec_examples.csv, imported by the test)


def setup_form(client, **overrides) -> dict:
    """A complete new-session form: 2 humans and an AI, two listed jurors, timers, 1 round of 5."""
    data = {
        "csrf_token": form_token(client, "/host/sessions/new"),
        "name": "Pilot",
        "bank": BANK,
        "rounds": "1",
        "questions_per_round": "5",
        "seed": "7",
        "answer_seconds": "45",
        "vote_seconds": "90",
        "reveal_policy": "per-round",
        "pass_rule": "chance",
        "pass_alpha": "0.1",
        "pass_threshold_pct": "70",
        "ai_votes_per_juror": "1",
        "scoring_method": "cogsci2024",
        "round_themes": "emotion recognition\n",
        "open_join": "on",
        "clip_playback": "device",
        "players-0-name": "Minjun",
        "players-0-kind": "human",
        "players-0-age": "10",
        "players-0-stage": "middle concrete operational",
        "players-1-name": "지수",
        "players-1-kind": "human",
        "players-1-age": "24",
        "players-2-name": "Agent",
        "players-2-kind": "ai",
        "players-2-mcq": "mcq-model",
        "players-2-open": "open-model",
        "players-3-name": "",
        "players-3-kind": "human",  # a blank row is left out
        "jurors_source": "list",
        "jurors-0-label": "J1",
        "jurors-0-age_band": "30s",
        "jurors-0-sex": "female",
        "jurors-0-expert": "yes",
        "jurors-1-label": "J2",
        "jurors-1-expert": "no",
        "jurors-2-label": "",
        "jurors-2-expert": "",
    }
    data.update(overrides)
    return data


def design(players) -> dict:
    """A session design of one round of 5 questions from the bank "Spec" for ``players``."""
    return {"name": "S", "bank": "Spec", "rounds": 1, "questions_per_round": 5, "seed": 3, "players": players}
