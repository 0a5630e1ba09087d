"""Rules the database itself enforces, on SQLite and on PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import delete, select, update
from sqlalchemy.exc import DatabaseError, IntegrityError

from vtt.db import make_engine, make_session_factory, upgrade
from vtt.models import (
    Answer,
    AppendOnlyError,
    Event,
    Grade,
    Juror,
    Player,
    PlayerKind,
    Question,
    QuestionBank,
    QuestionTag,
    QuestionType,
    RoundAlias,
    SessionQuestion,
    SheetEntry,
    Vote,
    VttSession,
)


def seeded(session):
    bank = QuestionBank(name="b")
    question = Question(bank=bank, qid="q1", text="Who?", type=QuestionType.MCQ, choices=["a", "b"], answer_index=0)
    vtt = VttSession(name="s", bank=bank, join_code="ABC234")
    human = Player(session=vtt, name="Minjun", kind=PlayerKind.HUMAN, age=10, token="t-human")
    ai = Player(session=vtt, name="AI", kind=PlayerKind.AI, token="t-ai", backends={"mcq": "m", "open": "o"})
    juror = Juror(session=vtt, label="J01", token="t-j1", expert=True)
    placed = SessionQuestion(session=vtt, question=question, round=1, position=1)
    session.add_all([bank, question, vtt, human, ai, juror, placed])
    session.commit()
    return vtt, placed, human, ai, juror


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def any_db(request, tmp_path):
    url = (f"sqlite:///{tmp_path / 'm.db'}" if request.param == "sqlite"
           else request.getfixturevalue("postgres_url"))
    upgrade(url)
    engine = make_engine(url)
    with make_session_factory(engine)() as session:
        yield session
    engine.dispose()


def violates(session, *objects) -> bool:
    session.add_all(objects)
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        return True
    return False


def test_one_vote_per_juror_round_and_slot(any_db):
    vtt, _, human, ai, juror = seeded(any_db)
    assert not violates(any_db, Vote(session_id=vtt.id, round=1, juror=juror, slot=1, alias="A", player=ai))
    assert violates(any_db, Vote(session_id=vtt.id, round=1, juror=juror, slot=1, alias="B", player=human))
    assert not violates(any_db, Vote(session_id=vtt.id, round=1, juror=juror, slot=2, alias="B", player=human))
    assert not violates(any_db, Vote(session_id=vtt.id, round=2, juror=juror, slot=1))  # an abstention
    assert violates(any_db, Vote(session_id=vtt.id, round=3, juror=juror, slot=1, alias="A"))  # alias, no player
    assert violates(any_db, Vote(session_id=vtt.id, round=4, juror=juror, slot=1, alias="A", player=ai, confidence=6))


def test_a_juror_names_a_player_once_per_round_and_only_in_their_own_session(any_db):
    vtt, _, human, ai, juror = seeded(any_db)
    assert not violates(any_db, Vote(session_id=vtt.id, round=1, juror=juror, slot=1, alias="A", player=ai))
    assert violates(any_db, Vote(session_id=vtt.id, round=1, juror=juror, slot=2, alias="A", player=ai))
    assert violates(any_db, Vote(session_id=vtt.id, round=0, juror=juror, slot=1, alias="B", player=human))
    other = VttSession(name="other", join_code="XYZ789")
    stranger = Player(session=other, name="Stranger", kind=PlayerKind.HUMAN, token="t-stranger")
    any_db.add_all([other, stranger])
    any_db.commit()
    # vtt's juror naming a player of another session, and a vote filed under the other session
    assert violates(any_db, Vote(session_id=vtt.id, round=2, juror_id=juror.id, slot=1, alias="C",
                                 player_id=stranger.id))
    assert violates(any_db, Vote(session_id=other.id, round=2, juror_id=juror.id, slot=1, alias="C",
                                 player_id=stranger.id))


def test_round_aliases(any_db):
    vtt, _, human, ai, _ = seeded(any_db)
    assert not violates(any_db, RoundAlias(session_id=vtt.id, round=1, player=human, alias="A"),
                        RoundAlias(session_id=vtt.id, round=1, player=ai, alias="B"))
    assert violates(any_db, RoundAlias(session_id=vtt.id, round=1, player=human, alias="C"))  # one alias a round
    assert violates(any_db, RoundAlias(session_id=vtt.id, round=2, player=human, alias="B"),
                    RoundAlias(session_id=vtt.id, round=2, player=ai, alias="B"))           # one player an alias
    assert violates(any_db, RoundAlias(session_id=vtt.id, round=0, player=human, alias="A"))
    assert violates(any_db, RoundAlias(session_id=vtt.id, round=3, player=human, alias=""))


def test_one_answer_per_player_and_question(any_db):
    _, placed, human, ai, _ = seeded(any_db)
    assert not violates(any_db, Answer(session_question=placed, player=human, choice_index=0))
    assert violates(any_db, Answer(session_question=placed, player=human, choice_index=1))
    assert violates(any_db, Answer(session_question=placed, player=ai, choice_index=-7))


def test_juror_labels_are_unique_within_a_session(any_db):
    vtt, *_ = seeded(any_db)
    assert violates(any_db, Juror(session=vtt, label="J01", token="t-j-dup"))


def test_grades_and_sheet_entries_are_bounded(any_db):
    _, placed, human, ai, juror = seeded(any_db)
    answer = Answer(session_question=placed, player=human, text="a")
    assert not violates(any_db, answer, Grade(answer=answer, correct=True, accuracy=5, coherence=0))
    other = Answer(session_question=placed, player=ai, text="b")
    assert violates(any_db, other, Grade(answer=other, correct=False, depth=6))
    entry = dict(juror=juror, session_question_id=placed.id, player=ai, alias="A")
    assert not violates(any_db, SheetEntry(**entry, note="too fast", human_likeness=2, looks_like_ai=True))
    assert violates(any_db, SheetEntry(**entry, note="again"))
    assert violates(any_db, SheetEntry(juror=juror, session_question_id=placed.id, player=human, alias="B",
                                       human_likeness=0))


def test_one_key_target_per_question(any_db):
    seeded(any_db)
    question = any_db.scalar(select(Question))
    assert not violates(any_db, QuestionTag(question=question, module="target", element="Character", is_key=True),
                        QuestionTag(question=question, module="target", element="Object"))
    assert violates(any_db, QuestionTag(question=question, module="target", element="Place", is_key=True))
    assert violates(any_db, QuestionTag(question=question, module="content", element="Identity", is_key=True))
    assert violates(any_db, QuestionTag(question=question, module="colour", element="Red"))


def test_mcq_needs_a_key_and_clip_times_are_ordered(any_db):
    bank = QuestionBank(name="b2")
    assert violates(any_db, Question(bank=bank, qid="x", text="?", type=QuestionType.MCQ, choices=["a", "b"]))
    assert violates(any_db, Question(bank=QuestionBank(name="b3"), qid="y", text="?", type=QuestionType.OPEN,
                                     clip_start=5, clip_end=2))


def test_player_names_are_unique_within_a_session(any_db):
    vtt, *_ = seeded(any_db)
    assert violates(any_db, Player(session=vtt, name="Minjun", kind=PlayerKind.HUMAN, token="t-other"))


def test_event_log_is_append_only(any_db):
    any_db.add(Event(kind="test.created", payload={"n": 1}))
    any_db.commit()
    event = any_db.scalar(select(Event))
    event.kind = "tampered"
    with pytest.raises(AppendOnlyError):
        any_db.commit()
    any_db.rollback()
    any_db.delete(any_db.scalar(select(Event)))
    with pytest.raises(AppendOnlyError):
        any_db.commit()
    any_db.rollback()
    # Below the ORM too: the database refuses to change history.
    for statement in (update(Event).values(kind="tampered"), delete(Event)):
        with pytest.raises(DatabaseError, match="append-only"):
            any_db.execute(statement)
        any_db.rollback()
    assert any_db.scalar(select(Event.kind)) == "test.created"
