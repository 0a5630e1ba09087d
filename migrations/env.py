"""Alembic environment: the URL comes from the caller (``vtt db``) or from DATABASE_URL."""

from logging.config import fileConfig

from alembic import context

from vtt.config import Settings
from vtt.db import make_engine
from vtt.jobs.model import Job  # noqa: F401 - its table is in Base.metadata once imported
from vtt.models import Base

config = context.config
if config.config_file_name and config.attributes.get("configure_logging", True):
    fileConfig(config.config_file_name, disable_existing_loggers=False)

target_metadata = Base.metadata


def database_url() -> str:
    return config.attributes.get("database_url") or Settings.from_env().database_url


def run_migrations_offline() -> None:
    context.configure(
        url=database_url(),
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=True,
        dialect_opts={"paramstyle": "named"},
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = make_engine(database_url())
    with engine.connect() as connection:
        _run(connection)
    engine.dispose()


def _run(connection) -> None:
    # Batch mode lets ALTER-style migrations work on SQLite by copying the table: create a new table, copy the
    # rows, DROP the old one, rename.  With foreign keys on, that DROP deletes the old rows first and cascades
    # into every child table (ON DELETE CASCADE), so they are off while migrations run; a migration that copies
    # tables checks them itself (PRAGMA foreign_key_check) before it commits.  The PRAGMA is a no-op inside a
    # transaction: a caller's connection already in one is left alone (such a migration then refuses to run).
    foreign_keys = False
    if connection.dialect.name == "sqlite" and not connection.in_transaction():
        foreign_keys = bool(connection.exec_driver_sql("PRAGMA foreign_keys").scalar())
        if foreign_keys:
            connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
        connection.commit()  # end the autobegun transaction: Alembic then runs each migration in its own
    try:
        # compare_type needs no custom callable for UTCDateTime: Alembic compares the DDL a type compiles to,
        # and a TypeDecorator compiles as its impl, DateTime(timezone=True) (TIMESTAMP WITH TIME ZONE, DATETIME on
        # SQLite).  So the migrated schema compares clean, and a real difference (a TIMESTAMP WITHOUT TIME ZONE
        # column on PostgreSQL) is still reported.
        context.configure(
            connection=connection, target_metadata=target_metadata, render_as_batch=True, compare_type=True
        )
        with context.begin_transaction():
            context.run_migrations()
    finally:
        if foreign_keys:
            connection.exec_driver_sql("PRAGMA foreign_keys=ON")
            connection.commit()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
