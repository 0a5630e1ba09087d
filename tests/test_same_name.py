"""Two creations of one name at the same instant: the second is told the name is taken, never given a server error.

Found: a session, a study or a bank's creation checked that its name was free, then inserted it; on PostgreSQL two
requests at once both found it free, and the second one's insert failed on the unique name (an IntegrityError: a
500 for the host's page, a traceback for the command line).  SQLite's write lock queues them (the second finds the
name taken when it checks), so the race is PostgreSQL's."""

from __future__ import annotations

import threading
import time

import pytest

from tests.support.paths import DATA
from vtt.banks import import_bank, read_bank
from vtt.models import Question, QuestionBank, Study, VttSession
from vtt.problems import InputError
from vtt.sessions.create import SessionConfig, create_session
from vtt.studies import StudyProblem, create_study

pytestmark = [pytest.mark.postgres, pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)]
BANK = "Spec examples"
PLAYERS = [{"name": "Mina", "kind": "human", "age": 9}, {"name": "Bot", "kind": "ai"}]


@pytest.fixture
def config(db_factory) -> SessionConfig:
    with db_factory() as db:
        import_bank(db, read_bank(DATA / "spec_examples.csv"), BANK)
        db.commit()
    return SessionConfig.from_dict(
        {"name": "Pilot", "bank": BANK, "rounds": 1, "questions_per_round": 2, "players": PLAYERS}
    )


def second_while_first_is_open(db_factory, make):
    """``make(db)`` in a first transaction left open, then in a second one (its check finds the name free, its
    insert waits on the first's), then the first commits: what the second raised, or None."""
    outcome: dict[str, BaseException | None] = {}
    with db_factory() as first:
        made = make(first)
        first.flush()

        def second() -> None:
            with db_factory() as db:
                try:
                    make(db)
                    db.commit()
                    outcome["raised"] = None
                except BaseException as error:  # the test reports what it was
                    outcome["raised"] = error

        thread = threading.Thread(target=second)
        thread.start()
        time.sleep(0.5)  # the second's insert is waiting on the first's uncommitted row
        first.commit()
        thread.join(10)
    assert not thread.is_alive()
    return made, outcome["raised"]


def test_two_sessions_of_one_name(db_factory, config):
    _, raised = second_while_first_is_open(db_factory, lambda db: create_session(db, config))
    assert isinstance(raised, InputError), repr(raised)
    assert [problem.message for problem in raised.problems] == ["a session named 'Pilot' exists already"]
    with db_factory() as db:
        assert db.query(VttSession).filter_by(name="Pilot").count() == 1


def test_two_studies_of_one_name(db_factory, config):
    with db_factory() as db:
        code = create_session(db, config).join_code
        db.commit()
    _, raised = second_while_first_is_open(db_factory, lambda db: create_study(db, "Wave 1", [code]))
    assert isinstance(raised, StudyProblem), repr(raised)
    assert str(raised) == "a study called 'Wave 1' exists already (add sessions to it instead)"
    with db_factory() as db:
        assert db.query(Study).filter_by(name="Wave 1").count() == 1


def test_two_imports_into_one_new_bank_make_one_bank_with_both(db_factory, tmp_path):
    """A bank is created when an import names a new one: the second import adds to the bank the first made."""
    first = tmp_path / "first.csv"
    first.write_text("qid,question,answer\na1,Who?,Ann\n")
    second = tmp_path / "second.csv"
    second.write_text("qid,question,answer\nb1,Where?,Home\n")
    files = iter([first, second])
    _, raised = second_while_first_is_open(db_factory, lambda db: import_bank(db, read_bank(next(files)), "New"))
    assert raised is None
    with db_factory() as db:
        (bank,) = db.query(QuestionBank).filter_by(name="New").all()
        assert sorted(q.qid for q in db.query(Question).filter_by(bank_id=bank.id)) == ["a1", "b1"]
