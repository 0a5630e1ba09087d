"""Creating a session from a configuration: every bad field named, questions dealt into rounds."""

from __future__ import annotations

import hashlib
import json

import pytest
from sqlalchemy import func, select

from tests.support.paths import DATA
from vtt.banks import InputError, import_bank, read_bank
from vtt.models import Event, Juror, PlayerKind, Question, SessionQuestion, VttSession
from vtt.sessions.create import (
    JurorConfig,
    SessionConfig,
    create_session,
    design_hash,
    numbered_jurors,
    read_jurors_csv,
)

PLAYERS = [
    {"name": "Child", "kind": "human", "age": 4, "stage": "pre-operational"},
    {"name": "Agent", "kind": "ai", "backends": {"mcq": "m", "open": "o"}},
]


def problems(data: dict) -> list[str]:
    with pytest.raises(InputError) as caught:
        SessionConfig.from_dict(data, source="session.json")
    return [str(p) for p in caught.value.problems]


def test_every_bad_field_is_named():
    assert problems(
        {
            "rounds": 0,
            "questions_per_round": "six",
            "reveal_policy": "never",
            "pass_rule": "vibes",
            "pass_alpha": 2,
            "scoring_method": "f1",
            "ai_votes_per_juror": 2,
            "players": [
                {"name": "A", "kind": "human", "age": -1},
                {"name": "A", "kind": "robot"},
                {"kind": "ai"},
                "nobody",
                {"name": "B", "kind": "ai", "backends": {"video": "x"}},
            ],
        }
    ) == [
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
    assert problems(
        {
            "name": "x",
            "bank": "b",
            "round": 3,
            "pass_alpha": 0,
            "seed": 2**40,
            "vote_seconds": 86400,
            "round_themes": "emotion",
            "players": PLAYERS,
        }
    ) == [
        "session.json: field 'round': is not a known setting (did you mean 'rounds'?)",
        "session.json: field 'seed': must be a whole number from 0 to 2147483647, not 1099511627776",
        "session.json: field 'vote_seconds': must be a whole number from 1 to 3600, not 86400",
        "session.json: field 'pass_alpha': must be a number strictly between 0 and 1, not 0",
        "session.json: field 'round_themes': must be a list of texts, one per round",
    ]
    assert problems(
        {
            "name": "x",
            "bank": "b",
            "rounds": 1,
            "round_themes": ["a", "b"],
            "players": [{"name": "A", "kind": "ai", "agee": 3}, {"name": "B", "kind": "ai"}],
        }
    ) == [
        "session.json: field 'round_themes': has 2 themes for 1 rounds",
        "session.json: field 'players[0].agee': is not a known setting (did you mean 'age'?)",
        "session.json: field 'players': needs at least one human player (kind \"human\")",
    ]
    assert problems({"name": "x", "bank": "b", "players": [PLAYERS[0]]}) == [
        "session.json: field 'players': needs at least one AI player (kind \"ai\")",
        "session.json: field 'players': needs at least two players",
    ]


def test_the_set_builder_deals_questions_when_the_round_column_does_not_fit(db):
    import_bank(db, read_bank(DATA / "spec_examples.csv"), "Spec")
    config = SessionConfig.from_dict(
        {
            "name": "S",
            "bank": "Spec",
            "rounds": 1,
            "questions_per_round": 5,
            "seed": 3,
            "round_themes": ["emotions"],
            "players": PLAYERS,
        }
    )
    session = create_session(db, config)
    db.commit()
    placed = db.scalars(
        select(SessionQuestion).where(SessionQuestion.session_id == session.id).order_by(SessionQuestion.position)
    ).all()
    assert sorted(p.question.qid for p in placed) == ["q1", "q2", "q3", "q4", "q5"]
    assert [p.position for p in placed] == [1, 2, 3, 4, 5] and {p.round for p in placed} == {1}
    assert session.round_states[0].theme == "emotions"
    assert [p.kind for p in session.players] == [PlayerKind.HUMAN, PlayerKind.AI]
    assert len({p.token for p in session.players}) == 2 and len(session.join_code) == 6
    assert db.scalar(select(Event.payload).where(Event.kind == "session.created"))["questions"] == 5


def test_a_banks_round_column_is_kept_and_the_seed_shuffles_within_rounds(db, tmp_path):
    bank = tmp_path / "rounds.csv"
    bank.write_text(
        "qid,question,answer,round\n" + "".join(f"r{r}q{i},Q?,a,{r}\n" for r in (1, 2) for i in range(6)),
        encoding="utf-8",
    )
    import_bank(db, read_bank(bank), "Rounds")

    def order(name: str, seed: int) -> dict[int, list[str]]:
        config = SessionConfig.from_dict(
            {"name": name, "bank": "Rounds", "rounds": 2, "questions_per_round": 6, "seed": seed, "players": PLAYERS}
        )
        rounds: dict[int, list[str]] = {}
        for placed in sorted(create_session(db, config).questions, key=lambda q: (q.round, q.position)):
            rounds.setdefault(placed.round, []).append(db.get(Question, placed.question_id).qid)
        return rounds

    bank_order = {r: [f"r{r}q{i}" for i in range(6)] for r in (1, 2)}
    first = order("A", seed=1)
    assert {r: sorted(qids) for r, qids in first.items()} == bank_order  # the bank's rounds are kept
    assert first != bank_order  # ... in a seeded order
    assert order("B", seed=1) == first and order("C", seed=7) != first


def test_a_session_needs_enough_questions_and_a_known_bank(db):
    import_bank(db, read_bank(DATA / "spec_examples.csv"), "Spec")
    too_many = SessionConfig.from_dict(
        {"name": "S", "bank": "Spec", "rounds": 2, "questions_per_round": 3, "players": PLAYERS}
    )
    with pytest.raises(InputError, match=r"2 x 3 = 6 questions needed, the bank has 5"):
        create_session(db, too_many)
    with pytest.raises(InputError, match="no question bank named 'Nope'"):
        create_session(db, SessionConfig.from_dict({"name": "S", "bank": "Nope", "players": PLAYERS}))
    assert db.scalar(select(func.count()).select_from(SessionQuestion)) == 0


def test_jurors_open_join_and_every_bad_juror_field_are_named():
    assert problems(
        {
            "name": "x",
            "bank": "b",
            "players": PLAYERS,
            "open_join": "yes",
            "jurors": [
                {"label": "J01", "age_band": "20s", "sex": "female", "expert": True, "group": "panel"},
                {"label": " J01 "},
                {"age_band": "30s"},
                {"label": "J" * 41},
                {"label": 7},
                "J06",
                {"label": "J07", "expert": "yes", "sex": "x" * 25, "group": "g" * 41, "age_band": 30, "agee": 3},
            ],
        }
    ) == [
        "session.json: field 'open_join': must be true or false, not 'yes'",
        "session.json: field 'jurors[1].label': 'J01' appears twice",
        "session.json: field 'jurors[2].label': is required",
        "session.json: field 'jurors[3].label': is 41 characters long; at most 40",
        "session.json: field 'jurors[4].label': must be a text, not 7",
        "session.json: field 'jurors[5]': must be an object with a label (and optionally age_band, sex, expert, group)",
        "session.json: field 'jurors[6].agee': is not a known setting",
        "session.json: field 'jurors[6].age_band': must be a text, not 30",
        "session.json: field 'jurors[6].sex': is 25 characters long; at most 24",
        "session.json: field 'jurors[6].group': is 41 characters long; at most 40",
        "session.json: field 'jurors[6].expert': must be true, false or null, not 'yes'",
    ]
    assert problems({"name": "x", "bank": "b", "players": PLAYERS, "jurors": {"label": "J01"}}) == [
        "session.json: field 'jurors': must be a list of jurors (objects with a label)"
    ]
    assert problems({"name": "x", "bank": "b", "players": [{**PLAYERS[0], "stage": float("nan")}, PLAYERS[1]]}) == [
        "session.json: contains NaN or Infinity, which JSON does not allow"
    ]
    config = SessionConfig.from_dict(
        {
            "name": "x",
            "bank": "b",
            "players": PLAYERS,
            "open_join": True,
            "jurors": [
                {"label": " J01 ", "age_band": "20s", "sex": "female", "expert": True, "group": "panel"},
                {"label": "J02", "expert": None, "sex": ""},
            ],
        }
    )
    assert config.open_join is True and config.seed is None
    assert config.jurors == [JurorConfig("J01", "20s", "female", True, "panel"), JurorConfig("J02")]
    assert config.design["jurors"][0]["label"] == " J01 "  # the design is kept as given


def test_numbered_jurors_and_a_jurors_csv(tmp_path):
    assert [j["label"] for j in numbered_jurors(3)] == ["J01", "J02", "J03"]
    assert [j["label"] for j in numbered_jurors(120)][::50] == ["J001", "J051", "J101"]
    assert numbered_jurors(0) == []
    good = tmp_path / "jurors.csv"
    good.write_text(
        "label,age_band,sex,expert,group\nJ01,20s,female,yes,panel\nJ02,30s,male,No,\n\n"
        "J03,,,,\nJ04,40s,,TRUE,\nJ05,50s,,0,\n",
        encoding="utf-8",
    )
    assert read_jurors_csv(good) == [
        {"label": "J01", "age_band": "20s", "sex": "female", "expert": True, "group": "panel"},
        {"label": "J02", "age_band": "30s", "sex": "male", "expert": False},
        {"label": "J03"},
        {"label": "J04", "age_band": "40s", "expert": True},
        {"label": "J05", "age_band": "50s", "expert": False},
    ]
    short = tmp_path / "short.csv"
    short.write_text("label\nA\nB\n", encoding="utf-8")
    assert read_jurors_csv(short) == [{"label": "A"}, {"label": "B"}]

    def csv_problems(text: str) -> list[str]:
        path = tmp_path / "bad.csv"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(InputError) as caught:
            read_jurors_csv(path)
        return [str(p) for p in caught.value.problems]

    assert csv_problems(
        "label,age_band,sex,expert\nJ01,20s,f,yes\nJ02,30s,m,maybe\n,40s,,no\nJ01,,,\n"
        "J05,,,,extra\nJ06,way too long an age band!,,\n"
    ) == [
        "bad.csv: row 3: field 'expert': must be yes, no, true, false, 1, 0 or empty, not 'maybe'",
        "bad.csv: row 4: field 'label': is required",
        "bad.csv: row 5: field 'label': 'J01' appears twice",
        "bad.csv: row 6: has 5 cells for 4 columns",
        "bad.csv: row 7: field 'age_band': is 25 characters long; at most 24",
    ]
    assert csv_problems("lable,expert,expert\nJ01,yes,yes\n") == [
        "bad.csv: row 1: field 'lable': is not a known column (did you mean 'label'?)",
        "bad.csv: row 1: field 'expert': appears twice",
        "bad.csv: row 1: field 'label': column is missing",
    ]
    assert csv_problems("") == ["bad.csv: row 1: needs a header row: label,age_band,sex,expert,group"]


def test_the_design_hash_is_the_sha256_of_the_canonical_json():
    design = {"name": "Pilot", "players": [{"name": "지수", "kind": "human"}], "rounds": 2}
    canonical = '{"name":"Pilot","players":[{"kind":"human","name":"지수"}],"rounds":2}'
    assert design_hash(design) == hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    assert design_hash(dict(reversed(design.items()))) == design_hash(design)  # key order does not matter
    assert design_hash({**design, "name": "Pilot 2"}) != design_hash(design)


def test_a_session_stores_its_design_hash_jurors_and_a_drawn_seed(db):
    import_bank(db, read_bank(DATA / "spec_examples.csv"), "Spec")
    design = {
        "name": "S",
        "bank": "Spec",
        "rounds": 1,
        "questions_per_round": 5,
        "players": PLAYERS,
        "open_join": True,
        "jurors": [
            {"label": "J01", "age_band": "20s", "sex": "female", "expert": True, "group": "panel"},
            {"label": "J02"},
        ],
    }
    first = create_session(db, SessionConfig.from_dict(design))
    second = create_session(db, SessionConfig.from_dict({**design, "name": "T"}))
    db.commit()
    assert first.design == design and first.design_hash == design_hash(design)
    assert second.design_hash == design_hash({**design, "name": "T"}) != first.design_hash
    assert first.open_join is True
    assert 0 <= first.seed < 2**31 - 1 and first.seed != second.seed  # drawn, and 1 in 2**31 to collide
    jurors = db.scalars(select(Juror).where(Juror.session_id == first.id).order_by(Juror.id)).all()
    assert [(j.label, j.age_band, j.sex, j.expert, j.juror_group) for j in jurors] == [
        ("J01", "20s", "female", True, "panel"),
        ("J02", None, None, None, None),
    ]
    tokens = [j.token for j in jurors] + [p.token for p in first.players]
    assert len(set(tokens)) == 4 and all(len(t) == 24 for t in tokens)
    payload = db.scalar(select(Event.payload).where(Event.kind == "session.created", Event.session_id == first.id))
    assert payload["seed"] == first.seed and payload["seed_drawn"] is True
    assert payload["design_hash"] == first.design_hash and payload["jurors"] == 2
    stored = db.scalar(select(VttSession).where(VttSession.name == "S"))
    assert stored.seed == first.seed and stored.design == design


def test_a_seeded_design_keeps_its_seed_and_a_config_built_in_code_gets_a_design(db):
    import_bank(db, read_bank(DATA / "spec_examples.csv"), "Spec")
    seeded = create_session(
        db,
        SessionConfig.from_dict(
            {"name": "S", "bank": "Spec", "rounds": 1, "questions_per_round": 5, "seed": 0, "players": PLAYERS}
        ),
    )
    assert seeded.seed == 0 and seeded.open_join is False and seeded.jurors == []
    config = SessionConfig.from_dict(
        {"name": "C", "bank": "Spec", "rounds": 1, "questions_per_round": 5, "seed": 4, "players": PLAYERS}
    )
    config.design = {}
    config.jurors = [JurorConfig("J01", expert=False)]
    built = create_session(db, config)
    assert built.design["name"] == "C" and built.design["seed"] == 4
    assert built.design["jurors"] == [{"label": "J01", "expert": False}]
    assert built.design["players"][1]["kind"] == "ai" and built.design_hash == design_hash(built.design)
    json.dumps(built.design)  # plain JSON
