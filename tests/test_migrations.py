"""Migrations build the schema from empty on SQLite and PostgreSQL, and match the models exactly."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from vtt.db import current_revision, downgrade, make_engine, upgrade
from vtt.models import Base

TABLES = {"question_bank", "question", "question_tag", "vtt_session", "session_round", "session_question",
          "player", "round_alias", "juror", "answer", "grade", "sheet_entry", "vote", "event", "alembic_version"}


def assert_schema_matches_models(url: str) -> None:
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            assert set(inspect(connection).get_table_names()) == TABLES
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            assert compare_metadata(context, Base.metadata) == []
    finally:
        engine.dispose()


def round_trip(url: str) -> None:
    assert current_revision(url) is None
    upgrade(url)
    assert current_revision(url) == "0001"
    assert_schema_matches_models(url)
    downgrade(url, "base")
    assert current_revision(url) is None
    engine = make_engine(url)
    with engine.connect() as connection:
        assert set(inspect(connection).get_table_names()) <= {"alembic_version"}
    engine.dispose()
    upgrade(url)
    assert current_revision(url) == "0001"


def test_sqlite_from_empty(tmp_path):
    round_trip(f"sqlite:///{tmp_path / 'fresh.db'}")


@pytest.mark.postgres
def test_postgresql_from_empty(postgres_url):
    round_trip(postgres_url)


def test_sqlite_connections_use_wal_foreign_keys_and_busy_timeout(database_url):
    engine = make_engine(database_url)
    with engine.connect() as connection:
        pragma = lambda name: connection.exec_driver_sql(f"PRAGMA {name}").scalar()  # noqa: E731
        assert pragma("journal_mode") == "wal"
        assert pragma("foreign_keys") == 1
        assert pragma("busy_timeout") == 10_000
    engine.dispose()
