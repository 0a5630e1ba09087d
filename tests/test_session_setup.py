"""Creating a session from a configuration: every bad field named, questions dealt into rounds."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from vtt.banks import InputError, import_bank, read_bank
from vtt.engine.setup import SessionConfig, create_session
from vtt.models import Event, PlayerKind, SessionQuestion
from tests.conftest import DATA

PLAYERS = [{"name": "Child", "kind": "human", "age": 4, "stage": "pre-operational"},
           {"name": "Agent", "kind": "ai", "backends": {"mcq": "m", "open": "o"}}]


def problems(data: dict) -> list[str]:
    with pytest.raises(InputError) as caught:
        SessionConfig.from_dict(data, source="session.json")
    return [str(p) for p in caught.value.problems]


def test_every_bad_field_is_named():
    assert problems({"rounds": 0, "questions_per_round": "six", "reveal_policy": "never", "pass_rule": "vibes",
                     "pass_alpha": 2, "scoring_method": "f1", "ai_votes_per_juror": 2, "players": [
                         {"name": "A", "kind": "human", "age": -1}, {"name": "A", "kind": "robot"},
                         {"kind": "ai"}, "nobody", {"name": "B", "kind": "ai", "backends": {"video": "x"}}]}) == [
        "session.json: field 'name': is required",
        "session.json: field 'bank': is required",
        "session.json: field 'rounds': must be a whole number >= 1, not 0",
        "session.json: field 'questions_per_round': must be a whole number >= 1, not 'six'",
        "session.json: field 'reveal_policy': must be one of per-round, end, not 'never'",
        "session.json: field 'pass_rule': must be one of human-tie, chance, threshold, not 'vibes'",
        "session.json: field 'pass_alpha': must be a number between 0 and 1, not 2",
        "session.json: field 'scoring_method': must be one of uniform, cogsci2024, frontiers2022, not 'f1'",
        "session.json: field 'players[0].age': must be a whole number of years, not -1",
        "session.json: field 'players[1].kind': must be \"human\" or \"ai\", not 'robot'",
        "session.json: field 'players[2].name': is required",
        "session.json: field 'players[3]': must be an object with name and kind",
        "session.json: field 'players[4].backends': must map question types (mcq, open) to program names",
        "session.json: field 'ai_votes_per_juror': is 2 but the session has 1 AI player(s)",
    ]
    assert problems({"name": "x", "bank": "b", "players": [PLAYERS[0]]}) == [
        "session.json: field 'players': needs at least one AI player (kind \"ai\")",
        "session.json: field 'players': needs at least two players"]


def test_the_set_builder_deals_questions_when_the_round_column_does_not_fit(db):
    import_bank(db, read_bank(DATA / "spec_examples.csv"), "Spec")
    config = SessionConfig.from_dict({"name": "S", "bank": "Spec", "rounds": 1, "questions_per_round": 5,
                                      "seed": 3, "round_themes": ["emotions"], "players": PLAYERS})
    session = create_session(db, config)
    db.commit()
    placed = db.scalars(select(SessionQuestion).where(SessionQuestion.session_id == session.id)
                        .order_by(SessionQuestion.position)).all()
    assert sorted(p.question.qid for p in placed) == ["q1", "q2", "q3", "q4", "q5"]
    assert [p.position for p in placed] == [1, 2, 3, 4, 5] and {p.round for p in placed} == {1}
    assert session.round_states[0].theme == "emotions"
    assert [p.kind for p in session.players] == [PlayerKind.HUMAN, PlayerKind.AI]
    assert len({p.token for p in session.players}) == 2 and len(session.join_code) == 6
    assert db.scalar(select(Event.payload).where(Event.kind == "session.created"))["questions"] == 5


def test_a_session_needs_enough_questions_and_a_known_bank(db):
    import_bank(db, read_bank(DATA / "spec_examples.csv"), "Spec")
    too_many = SessionConfig.from_dict({"name": "S", "bank": "Spec", "rounds": 2, "questions_per_round": 3,
                                        "players": PLAYERS})
    with pytest.raises(InputError, match=r"2 x 3 = 6 questions needed, the bank has 5"):
        create_session(db, too_many)
    with pytest.raises(InputError, match="no question bank named 'Nope'"):
        create_session(db, SessionConfig.from_dict({"name": "S", "bank": "Nope", "players": PLAYERS}))
    assert db.scalar(select(func.count()).select_from(SessionQuestion)) == 0
