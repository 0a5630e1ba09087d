"""Creating a session from a configuration: every bad field named, questions dealt into rounds."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from vtt.banks import InputError, import_bank, read_bank
from vtt.engine.setup import SessionConfig, create_session
from vtt.models import Event, PlayerKind, Question, SessionQuestion
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
        "session.json: field 'rounds': must be a whole number from 1 to 100, not 0",
        "session.json: field 'questions_per_round': must be a whole number from 1 to 1000, not 'six'",
        "session.json: field 'reveal_policy': must be one of per-round, end, not 'never'",
        "session.json: field 'pass_rule': must be one of human-tie, chance, threshold, not 'vibes'",
        "session.json: field 'pass_alpha': must be a number strictly between 0 and 1, not 2",
        "session.json: field 'scoring_method': must be one of uniform, cogsci2024, frontiers2022, not 'f1'",
        "session.json: field 'players[0].age': must be a whole number of years, not -1",
        "session.json: field 'players[1].kind': must be \"human\" or \"ai\", not 'robot'",
        "session.json: field 'players[2].name': is required",
        "session.json: field 'players[3]': must be an object with name and kind",
        "session.json: field 'players[4].backends': must map question types (mcq, open) to program names",
        "session.json: field 'ai_votes_per_juror': is 2 but the session has 1 AI player(s)",
    ]
    assert problems({"name": "x", "bank": "b", "round": 3, "pass_alpha": 0, "seed": 2**40, "vote_seconds": 86400,
                     "round_themes": "emotion", "players": PLAYERS}) == [
        "session.json: field 'round': is not a known setting (did you mean 'rounds'?)",
        "session.json: field 'seed': must be a whole number from 0 to 2147483647, not 1099511627776",
        "session.json: field 'vote_seconds': must be a whole number from 1 to 3600, not 86400",
        "session.json: field 'pass_alpha': must be a number strictly between 0 and 1, not 0",
        "session.json: field 'round_themes': must be a list of texts, one per round",
    ]
    assert problems({"name": "x", "bank": "b", "rounds": 1, "round_themes": ["a", "b"],
                     "players": [{"name": "A", "kind": "ai", "agee": 3}, {"name": "B", "kind": "ai"}]}) == [
        "session.json: field 'round_themes': has 2 themes for 1 rounds",
        "session.json: field 'players[0].agee': is not a known setting (did you mean 'age'?)",
        "session.json: field 'players': needs at least one human player (kind \"human\")",
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


def test_a_banks_round_column_is_kept_and_the_seed_shuffles_within_rounds(db, tmp_path):
    bank = tmp_path / "rounds.csv"
    bank.write_text("qid,question,answer,round\n" + "".join(f"r{r}q{i},Q?,a,{r}\n" for r in (1, 2) for i in range(6)),
                    encoding="utf-8")
    import_bank(db, read_bank(bank), "Rounds")

    def order(name: str, seed: int) -> dict[int, list[str]]:
        config = SessionConfig.from_dict({"name": name, "bank": "Rounds", "rounds": 2, "questions_per_round": 6,
                                          "seed": seed, "players": PLAYERS})
        rounds: dict[int, list[str]] = {}
        for placed in sorted(create_session(db, config).questions, key=lambda q: (q.round, q.position)):
            rounds.setdefault(placed.round, []).append(db.get(Question, placed.question_id).qid)
        return rounds

    bank_order = {r: [f"r{r}q{i}" for i in range(6)] for r in (1, 2)}
    first = order("A", seed=1)
    assert {r: sorted(qids) for r, qids in first.items()} == bank_order  # the bank's rounds are kept
    assert first != bank_order                                           # ... in a seeded order
    assert order("B", seed=1) == first and order("C", seed=7) != first


def test_a_session_needs_enough_questions_and_a_known_bank(db):
    import_bank(db, read_bank(DATA / "spec_examples.csv"), "Spec")
    too_many = SessionConfig.from_dict({"name": "S", "bank": "Spec", "rounds": 2, "questions_per_round": 3,
                                        "players": PLAYERS})
    with pytest.raises(InputError, match=r"2 x 3 = 6 questions needed, the bank has 5"):
        create_session(db, too_many)
    with pytest.raises(InputError, match="no question bank named 'Nope'"):
        create_session(db, SessionConfig.from_dict({"name": "S", "bank": "Nope", "players": PLAYERS}))
    assert db.scalar(select(func.count()).select_from(SessionQuestion)) == 0
