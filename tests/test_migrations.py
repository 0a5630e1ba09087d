"""Migrations build the schema from empty on SQLite and PostgreSQL, and match the models exactly (each test that
takes ``empty_database_url`` runs on both)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.util import CommandError
from sqlalchemy import inspect, select, text
from sqlalchemy.exc import DatabaseError, IntegrityError

from vtt.db import current_revision, downgrade, make_db_factory, make_engine, upgrade
from vtt.jobs.model import Job  # noqa: F401 - the job table, in Base.metadata
from vtt.models import Base, Event, Phase, Vote, VttSession

TABLES = {
    "question_bank",
    "question",
    "question_tag",
    "vtt_session",
    "session_round",
    "session_question",
    "player",
    "round_alias",
    "juror",
    "jury_link",
    "juror_reply",
    "juror_claim",
    "take_reservation",
    "answer",
    "grade",
    "grader_mark",
    "judge_suggestion",
    "recording",
    "study",
    "study_session",
    "sheet_entry",
    "vote",
    "identity_reveal",
    "event",
    "job",
    "alembic_version",
}
HEAD = "0020"


def assert_schema_matches_models(url: str) -> None:
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            assert set(inspect(connection).get_table_names()) == TABLES
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            assert compare_metadata(context, Base.metadata) == []
    finally:
        engine.dispose()


def test_from_empty(empty_database_url) -> None:
    url = empty_database_url
    assert current_revision(url) is None
    upgrade(url)
    assert current_revision(url) == HEAD
    assert_schema_matches_models(url)
    downgrade(url, "base")
    assert current_revision(url) is None
    engine = make_engine(url)
    with engine.connect() as connection:
        assert set(inspect(connection).get_table_names()) <= {"alembic_version"}
    engine.dispose()
    upgrade(url)
    assert current_revision(url) == HEAD


# --- 0001 -> 0002 with data -----------------------------------------------------------------

SESSION_COLUMNS = (
    "rounds, questions_per_round, seed, reveal_policy, pass_rule, pass_alpha, pass_threshold_pct, "
    "ai_votes_per_juror, scoring_method, state_version, created_at"
)
SESSION_VALUES = "2, 1, 7, 'end', 'human-tie', 0.05, 70, 1, 'cogsci2024', 3, :at"
# status -> the phase 0002 derives from it
SESSIONS = {1: ("running", "round"), 2: ("lobby", "lobby"), 3: ("draft", "draft"), 4: ("finished", "finished")}


def insert_0001_data(url: str) -> None:
    """What a 0001 database holds after a round was played: written with plain SQL, as 0001 knew it."""
    at = "2024-05-01 10:00:00" if url.startswith("sqlite") else "2024-05-01 10:00:00+00"
    statements = [
        "INSERT INTO question_bank (id, name, description, source_format, created_at) "
        "VALUES (1, 'bank', '', 'csv', :at)",
        "INSERT INTO question (id, bank_id, qid, text, type, choices, answer_index, reference_answer, source) "
        "VALUES (1, 1, 'q1', 'Who?', 'mcq', '[\"a\", \"b\"]', 0, '', '{}')",
        *(
            f"INSERT INTO vtt_session (id, name, join_code, status, {SESSION_COLUMNS}) "
            f"VALUES ({n}, 'session {n}', 'CODE{n}', '{status}', {SESSION_VALUES})"
            for n, (status, _) in SESSIONS.items()
        ),
        "INSERT INTO session_round (id, session_id, number, status) VALUES (1, 1, 1, 'closed'), (2, 1, 2, 'pending')",
        "INSERT INTO session_question (id, session_id, question_id, round, position, shown_at) "
        "VALUES (1, 1, 1, 1, 1, :at)",
        "INSERT INTO player (id, session_id, name, kind, backends, details, token) "
        "VALUES (1, 1, 'Minjun', 'human', '{}', '{}', 't-human'), (2, 1, 'AI', 'ai', '{\"mcq\": \"m\"}', '{}', 't-ai')",
        "INSERT INTO juror (id, session_id, label, token, joined_at) VALUES (1, 1, 'J01', 't-j1', :at)",
        "INSERT INTO round_alias (id, session_id, round, player_id, alias) VALUES (1, 1, 1, 1, 'A'), (2, 1, 1, 2, 'B')",
        "INSERT INTO answer (id, session_question_id, player_id, text, choice_index, submitted_at, late, client_key) "
        "VALUES (1, 1, 1, 'a', 0, :at, false, NULL), (2, 1, 2, 'b', 1, :at, false, 'k-ai')",
        "INSERT INTO grade (id, answer_id, correct, automatic, graded_at) VALUES (1, 1, true, true, :at)",
        "INSERT INTO sheet_entry (id, juror_id, session_question_id, player_id, alias, note, looks_like_ai, "
        "updated_at, client_key) VALUES (1, 1, 1, 2, 'B', 'too fast', true, :at, NULL)",
        "INSERT INTO vote (id, session_id, round, juror_id, slot, alias, player_id, confidence, reason, cast_at, "
        "client_key) VALUES (1, 1, 1, 1, 1, 'B', 2, 4, 'instant', :at, NULL)",
        "INSERT INTO event (id, session_id, at, kind, actor, payload) "
        "VALUES (1, 1, :at, 'session.created', 'host', '{}'), (2, 1, :at, 'vote.cast', 'J01', '{\"round\": 1}')",
    ]
    engine = make_engine(url)
    try:
        with engine.begin() as connection:
            for statement in statements:
                connection.execute(text(statement), {"at": at} if ":at" in statement else {})
    finally:
        engine.dispose()


def query(url: str, sql: str) -> list[tuple]:
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            return [tuple(row) for row in connection.execute(text(sql))]
    finally:
        engine.dispose()


def execute(url: str, sql: str, **values) -> None:
    engine = make_engine(url)
    try:
        with engine.begin() as connection:
            connection.execute(text(sql), values)
    finally:
        engine.dispose()


def row_counts(url: str) -> dict[str, int]:
    tables = (
        "question_bank",
        "question",
        "vtt_session",
        "session_round",
        "session_question",
        "player",
        "juror",
        "round_alias",
        "answer",
        "grade",
        "sheet_entry",
        "vote",
        "event",
    )
    return {table: query(url, f"SELECT COUNT(*) FROM {table}")[0][0] for table in tables}


def assert_event_log_append_only(url: str) -> None:
    engine = make_engine(url)
    try:
        for statement in ("UPDATE event SET kind = 'tampered'", "DELETE FROM event"):
            with engine.connect() as connection, pytest.raises(DatabaseError, match="append-only"):
                connection.execute(text(statement))
    finally:
        engine.dispose()
    assert query(url, "SELECT kind FROM event ORDER BY id") == [("session.created",), ("vote.cast",)]


def assert_0002_data(url: str) -> None:
    assert query(url, "SELECT id, session_id, client_key, redacted, edited_at FROM answer ORDER BY id") == [
        (1, 1, "legacy-1", False, None),
        (2, 1, "k-ai", False, None),
    ]
    assert query(url, "SELECT id, session_id, juror_id, player_id, client_key, note FROM sheet_entry") == [
        (1, 1, 1, 2, "legacy-1", "too fast")
    ]
    assert query(url, "SELECT id, round, player_id, client_key FROM vote") == [(1, 1, 2, "legacy-1")]
    assert query(url, "SELECT participants, tally FROM session_round WHERE id = 1") == [(None, None)]
    assert query(url, "SELECT juror_group FROM juror") == [(None,)]
    assert query(url, "SELECT client_key FROM event ORDER BY id") == [(None,), (None,)]
    engine = make_engine(url)
    try:
        with make_db_factory(engine)() as db:
            sessions = {s.id: s for s in db.scalars(select(VttSession))}
            assert {n: s.phase for n, s in sessions.items()} == {n: Phase(p) for n, (_, p) in SESSIONS.items()}
            for s in sessions.values():
                assert (s.open_join, s.design, s.design_hash, s.audience_versions, s.phase_deadline_at) == (
                    False,
                    {},
                    "",
                    {},
                    None,
                )
                assert s.seed == 7 and s.state_version == 3
            # timestamps come back timezone-aware UTC on both backends
            expected = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
            assert db.scalar(select(Event.at).where(Event.id == 1)) == expected
            assert db.scalar(select(Event.at).where(Event.id == 1)).utcoffset().total_seconds() == 0
            assert db.scalar(select(Vote.cast_at)) == expected
        # the new phase column has its CHECK constraint
        with engine.connect() as connection, pytest.raises(IntegrityError):
            connection.execute(text("UPDATE vtt_session SET phase = 'bogus' WHERE id = 1"))
    finally:
        engine.dispose()


def test_upgrade_keeps_0001_data(empty_database_url) -> None:
    url = empty_database_url
    upgrade(url, "0001")
    insert_0001_data(url)
    counts = row_counts(url)

    upgrade(url)
    assert current_revision(url) == HEAD
    assert row_counts(url) == counts
    assert_0002_data(url)
    assert_schema_matches_models(url)
    assert_event_log_append_only(url)

    downgrade(url, "0001")
    assert current_revision(url) == "0001"
    assert row_counts(url) == counts
    # the keys 0002 filled in are NULL again; a key the client gave stays
    assert query(url, "SELECT id, client_key FROM answer ORDER BY id") == [(1, None), (2, "k-ai")]
    assert query(url, "SELECT client_key FROM sheet_entry") == [(None,)]
    assert query(url, "SELECT client_key FROM vote") == [(None,)]
    assert query(url, "SELECT status FROM vtt_session ORDER BY id") == [(s,) for s, _ in SESSIONS.values()]
    engine = make_engine(url)
    with engine.connect() as connection:
        inspector = inspect(connection)
        assert "identity_reveal" not in inspector.get_table_names()
        assert "phase" not in {c["name"] for c in inspector.get_columns("vtt_session")}
        assert "session_id" not in {c["name"] for c in inspector.get_columns("answer")}
    engine.dispose()
    assert_event_log_append_only(url)

    upgrade(url)
    assert current_revision(url) == HEAD
    assert row_counts(url) == counts
    assert_0002_data(url)
    assert_schema_matches_models(url)
    assert_event_log_append_only(url)


def test_upgrade_refuses_rows_the_new_keys_would_break(empty_database_url) -> None:
    url = empty_database_url
    upgrade(url, "0001")
    insert_0001_data(url)
    bad = [
        # a vote and an alias in round 3, which session 1 has no session_round row for
        "INSERT INTO vote (id, session_id, round, juror_id, slot, reason, cast_at, client_key) "
        "VALUES (2, 1, 3, 1, 1, '', :at, 'k-v2')",
        "INSERT INTO round_alias (id, session_id, round, player_id, alias) VALUES (3, 1, 3, 1, 'A')",
        # an answer from a player of another session
        "INSERT INTO player (id, session_id, name, kind, backends, details, token) "
        "VALUES (3, 2, 'Stranger', 'human', '{}', '{}', 't-stranger')",
        "INSERT INTO answer (id, session_question_id, player_id, text, submitted_at, late, client_key) "
        "VALUES (3, 1, 3, 'x', :at, false, 'k3')",
        # the juror's two votes with one client key
        "INSERT INTO vote (id, session_id, round, juror_id, slot, reason, cast_at, client_key) "
        "VALUES (3, 1, 2, 1, 1, '', :at, 'legacy-1')",
    ]
    at = "2024-05-01 10:00:00" if url.startswith("sqlite") else "2024-05-01 10:00:00+00"
    engine = make_engine(url)
    with engine.begin() as connection:
        for statement in bad:
            connection.execute(text(statement), {"at": at} if ":at" in statement else {})
    engine.dispose()
    counts = row_counts(url)

    with pytest.raises(CommandError) as refused:
        upgrade(url)
    message = str(refused.value)
    for named in (
        "vote id=2 (session 1, round 3)",
        "round_alias id=3 (session 1, round 3)",
        "answer id=3 (session question of session 1, player of session 2)",
        "vote id=1 (juror_id 1, client_key 'legacy-1')",
        "vote id=3 (juror_id 1, client_key 'legacy-1')",
    ):
        assert named in message
    assert "vote id=1 (session" not in message  # round 1 exists
    assert current_revision(url) == "0001"
    assert row_counts(url) == counts
    assert query(url, "SELECT client_key FROM answer WHERE id = 1") == [(None,)]


def test_sqlite_connections_use_wal_foreign_keys_and_busy_timeout(database_url):
    engine = make_engine(database_url)
    with engine.connect() as connection:
        pragma = lambda name: connection.exec_driver_sql(f"PRAGMA {name}").scalar()  # noqa: E731
        assert pragma("journal_mode") == "wal"
        assert pragma("foreign_keys") == 1
        assert pragma("busy_timeout") == 10_000
    engine.dispose()


# --- 0003: questions without keys -------------------------------------------------------------


def test_keyless_questions_and_the_way_back(empty_database_url) -> None:
    url = empty_database_url
    from vtt.models import Question, QuestionBank, QuestionType

    upgrade(url)
    engine = make_engine(url)
    with make_db_factory(engine)() as db, db.begin():  # a test split's question: no key, accepted
        bank = QuestionBank(name="TVQA test")
        db.add(bank)
        db.flush()
        db.add(
            Question(
                bank_id=bank.id, qid="7", text="Why?", type=QuestionType.MCQ, choices=["a", "b"], answer_index=None
            )
        )
    engine.dispose()
    downgrade(url, "0003")
    with pytest.raises(CommandError, match=r"question id=1 \(qid '7'\)"):
        downgrade(url, "0002")
    assert current_revision(url) == "0003"
    engine = make_engine(url)
    with engine.begin() as connection:
        connection.execute(text("UPDATE question SET answer_index = 1"))
    engine.dispose()
    downgrade(url, "0002")
    engine = make_engine(url)
    with pytest.raises(IntegrityError), engine.begin() as connection:  # 0002's check is back
        connection.execute(text("UPDATE question SET answer_index = NULL"))
    engine.dispose()
    upgrade(url)
    assert query(url, "SELECT qid, answer_index FROM question") == [("7", 1)]


def upgraded_with_0001_data(url: str) -> str:
    """A database with rows of schema 0001, upgraded to the head; a timestamp literal this database takes."""
    upgrade(url, "0001")
    insert_0001_data(url)
    upgrade(url)
    return "2024-05-01 10:00:00" if url.startswith("sqlite") else "2024-05-01 10:00:00+00"


# --- 0004: a sheet message's lines share its client id -----------------------------------------


def test_sheet_lines_share_a_client_key_and_the_way_back(empty_database_url) -> None:
    url = empty_database_url
    at = upgraded_with_0001_data(url)
    second_line = (
        "INSERT INTO sheet_entry (id, session_id, juror_id, session_question_id, player_id, alias, note, "
        "looks_like_ai, updated_at, client_key) SELECT 2, session_id, juror_id, session_question_id, 1, "
        "'B', 'also', looks_like_ai, :at, client_key FROM sheet_entry WHERE id = 1"
    )
    engine = make_engine(url)
    with engine.begin() as connection:  # two lines of one message: accepted
        connection.execute(text(second_line), {"at": at})
    engine.dispose()
    downgrade(url, "0004")
    with pytest.raises(CommandError, match=r"juror id=1 \(client_key 'legacy-1', 2 lines\)"):
        downgrade(url, "0003")
    assert current_revision(url) == "0004"
    assert query(url, "SELECT COUNT(*) FROM sheet_entry") == [(2,)]
    engine = make_engine(url)
    with engine.begin() as connection:
        connection.execute(text("DELETE FROM sheet_entry WHERE id = 2"))
    engine.dispose()
    downgrade(url, "0003")
    engine = make_engine(url)
    with pytest.raises(IntegrityError), engine.begin() as connection:  # 0002's constraint is back
        connection.execute(text(second_line), {"at": at})
    engine.dispose()
    upgrade(url)
    assert_schema_matches_models(url)
    assert query(url, "SELECT id, client_key FROM sheet_entry") == [(1, "legacy-1")]


# --- 0005: each grader's own marks ----------------------------------------------------------------


def test_grader_marks_and_the_way_back(empty_database_url) -> None:
    url = empty_database_url
    at = upgraded_with_0001_data(url)
    mark = (
        "INSERT INTO grader_mark (answer_id, grader, correct, graded_at, depth) "
        "VALUES (2, :grader, :correct, :at, :depth)"
    )
    engine = make_engine(url)
    with engine.begin() as connection:
        connection.execute(text(mark), {"grader": "Ana", "correct": True, "at": at, "depth": 5})
        connection.execute(text(mark), {"grader": "Ben", "correct": False, "at": at, "depth": None})
    for refused in (
        {"grader": "Ana", "correct": False, "at": at, "depth": None},  # Ana marked answer 2 already
        {"grader": "Cy", "correct": False, "at": at, "depth": 6},  # the rubric is 0-5
        {"grader": "", "correct": False, "at": at, "depth": None},
    ):  # a mark names its grader
        with pytest.raises(IntegrityError), engine.begin() as connection:
            connection.execute(text(mark), refused)
    engine.dispose()
    assert query(url, "SELECT grader, correct, depth FROM grader_mark ORDER BY grader") == [
        ("Ana", True, 5),
        ("Ben", False, None),
    ]

    downgrade(url, "0004")
    engine = make_engine(url)
    with engine.connect() as connection:
        assert "grader_mark" not in inspect(connection).get_table_names()
    engine.dispose()
    assert query(url, "SELECT answer_id, correct FROM grade") == [(1, True)]  # the final marks stay
    upgrade(url)
    assert_schema_matches_models(url)
    assert query(url, "SELECT COUNT(*) FROM grader_mark") == [(0,)]


# --- 0006: answers' provenance and answers the host entered ---------------------------------------


def test_answer_provenance_and_the_way_back(empty_database_url) -> None:
    url = empty_database_url
    upgrade(url, "0001")
    insert_0001_data(url)
    upgrade(url, "0005")
    upgrade(url)
    assert_schema_matches_models(url)
    # existing answers: no provenance, not entered by the host
    assert query(url, "SELECT id, provenance, entered_by_host FROM answer ORDER BY id") == [
        (1, None, False),
        (2, None, False),
    ]
    engine = make_engine(url)
    with make_db_factory(engine)() as db, db.begin():
        from vtt.models import Answer

        ai_answer = db.get(Answer, 2)
        ai_answer.provenance = {"backend": "replay", "model": "qwen2-vl-7b", "settings": {"file": "preds.csv"}}
        ai_answer.entered_by_host = True
    with make_db_factory(engine)() as db:
        from vtt.models import Answer

        assert db.get(Answer, 2).provenance["model"] == "qwen2-vl-7b"
        assert db.get(Answer, 1).provenance is None  # SQL NULL, not JSON null
    engine.dispose()
    assert query(url, "SELECT id FROM answer WHERE provenance IS NULL") == [(1,)]

    downgrade(url, "0005")
    engine = make_engine(url)
    with engine.connect() as connection:
        columns = {c["name"] for c in inspect(connection).get_columns("answer")}
    engine.dispose()
    assert not {"provenance", "entered_by_host"} & columns
    assert query(url, "SELECT id, text FROM answer ORDER BY id") == [(1, "a"), (2, "b")]  # the answers stay
    upgrade(url)
    assert_schema_matches_models(url)
    assert query(url, "SELECT id, provenance, entered_by_host FROM answer ORDER BY id") == [
        (1, None, False),
        (2, None, False),
    ]


# --- 0007: when the host's screening of a question's clip starts ------------------------------------


def test_clip_screening_and_the_way_back(empty_database_url) -> None:
    url = empty_database_url
    upgrade(url, "0001")
    insert_0001_data(url)
    upgrade(url, "0006")
    placed = query(url, "SELECT id, shown_at FROM session_question ORDER BY id")
    upgrade(url)
    assert_schema_matches_models(url)
    # questions placed before: never screened by the host
    assert query(url, "SELECT id, clip_started_at FROM session_question ORDER BY id") == [
        (pid, None) for pid, _ in placed
    ]
    engine = make_engine(url)
    moment = datetime(2026, 11, 25, 10, 0, 1, 500000, tzinfo=UTC)
    with make_db_factory(engine)() as db, db.begin():
        from vtt.models import SessionQuestion

        db.get(SessionQuestion, placed[0][0]).clip_started_at = moment
    with make_db_factory(engine)() as db:
        from vtt.models import SessionQuestion

        assert db.get(SessionQuestion, placed[0][0]).clip_started_at == moment  # to the microsecond, in UTC
    engine.dispose()

    downgrade(url, "0006")
    engine = make_engine(url)
    with engine.connect() as connection:
        columns = {c["name"] for c in inspect(connection).get_columns("session_question")}
    engine.dispose()
    assert "clip_started_at" not in columns
    assert query(url, "SELECT id, shown_at FROM session_question ORDER BY id") == placed  # the placements stay
    upgrade(url)
    assert_schema_matches_models(url)


# --- 0008: open join rules and removed jurors --------------------------------------------------------


def test_join_rules_and_the_way_back(empty_database_url) -> None:
    url = empty_database_url
    upgrade(url, "0001")
    insert_0001_data(url)
    upgrade(url, "0007")
    sessions = query(url, "SELECT id, open_join FROM vtt_session ORDER BY id")
    jurors = query(url, "SELECT id, label FROM juror ORDER BY id")
    upgrade(url)
    assert_schema_matches_models(url)
    # sessions before: no cap, no door code; jurors before: none removed
    assert query(url, "SELECT id, open_join_cap, join_door FROM vtt_session ORDER BY id") == [
        (sid, None, False) for sid, _ in sessions
    ]
    assert query(url, "SELECT id, removed_at FROM juror ORDER BY id") == [(jid, None) for jid, _ in jurors]
    downgrade(url, "0007")
    assert query(url, "SELECT id, open_join FROM vtt_session ORDER BY id") == sessions
    assert query(url, "SELECT id, label FROM juror ORDER BY id") == jurors
    upgrade(url)
    assert_schema_matches_models(url)


# --- 0009: the judge's suggestions ---------------------------------------------------------------------------------


def test_judge_suggestions_and_the_way_back(empty_database_url) -> None:
    url = empty_database_url
    upgrade(url, "0001")
    insert_0001_data(url)
    upgrade(url, "0008")
    answers = query(url, "SELECT id, text FROM answer ORDER BY id")
    upgrade(url)
    assert_schema_matches_models(url)
    assert query(url, "SELECT count(*) FROM judge_suggestion") == [(0,)]
    answer_id = answers[0][0]
    execute(
        url,
        "INSERT INTO judge_suggestion (answer_id, dimension, score, model, endpoint, prompt_sha256, temperature,"
        " asked_at, reply) VALUES (:answer, 'accuracy', 4, 'm', 'http://127.0.0.1/v1/chat/completions', :hash, 0,"
        " '2026-11-26 19:00:00', '{''score'': 4}')",
        answer=answer_id,
        hash="0" * 64,
    )
    with pytest.raises(Exception, match="(?i)check|constraint"):  # a score outside 0-5 is refused by the database
        execute(
            url,
            "INSERT INTO judge_suggestion (answer_id, dimension, score, model, endpoint, prompt_sha256, asked_at,"
            " reply) VALUES (:answer, 'depth', 6, 'm', 'e', :hash, '2026-11-26 19:00:00', '')",
            answer=answer_id,
            hash="0" * 64,
        )
    downgrade(url, "0008")
    assert query(url, "SELECT id, text FROM answer ORDER BY id") == answers  # the answers stay
    upgrade(url)
    assert_schema_matches_models(url)


# --- 0010: players' answer modes -------------------------------------------------------------------------------


def test_answer_modes_and_the_way_back(empty_database_url) -> None:
    url = empty_database_url
    upgrade(url, "0001")
    insert_0001_data(url)
    upgrade(url, "0009")
    players = query(url, "SELECT id, name, kind FROM player ORDER BY id")
    upgrade(url)
    assert_schema_matches_models(url)
    engine = make_engine(url)
    try:
        with make_db_factory(engine)() as db, db.begin():
            from vtt.models import Player

            # players before: all of them text players
            assert [(p.id, p.answer_modes) for p in db.scalars(select(Player).order_by(Player.id))] == [
                (pid, ["text"]) for pid, _, _ in players
            ]
            db.get(Player, players[0][0]).answer_modes = ["text", "read_aloud"]
            db.add(Player(id=10, session_id=1, name="New", kind="human", token="t-new"))  # the model's default
        with make_db_factory(engine)() as db:
            from vtt.models import Player

            assert db.get(Player, players[0][0]).answer_modes == ["text", "read_aloud"]
            assert db.scalar(select(Player.answer_modes).where(Player.name == "New")) == ["text"]
    finally:
        engine.dispose()
    # a row written without the column (older code, plain SQL) gets the default too
    execute(
        url,
        "INSERT INTO player (id, session_id, name, kind, backends, details, token) "
        "VALUES (11, 1, 'Plain', 'human', '{}', '{}', 't-plain')",
    )
    assert query(url, "SELECT COUNT(*) FROM player WHERE answer_modes IS NULL") == [(0,)]
    downgrade(url, "0009")
    engine = make_engine(url)
    with engine.connect() as connection:
        columns = {c["name"] for c in inspect(connection).get_columns("player")}
    engine.dispose()
    assert "answer_modes" not in columns
    assert query(url, "SELECT id, name, kind FROM player ORDER BY id")[: len(players)] == players  # they stay
    upgrade(url)
    assert_schema_matches_models(url)
    engine = make_engine(url)
    try:
        with make_db_factory(engine)() as db:
            from vtt.models import Player

            assert {tuple(modes) for modes in db.scalars(select(Player.answer_modes))} == {("text",)}
    finally:
        engine.dispose()


# --- 0015: juries ---------------------------------------------------------------------------------------------------


def test_juries_and_the_way_back(empty_database_url) -> None:
    url = empty_database_url
    upgrade(url, "0001")
    insert_0001_data(url)
    upgrade(url, "0014")
    jurors = query(url, "SELECT id, label FROM juror ORDER BY id")
    assert jurors
    upgrade(url)
    assert_schema_matches_models(url)
    # every juror before judged in the room: the live jury
    assert query(url, "SELECT id, jury FROM juror ORDER BY id") == [(jid, "live") for jid, _ in jurors]
    execute(url, "UPDATE juror SET jury = 'displaced' WHERE id = :id", id=jurors[0][0])
    with pytest.raises(Exception, match="(?i)check|constraint"):  # a jury outside live, displaced, ai is refused
        execute(url, "UPDATE juror SET jury = 'online' WHERE id = :id", id=jurors[0][0])
    downgrade(url, "0014")
    assert query(url, "SELECT id, label FROM juror ORDER BY id") == jurors  # the jurors stay
    upgrade(url)
    assert_schema_matches_models(url)
    assert {jury for (jury,) in query(url, "SELECT jury FROM juror")} == {"live"}


# --- 0016: displaced and AI juries ------------------------------------------------------------------------------------


def test_displaced_and_ai_juries_and_the_way_back(empty_database_url) -> None:
    url = empty_database_url
    upgrade(url, "0001")
    insert_0001_data(url)
    upgrade(url, "0015")
    jurors = query(url, "SELECT id, label FROM juror ORDER BY id")
    upgrade(url)
    assert_schema_matches_models(url)
    # jurors from before judged every round of their session, by no model, with no code or link
    assert query(url, "SELECT rounds, model, completion_code, attention_passed, link_id FROM juror") == [
        (None, None, None, None, None) for _ in jurors
    ]
    session_id = query(url, f"SELECT session_id FROM juror WHERE id = {jurors[0][0]}")[0][0]
    with pytest.raises(Exception, match="(?i)check|constraint"):  # an open link holds at least one juror
        execute(
            url,
            "INSERT INTO jury_link (session_id, token, cap, attention_check, created_at) "
            "VALUES (:s, 'x', 0, false, CURRENT_TIMESTAMP)",
            s=session_id,
        )
    downgrade(url, "0015")
    assert query(url, "SELECT id, label FROM juror ORDER BY id") == jurors
    upgrade(url)
    assert_schema_matches_models(url)


# --- 0017: crowd platforms on an open displaced link ------------------------------------------------------------------


def test_crowd_platform_ids_and_the_way_back(empty_database_url) -> None:
    url = empty_database_url
    upgrade(url, "0001")
    insert_0001_data(url)
    upgrade(url, "0016")
    jurors = query(url, "SELECT id, label FROM juror ORDER BY id")
    session_id = query(url, f"SELECT session_id FROM juror WHERE id = {jurors[0][0]}")[0][0]
    execute(
        url,
        "INSERT INTO jury_link (session_id, token, cap, attention_check, created_at) "
        "VALUES (:s, 'open-before', 5, false, CURRENT_TIMESTAMP)",
        s=session_id,
    )
    upgrade(url)
    assert_schema_matches_models(url)
    # links made before read no participant id and send nobody anywhere; jurors before have no platform ids
    assert query(url, "SELECT participant_param, study_param, session_param, complete_url FROM jury_link") == [
        (None, None, None, None)
    ]
    assert query(
        url, "SELECT participant_id, platform_study_id, platform_session_id, browser_key FROM juror ORDER BY id"
    ) == [(None, None, None, None) for _ in jurors]
    link_id = query(url, "SELECT id FROM jury_link")[0][0]
    insert = (
        "INSERT INTO juror (id, session_id, label, token, jury, link_id, participant_id, joined_at) "
        "VALUES (:id, :s, :label, :token, 'displaced', :link, 'P1', CURRENT_TIMESTAMP)"
    )
    free = max(jid for jid, _ in jurors) + 1  # the 0001 data gives its ids: PostgreSQL's sequence has not moved
    execute(url, insert, id=free, s=session_id, label="D001", token="t-one", link=link_id)
    with pytest.raises(Exception, match="(?i)unique|constraint"):  # one juror per participant and link
        execute(url, insert, id=free + 1, s=session_id, label="D002", token="t-two", link=link_id)
    downgrade(url, "0016")
    assert query(url, "SELECT id, label FROM juror ORDER BY id")[: len(jurors)] == jurors
    upgrade(url)
    assert_schema_matches_models(url)
