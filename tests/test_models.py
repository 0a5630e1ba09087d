"""Rules the database itself enforces, on SQLite and on PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import delete, select, update
from sqlalchemy.exc import DatabaseError, IntegrityError

from vtt.db import make_db_factory, make_engine
from vtt.models import (
    Answer,
    AppendOnlyError,
    Event,
    Grade,
    IdentityReveal,
    Juror,
    Player,
    PlayerKind,
    Question,
    QuestionBank,
    QuestionTag,
    QuestionType,
    RoundAlias,
    SessionQuestion,
    SessionRound,
    SheetEntry,
    Vote,
    VttSession,
)


def new_session(session, name: str, code: str, rounds: int = 5, **fields) -> VttSession:
    """A session with its rounds 1..rounds (what votes, aliases and session questions must point at).

    Flushed right away: nothing tells the ORM to insert the rounds before the rows whose keys name them.
    """
    vtt = VttSession(
        name=name,
        join_code=code,
        seed=1234,
        rounds=rounds,
        round_states=[SessionRound(number=n) for n in range(1, rounds + 1)],
        **fields,
    )
    session.add(vtt)
    session.flush()
    return vtt


def seeded(session):
    bank = QuestionBank(name="b")
    question = Question(bank=bank, qid="q1", text="Who?", type=QuestionType.MCQ, choices=["a", "b"], answer_index=0)
    vtt = new_session(session, "s", "ABC234", bank=bank)
    human = Player(session=vtt, name="Minjun", kind=PlayerKind.HUMAN, age=10, token="t-human")
    ai = Player(session=vtt, name="AI", kind=PlayerKind.AI, token="t-ai", backends={"mcq": "m", "open": "o"})
    juror = Juror(session=vtt, label="J01", token="t-j1", expert=True)
    placed = SessionQuestion(session=vtt, question=question, round=1, position=1)
    session.add_all([bank, question, vtt, human, ai, juror, placed])
    session.commit()
    return vtt, placed, human, ai, juror


def another_session(session, question: Question):
    """A second session with a question, a player and a juror of its own."""
    other = new_session(session, "other", "XYZ789", rounds=2)
    stranger = Player(session=other, name="Stranger", kind=PlayerKind.HUMAN, token="t-stranger")
    outsider = Juror(session=other, label="J01", token="t-j-other")
    placed = SessionQuestion(session=other, question=question, round=1, position=1)
    session.add_all([other, stranger, outsider, placed])
    session.commit()
    return other, placed, stranger, outsider


@pytest.fixture
def any_db(migrated_database_url):
    engine = make_engine(migrated_database_url)
    with make_db_factory(engine)() as db:
        yield db
    engine.dispose()


def violates(session, *objects) -> bool:
    session.add_all(objects)
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        return True
    return False


def vote(vtt, number: int, juror, key: str, **fields) -> Vote:
    return Vote(session_id=vtt.id, round=number, juror=juror, client_key=key, **fields)


def test_one_vote_per_juror_round_and_slot(any_db):
    vtt, _, human, ai, juror = seeded(any_db)
    assert not violates(any_db, vote(vtt, 1, juror, "v1", slot=1, alias="A", player=ai))
    assert violates(any_db, vote(vtt, 1, juror, "v2", slot=1, alias="B", player=human))
    assert not violates(any_db, vote(vtt, 1, juror, "v3", slot=2, alias="B", player=human))
    assert not violates(any_db, vote(vtt, 2, juror, "v4", slot=1))  # an abstention
    assert violates(any_db, vote(vtt, 3, juror, "v5", slot=1, alias="A"))  # alias, no player
    assert violates(any_db, vote(vtt, 4, juror, "v6", slot=1, alias="A", player=ai, confidence=6))


def test_a_juror_names_a_player_once_per_round_and_only_in_their_own_session(any_db):
    vtt, _, human, ai, juror = seeded(any_db)
    assert not violates(any_db, vote(vtt, 1, juror, "v1", slot=1, alias="A", player=ai))
    assert violates(any_db, vote(vtt, 1, juror, "v2", slot=2, alias="A", player=ai))
    assert violates(any_db, vote(vtt, 0, juror, "v3", slot=1, alias="B", player=human))
    other, _, stranger, _ = another_session(any_db, any_db.scalar(select(Question)))
    # vtt's juror naming a player of another session, and a vote filed under the other session
    assert violates(
        any_db,
        Vote(session_id=vtt.id, round=2, juror_id=juror.id, slot=1, alias="C", player_id=stranger.id, client_key="v4"),
    )
    assert violates(
        any_db,
        Vote(
            session_id=other.id, round=2, juror_id=juror.id, slot=1, alias="C", player_id=stranger.id, client_key="v5"
        ),
    )


def test_round_aliases(any_db):
    vtt, _, human, ai, _ = seeded(any_db)
    assert not violates(
        any_db,
        RoundAlias(session_id=vtt.id, round=1, player=human, alias="A"),
        RoundAlias(session_id=vtt.id, round=1, player=ai, alias="B"),
    )
    assert violates(any_db, RoundAlias(session_id=vtt.id, round=1, player=human, alias="C"))  # one alias a round
    assert violates(
        any_db,
        RoundAlias(session_id=vtt.id, round=2, player=human, alias="B"),
        RoundAlias(session_id=vtt.id, round=2, player=ai, alias="B"),
    )  # one player an alias
    assert violates(any_db, RoundAlias(session_id=vtt.id, round=0, player=human, alias="A"))
    assert violates(any_db, RoundAlias(session_id=vtt.id, round=3, player=human, alias=""))


def answer(vtt, placed, player, key: str, **fields) -> Answer:
    return Answer(session_id=vtt.id, session_question=placed, player=player, client_key=key, **fields)


def test_one_answer_per_player_and_question(any_db):
    vtt, placed, human, ai, _ = seeded(any_db)
    assert not violates(any_db, answer(vtt, placed, human, "a1", choice_index=0))
    assert violates(any_db, answer(vtt, placed, human, "a2", choice_index=1))
    assert violates(any_db, answer(vtt, placed, ai, "a3", choice_index=-7))


def test_juror_labels_are_unique_within_a_session(any_db):
    vtt, *_ = seeded(any_db)
    assert violates(any_db, Juror(session=vtt, label="J01", token="t-j-dup"))


def test_grades_and_sheet_entries_are_bounded(any_db):
    vtt, placed, human, ai, juror = seeded(any_db)
    first = answer(vtt, placed, human, "a1", text="a")
    assert not violates(any_db, first, Grade(answer=first, correct=True, accuracy=5, coherence=0))
    other = answer(vtt, placed, ai, "a2", text="b")
    assert violates(any_db, other, Grade(answer=other, correct=False, depth=6))
    entry = dict(session_id=vtt.id, juror=juror, session_question_id=placed.id, player=ai, alias="A")
    assert not violates(
        any_db, SheetEntry(**entry, note="too fast", human_likeness=2, looks_like_ai=True, client_key="s1")
    )
    assert violates(any_db, SheetEntry(**entry, note="again", client_key="s2"))
    assert violates(
        any_db,
        SheetEntry(
            session_id=vtt.id,
            juror=juror,
            session_question_id=placed.id,
            player=human,
            alias="B",
            human_likeness=0,
            client_key="s3",
        ),
    )


def test_one_key_target_per_question(any_db):
    seeded(any_db)
    question = any_db.scalar(select(Question))
    assert not violates(
        any_db,
        QuestionTag(question=question, module="target", element="Character", is_key=True),
        QuestionTag(question=question, module="target", element="Object"),
    )
    assert violates(any_db, QuestionTag(question=question, module="target", element="Place", is_key=True))
    assert violates(any_db, QuestionTag(question=question, module="content", element="Identity", is_key=True))
    assert violates(any_db, QuestionTag(question=question, module="colour", element="Red"))


def test_an_mcq_may_withhold_its_key_and_clip_times_are_ordered(any_db):
    bank = QuestionBank(name="b2")  # a test split's question: no key (migration 0003)
    assert not violates(any_db, Question(bank=bank, qid="x", text="?", type=QuestionType.MCQ, choices=["a", "b"]))
    assert violates(
        any_db,
        Question(bank=QuestionBank(name="b3"), qid="y", text="?", type=QuestionType.OPEN, clip_start=5, clip_end=2),
    )


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


# --- what the database itself refuses since 0002 ----------------------------------------------


def test_answers_and_sheet_entries_point_only_at_their_own_session(any_db):
    vtt, placed, human, ai, juror = seeded(any_db)
    other, elsewhere, stranger, outsider = another_session(any_db, placed.question)
    # an answer to another session's question, filed under either session
    assert violates(
        any_db, Answer(session_id=vtt.id, session_question_id=elsewhere.id, player_id=human.id, client_key="a1")
    )
    assert violates(
        any_db, Answer(session_id=other.id, session_question_id=elsewhere.id, player_id=human.id, client_key="a2")
    )
    assert violates(
        any_db, Answer(session_id=other.id, session_question_id=placed.id, player_id=stranger.id, client_key="a3")
    )
    assert not violates(
        any_db, Answer(session_id=other.id, session_question_id=elsewhere.id, player_id=stranger.id, client_key="a4")
    )
    # a sheet entry about another session's question, player, or by another session's juror
    entry = dict(session_id=vtt.id, juror_id=juror.id, session_question_id=placed.id, player_id=ai.id, alias="B")
    for key, change in enumerate(
        (
            {"session_question_id": elsewhere.id},
            {"player_id": stranger.id},
            {"juror_id": outsider.id},
            {"session_id": other.id},
        )
    ):
        assert violates(any_db, SheetEntry(**{**entry, **change}, client_key=f"s{key}"))
    assert not violates(any_db, SheetEntry(**entry, client_key="s-ok"))


def test_only_rounds_the_session_has(any_db):
    vtt, placed, human, ai, juror = seeded(any_db)
    assert violates(any_db, vote(vtt, 99, juror, "v1", slot=1, alias="A", player=ai))
    assert violates(any_db, vote(vtt, 6, juror, "v2", slot=1))  # rounds=5: there is no session_round 6
    assert violates(any_db, RoundAlias(session_id=vtt.id, round=99, player=human, alias="A"))
    unplaced = Question(
        bank=placed.question.bank, qid="q2", text="Why?", type=QuestionType.OPEN, reference_answer="because"
    )
    assert violates(any_db, SessionQuestion(session=vtt, question=unplaced, round=99, position=1))
    assert violates(any_db, IdentityReveal(session_id=vtt.id, round=99, player_id=ai.id))
    assert not violates(
        any_db,
        vote(vtt, 5, juror, "v3", slot=1, alias="A", player=ai),
        RoundAlias(session_id=vtt.id, round=5, player=ai, alias="A"),
        IdentityReveal(session_id=vtt.id, round=5, player_id=ai.id),
    )
    assert violates(any_db, IdentityReveal(session_id=vtt.id, round=5, player_id=ai.id))  # revealed once a round


def test_client_keys_are_required_and_unique_per_writer(any_db):
    vtt, placed, human, ai, juror = seeded(any_db)
    second = SessionQuestion(
        session=vtt,
        question=Question(
            bank=placed.question.bank, qid="q2", text="Why?", type=QuestionType.OPEN, reference_answer="because"
        ),
        round=1,
        position=2,
    )
    any_db.add(second)
    any_db.commit()
    assert not violates(any_db, vote(vtt, 1, juror, "k1", slot=1, alias="A", player=ai))
    assert violates(any_db, vote(vtt, 2, juror, "k1", slot=1, alias="A", player=ai))  # same juror, same key
    assert violates(any_db, vote(vtt, 2, juror, None, slot=1))
    assert not violates(any_db, answer(vtt, placed, human, "k1"))  # keys are per writer: another table, fine
    assert violates(any_db, answer(vtt, second, human, "k1"))
    assert violates(any_db, answer(vtt, second, human, None))
    assert not violates(any_db, answer(vtt, second, ai, "k1"))
    entry = dict(session_id=vtt.id, juror=juror, player=ai, alias="A")
    assert not violates(any_db, SheetEntry(**entry, session_question_id=placed.id, client_key="k1"))
    # the lines of one sheet message share its key (replays are recognised by the event log)
    assert not violates(any_db, SheetEntry(**entry, session_question_id=second.id, client_key="k1"))
    assert violates(any_db, SheetEntry(**entry, session_question_id=second.id, client_key=None))
    # the event log recognises a replayed action: one client key per (session, actor); none is fine
    assert not violates(
        any_db,
        Event(session_id=vtt.id, kind="vote.cast", actor="J01", client_key="k1"),
        Event(session_id=vtt.id, kind="vote.cast", actor="J02", client_key="k1"),
        Event(session_id=vtt.id, kind="tick"),
        Event(session_id=vtt.id, kind="tick"),
    )
    assert violates(any_db, Event(session_id=vtt.id, kind="vote.cast", actor="J01", client_key="k1"))


def test_timestamps_come_back_timezone_aware_utc(any_db):
    vtt, _, _, ai, juror = seeded(any_db)
    seoul = timezone(timedelta(hours=9))
    any_db.add_all(
        [
            Event(session_id=vtt.id, kind="seoul", at=datetime(2024, 5, 1, 19, 30, tzinfo=seoul)),
            Event(session_id=vtt.id, kind="naive", at=datetime(2024, 5, 1, 10, 30)),  # naive is taken as UTC
            vote(vtt, 1, juror, "v1", slot=1, alias="A", player=ai),
        ]
    )
    any_db.commit()
    any_db.expire_all()
    times = dict(any_db.execute(select(Event.kind, Event.at)).all())
    assert times == {
        "seoul": datetime(2024, 5, 1, 10, 30, tzinfo=UTC),
        "naive": datetime(2024, 5, 1, 10, 30, tzinfo=UTC),
    }
    cast_at = any_db.scalar(select(Vote.cast_at))
    created_at = any_db.scalar(select(VttSession.created_at))
    for value in (*times.values(), cast_at, created_at):
        assert value.tzinfo is UTC
    assert abs(datetime.now(UTC) - cast_at) < timedelta(minutes=5)


def test_deleting_a_session_removes_everything_of_it(db_factory):
    from sqlalchemy import func, select

    from tests.support.live import make_session
    from vtt.models import Answer, Juror, SessionQuestion, SessionRound, VttSession

    people = make_session(db_factory, rounds=2, per_round=1)
    with db_factory() as db:
        question = db.scalars(select(SessionQuestion)).first()
        db.add(
            Answer(
                session_id=people.session_id,
                session_question_id=question.id,
                player_id=people.player_ids["Mina"],
                text="x",
                client_key="k",
            )
        )
        db.commit()
        db.delete(db.get(VttSession, people.session_id))
        db.commit()
        for model in (SessionRound, SessionQuestion, Answer, Juror):
            assert db.scalar(select(func.count()).select_from(model)) == 0
