"""live session: phase and deadline, design, open join, reveals, session-bound answers and sheets, round keys,
required client keys, replay keys in the event log

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23 09:05:51.183945

What existing rows get:

- ``vtt_session``: ``open_join`` false, ``design`` and ``audience_versions`` ``{}``, ``design_hash`` ``''``,
  ``phase`` derived from ``status`` (draft -> draft, lobby -> lobby, running -> round, finished -> finished),
  no ``phase_deadline_at``.
- ``answer.session_id`` is its session question's session; ``sheet_entry.session_id`` is its juror's session.
- A NULL ``client_key`` of an answer, sheet entry or vote becomes ``'legacy-<row id>'`` (the column is now
  required and unique per player / juror); a downgrade turns exactly these values back into NULL.
- ``answer.redacted`` false, no ``edited_at``; ``session_round.participants`` / ``tally`` and
  ``juror.juror_group`` NULL; ``event.client_key`` NULL.

Rows that the new constraints would refuse are neither deleted nor silently repaired: the upgrade stops
before changing anything and names every such row (an Alembic ``CommandError``). They are

- session questions, round aliases and votes in a round the session has no ``session_round`` row for
  (the new ``(session_id, round) -> session_round(session_id, number)`` keys);
- answers whose player and session question belong to different sessions, and sheet entries whose juror,
  session question and player do not all belong to one session (the new ``(session_id, X_id)`` keys);
- two answers of one player, or two sheet entries / votes of one juror, with the same client key.

Fix or delete those rows by hand (only the research team knows which is right) and run the upgrade again.

SQLite: batch mode recreates the altered tables.  ``migrations/env.py`` turns foreign keys off for the run
(otherwise dropping the old copy of a parent table would cascade into its children) and this migration
runs in one real transaction and ends with ``PRAGMA foreign_key_check``, so it applies whole or not at all.
Recreating ``event`` drops its append-only triggers; they are created again right after.

A downgrade drops what 0001 cannot hold: ``identity_reveal`` rows, the phase and design of sessions,
redaction flags and edit times of answers, per-round participants and tallies, juror groups, and the
client keys of events.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from alembic.util import CommandError

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# The append-only triggers of 0001 (same names and message, so 0001's downgrade still drops them).
APPEND_ONLY_MESSAGE = "the event log is append-only"
SQLITE_TRIGGERS = [
    f"CREATE TRIGGER event_append_only_{action.lower()} BEFORE {action} ON event "
    f"BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY_MESSAGE}'); END"
    for action in ("UPDATE", "DELETE")
]

PHASES = (
    "draft",
    "lobby",
    "round",
    "clip",
    "answering",
    "answers_closed",
    "judging",
    "voting",
    "vote_closed",
    "tally",
    "identities",
    "finished",
)
STATUS_TO_PHASE = {"draft": "draft", "lobby": "lobby", "running": "round", "finished": "finished"}

LISTED = 20  # offending rows named per kind of problem


def _legacy_key(table: str) -> str:
    """SQL for the key a row without one gets: ``'legacy-<id>'`` (portable: SQLite and PostgreSQL)."""
    return f"'legacy-' || CAST({table}.id AS VARCHAR(20))"


def _is_sqlite() -> bool:
    return op.get_bind().dialect.name == "sqlite"


def _sqlite_transaction() -> None:
    """On SQLite: refuse to run with foreign keys on, and make the rest of this migration one real transaction.

    Batch mode copies tables and drops the originals; with foreign keys on, dropping a parent table would
    cascade into its children (``migrations/env.py`` turns them off before any transaction begins).
    Python's sqlite3 module only opens a transaction before INSERT/UPDATE/DELETE, so the DDL before the first
    of them would be committed on its own and a failure half-way would leave a half-migrated database.
    SQLite's DDL is transactional: an explicit BEGIN makes everything roll back together.
    """
    if not _is_sqlite():
        return
    bind = op.get_bind()
    if bind.exec_driver_sql("PRAGMA foreign_keys").scalar():
        raise CommandError(
            "SQLite foreign keys must be off while batch migrations copy tables "
            "(migrations/env.py turns them off; run migrations outside a transaction)"
        )
    if not bind.connection.dbapi_connection.in_transaction:
        bind.exec_driver_sql("BEGIN")


def _sqlite_foreign_key_check() -> None:
    """Foreign keys are off while SQLite tables are copied; check every one before committing."""
    if not _is_sqlite():
        return
    broken = op.get_bind().exec_driver_sql("PRAGMA foreign_key_check").all()
    if broken:
        rows = "; ".join(f"{table} rowid {rowid} -> {parent}" for table, rowid, parent, _ in broken[:LISTED])
        raise CommandError(f"the migrated database breaks {len(broken)} foreign key(s): {rows}")


def _drop_sqlite_triggers() -> None:
    if _is_sqlite():
        for action in ("update", "delete"):
            op.execute(f"DROP TRIGGER IF EXISTS event_append_only_{action}")


def _create_sqlite_triggers() -> None:
    if _is_sqlite():
        for statement in SQLITE_TRIGGERS:
            op.execute(statement)


# --- rows the new constraints would refuse ----------------------------------------------------


def _problems() -> list[str]:
    bind = op.get_bind()
    problems: list[str] = []

    def report(what: str, query: str, describe) -> None:
        rows = bind.execute(sa.text(query)).all()
        if not rows:
            return
        problems.append(f"{len(rows)} {what}:")
        problems.extend(f"  - {describe(row)}" for row in rows[:LISTED])
        if len(rows) > LISTED:
            problems.append(f"  - ... and {len(rows) - LISTED} more")

    for table in ("session_question", "round_alias", "vote"):
        report(
            f"{table} row(s) in a round their session has no session_round row for",
            f"SELECT t.id, t.session_id, t.round FROM {table} t WHERE NOT EXISTS "
            f"(SELECT 1 FROM session_round r WHERE r.session_id = t.session_id AND r.number = t.round) "
            f"ORDER BY t.id",
            lambda row, table=table: f"{table} id={row[0]} (session {row[1]}, round {row[2]})",
        )

    report(
        "answer(s) whose player and session question are not in one session",
        "SELECT a.id, sq.session_id, p.session_id FROM answer a "
        "LEFT JOIN session_question sq ON sq.id = a.session_question_id "
        "LEFT JOIN player p ON p.id = a.player_id "
        "WHERE sq.session_id IS NULL OR p.session_id IS NULL OR sq.session_id <> p.session_id ORDER BY a.id",
        lambda row: f"answer id={row[0]} (session question of session {row[1]}, player of session {row[2]})",
    )

    report(
        "sheet entr(y/ies) whose juror, session question and player are not in one session",
        "SELECT s.id, j.session_id, sq.session_id, p.session_id FROM sheet_entry s "
        "LEFT JOIN juror j ON j.id = s.juror_id "
        "LEFT JOIN session_question sq ON sq.id = s.session_question_id "
        "LEFT JOIN player p ON p.id = s.player_id "
        "WHERE j.session_id IS NULL OR sq.session_id IS NULL OR p.session_id IS NULL "
        "OR sq.session_id <> j.session_id OR p.session_id <> j.session_id ORDER BY s.id",
        lambda row: (
            f"sheet_entry id={row[0]} (juror of session {row[1]}, session question of session "
            f"{row[2]}, player of session {row[3]})"
        ),
    )

    for table, owner in (("answer", "player_id"), ("sheet_entry", "juror_id"), ("vote", "juror_id")):
        key_a, key_b = (f"COALESCE({alias}.client_key, {_legacy_key(alias)})" for alias in ("a", "b"))
        report(
            f"{table} row(s) sharing a client key with another row of the same {owner[:-3]}",
            f"SELECT a.id, a.{owner}, {key_a} FROM {table} a WHERE EXISTS "
            f"(SELECT 1 FROM {table} b WHERE b.{owner} = a.{owner} AND b.id <> a.id AND {key_b} = {key_a}) "
            f"ORDER BY a.id",
            lambda row, table=table, owner=owner: f"{table} id={row[0]} ({owner} {row[1]}, client_key {row[2]!r})",
        )
    return problems


def _refuse_rows_the_new_constraints_would_break() -> None:
    problems = _problems()
    if problems:
        raise CommandError(
            "cannot upgrade to 0002: these rows break the constraints it adds (nothing was changed; fix or "
            "delete them and upgrade again):\n" + "\n".join(problems)
        )


# --- upgrade ----------------------------------------------------------------------------------


def upgrade() -> None:
    _sqlite_transaction()
    _refuse_rows_the_new_constraints_would_break()

    # vtt_session: existing rows get defaults through temporary server defaults, removed again below.
    phase_type = sa.Enum(*PHASES, name="phase", native_enum=False, create_constraint=True, length=24)
    with op.batch_alter_table("vtt_session", schema=None) as batch_op:
        batch_op.add_column(sa.Column("open_join", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch_op.add_column(sa.Column("design", sa.JSON(), nullable=False, server_default=sa.text("'{}'")))
        batch_op.add_column(sa.Column("design_hash", sa.String(length=64), nullable=False, server_default=""))
        batch_op.add_column(sa.Column("phase", phase_type, nullable=False, server_default="draft"))
        batch_op.add_column(sa.Column("phase_deadline_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("audience_versions", sa.JSON(), nullable=False, server_default=sa.text("'{}'")))
    cases = " ".join(f"WHEN '{status}' THEN '{phase}'" for status, phase in STATUS_TO_PHASE.items())
    op.execute(f"UPDATE vtt_session SET phase = CASE status {cases} ELSE 'draft' END")
    with op.batch_alter_table("vtt_session", schema=None) as batch_op:
        for column in ("open_join", "design", "design_hash", "phase", "audience_versions"):
            batch_op.alter_column(column, server_default=None)

    with op.batch_alter_table("session_round", schema=None) as batch_op:
        batch_op.add_column(sa.Column("participants", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("tally", sa.JSON(), nullable=True))

    # Before the keys that point at them: (session_id, id) of session_question, (session_id, number) of rounds.
    with op.batch_alter_table("session_question", schema=None) as batch_op:
        batch_op.create_unique_constraint(batch_op.f("uq_session_question_session_id_id"), ["session_id", "id"])
        batch_op.create_foreign_key(
            "fk_session_question_session_round",
            "session_round",
            ["session_id", "round"],
            ["session_id", "number"],
            ondelete="CASCADE",
        )

    with op.batch_alter_table("round_alias", schema=None) as batch_op:
        batch_op.create_foreign_key(
            "fk_round_alias_session_round",
            "session_round",
            ["session_id", "round"],
            ["session_id", "number"],
            ondelete="CASCADE",
        )

    with op.batch_alter_table("juror", schema=None) as batch_op:
        batch_op.add_column(sa.Column("juror_group", sa.String(length=40), nullable=True))

    # answer: bound to its session; required, per-player unique client key.
    with op.batch_alter_table("answer", schema=None) as batch_op:
        batch_op.add_column(sa.Column("session_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("redacted", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch_op.add_column(sa.Column("edited_at", sa.DateTime(timezone=True), nullable=True))
    op.execute(
        "UPDATE answer SET session_id = (SELECT sq.session_id FROM session_question sq "
        "WHERE sq.id = answer.session_question_id)"
    )
    op.execute(f"UPDATE answer SET client_key = {_legacy_key('answer')} WHERE client_key IS NULL")
    with op.batch_alter_table("answer", schema=None) as batch_op:
        batch_op.alter_column("session_id", existing_type=sa.Integer(), nullable=False)
        batch_op.alter_column("redacted", existing_type=sa.Boolean(), server_default=None)
        batch_op.alter_column("client_key", existing_type=sa.String(length=64), nullable=False)
        batch_op.drop_constraint(batch_op.f("fk_answer_player_id_player"), type_="foreignkey")
        batch_op.drop_constraint(batch_op.f("fk_answer_session_question_id_session_question"), type_="foreignkey")
        batch_op.create_foreign_key(
            batch_op.f("fk_answer_session_id_vtt_session"), "vtt_session", ["session_id"], ["id"], ondelete="CASCADE"
        )
        batch_op.create_foreign_key(
            "fk_answer_session_session_question",
            "session_question",
            ["session_id", "session_question_id"],
            ["session_id", "id"],
            ondelete="CASCADE",
        )
        batch_op.create_foreign_key(
            "fk_answer_session_player", "player", ["session_id", "player_id"], ["session_id", "id"], ondelete="CASCADE"
        )
        batch_op.create_unique_constraint(batch_op.f("uq_answer_player_id_client_key"), ["player_id", "client_key"])
        batch_op.create_index(batch_op.f("ix_answer_session_id"), ["session_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_answer_session_question_id"), ["session_question_id"], unique=False)

    # sheet_entry: the same, its session being its juror's.
    with op.batch_alter_table("sheet_entry", schema=None) as batch_op:
        batch_op.add_column(sa.Column("session_id", sa.Integer(), nullable=True))
    op.execute(
        "UPDATE sheet_entry SET session_id = (SELECT j.session_id FROM juror j WHERE j.id = sheet_entry.juror_id)"
    )
    op.execute(f"UPDATE sheet_entry SET client_key = {_legacy_key('sheet_entry')} WHERE client_key IS NULL")
    with op.batch_alter_table("sheet_entry", schema=None) as batch_op:
        batch_op.alter_column("session_id", existing_type=sa.Integer(), nullable=False)
        batch_op.alter_column("client_key", existing_type=sa.String(length=64), nullable=False)
        batch_op.drop_constraint(batch_op.f("fk_sheet_entry_juror_id_juror"), type_="foreignkey")
        batch_op.drop_constraint(batch_op.f("fk_sheet_entry_player_id_player"), type_="foreignkey")
        batch_op.drop_constraint(batch_op.f("fk_sheet_entry_session_question_id_session_question"), type_="foreignkey")
        batch_op.create_foreign_key(
            batch_op.f("fk_sheet_entry_session_id_vtt_session"),
            "vtt_session",
            ["session_id"],
            ["id"],
            ondelete="CASCADE",
        )
        batch_op.create_foreign_key(
            "fk_sheet_entry_session_juror",
            "juror",
            ["session_id", "juror_id"],
            ["session_id", "id"],
            ondelete="CASCADE",
        )
        batch_op.create_foreign_key(
            "fk_sheet_entry_session_session_question",
            "session_question",
            ["session_id", "session_question_id"],
            ["session_id", "id"],
            ondelete="CASCADE",
        )
        batch_op.create_foreign_key(
            "fk_sheet_entry_session_player",
            "player",
            ["session_id", "player_id"],
            ["session_id", "id"],
            ondelete="CASCADE",
        )
        batch_op.create_unique_constraint(batch_op.f("uq_sheet_entry_juror_id_client_key"), ["juror_id", "client_key"])
        batch_op.create_index(batch_op.f("ix_sheet_entry_session_id"), ["session_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_sheet_entry_juror_id"), ["juror_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_sheet_entry_player_id"), ["player_id"], unique=False)

    op.execute(f"UPDATE vote SET client_key = {_legacy_key('vote')} WHERE client_key IS NULL")
    with op.batch_alter_table("vote", schema=None) as batch_op:
        batch_op.alter_column("client_key", existing_type=sa.String(length=64), nullable=False)
        batch_op.create_unique_constraint(batch_op.f("uq_vote_juror_id_client_key"), ["juror_id", "client_key"])
        batch_op.create_foreign_key(
            "fk_vote_session_round",
            "session_round",
            ["session_id", "round"],
            ["session_id", "number"],
            ondelete="CASCADE",
        )

    op.create_table(
        "identity_reveal",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.Integer(), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("revealed_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id", "player_id"],
            ["player.session_id", "player.id"],
            name="fk_identity_reveal_session_player",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["session_id", "round"],
            ["session_round.session_id", "session_round.number"],
            name="fk_identity_reveal_session_round",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["vtt_session.id"],
            name=op.f("fk_identity_reveal_session_id_vtt_session"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_identity_reveal")),
        sa.UniqueConstraint(
            "session_id", "round", "player_id", name=op.f("uq_identity_reveal_session_id_round_player_id")
        ),
    )
    with op.batch_alter_table("identity_reveal", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_identity_reveal_player_id"), ["player_id"], unique=False)

    # event: SQLite recreates the table, which drops its triggers (and UPDATE/DELETE must stay refused).
    _drop_sqlite_triggers()
    with op.batch_alter_table("event", schema=None) as batch_op:
        batch_op.add_column(sa.Column("client_key", sa.String(length=64), nullable=True))
        batch_op.create_unique_constraint(
            batch_op.f("uq_event_session_id_actor_client_key"), ["session_id", "actor", "client_key"]
        )
    _create_sqlite_triggers()

    _sqlite_foreign_key_check()


# --- downgrade --------------------------------------------------------------------------------


def downgrade() -> None:
    _sqlite_transaction()

    _drop_sqlite_triggers()
    with op.batch_alter_table("event", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("uq_event_session_id_actor_client_key"), type_="unique")
        batch_op.drop_column("client_key")
    _create_sqlite_triggers()

    with op.batch_alter_table("identity_reveal", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_identity_reveal_player_id"))
    op.drop_table("identity_reveal")

    with op.batch_alter_table("vote", schema=None) as batch_op:
        batch_op.drop_constraint("fk_vote_session_round", type_="foreignkey")
        batch_op.drop_constraint(batch_op.f("uq_vote_juror_id_client_key"), type_="unique")
        batch_op.alter_column("client_key", existing_type=sa.String(length=64), nullable=True)
    op.execute(f"UPDATE vote SET client_key = NULL WHERE client_key = {_legacy_key('vote')}")

    with op.batch_alter_table("sheet_entry", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sheet_entry_player_id"))
        batch_op.drop_index(batch_op.f("ix_sheet_entry_juror_id"))
        batch_op.drop_index(batch_op.f("ix_sheet_entry_session_id"))
        batch_op.drop_constraint(batch_op.f("uq_sheet_entry_juror_id_client_key"), type_="unique")
        batch_op.drop_constraint("fk_sheet_entry_session_player", type_="foreignkey")
        batch_op.drop_constraint("fk_sheet_entry_session_session_question", type_="foreignkey")
        batch_op.drop_constraint("fk_sheet_entry_session_juror", type_="foreignkey")
        batch_op.drop_constraint(batch_op.f("fk_sheet_entry_session_id_vtt_session"), type_="foreignkey")
        batch_op.create_foreign_key(
            batch_op.f("fk_sheet_entry_juror_id_juror"), "juror", ["juror_id"], ["id"], ondelete="CASCADE"
        )
        batch_op.create_foreign_key(
            batch_op.f("fk_sheet_entry_session_question_id_session_question"),
            "session_question",
            ["session_question_id"],
            ["id"],
            ondelete="CASCADE",
        )
        batch_op.create_foreign_key(
            batch_op.f("fk_sheet_entry_player_id_player"), "player", ["player_id"], ["id"], ondelete="CASCADE"
        )
        batch_op.alter_column("client_key", existing_type=sa.String(length=64), nullable=True)
        batch_op.drop_column("session_id")
    op.execute(f"UPDATE sheet_entry SET client_key = NULL WHERE client_key = {_legacy_key('sheet_entry')}")

    with op.batch_alter_table("answer", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_answer_session_question_id"))
        batch_op.drop_index(batch_op.f("ix_answer_session_id"))
        batch_op.drop_constraint(batch_op.f("uq_answer_player_id_client_key"), type_="unique")
        batch_op.drop_constraint("fk_answer_session_player", type_="foreignkey")
        batch_op.drop_constraint("fk_answer_session_session_question", type_="foreignkey")
        batch_op.drop_constraint(batch_op.f("fk_answer_session_id_vtt_session"), type_="foreignkey")
        batch_op.create_foreign_key(
            batch_op.f("fk_answer_session_question_id_session_question"),
            "session_question",
            ["session_question_id"],
            ["id"],
            ondelete="CASCADE",
        )
        batch_op.create_foreign_key(
            batch_op.f("fk_answer_player_id_player"), "player", ["player_id"], ["id"], ondelete="CASCADE"
        )
        batch_op.alter_column("client_key", existing_type=sa.String(length=64), nullable=True)
        batch_op.drop_column("edited_at")
        batch_op.drop_column("redacted")
        batch_op.drop_column("session_id")
    op.execute(f"UPDATE answer SET client_key = NULL WHERE client_key = {_legacy_key('answer')}")

    with op.batch_alter_table("juror", schema=None) as batch_op:
        batch_op.drop_column("juror_group")

    with op.batch_alter_table("round_alias", schema=None) as batch_op:
        batch_op.drop_constraint("fk_round_alias_session_round", type_="foreignkey")

    with op.batch_alter_table("session_question", schema=None) as batch_op:
        batch_op.drop_constraint("fk_session_question_session_round", type_="foreignkey")
        batch_op.drop_constraint(batch_op.f("uq_session_question_session_id_id"), type_="unique")

    with op.batch_alter_table("session_round", schema=None) as batch_op:
        batch_op.drop_column("tally")
        batch_op.drop_column("participants")

    with op.batch_alter_table("vtt_session", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("ck_vtt_session_phase"), type_="check")
        batch_op.drop_column("audience_versions")
        batch_op.drop_column("phase_deadline_at")
        batch_op.drop_column("phase")
        batch_op.drop_column("design_hash")
        batch_op.drop_column("design")
        batch_op.drop_column("open_join")

    _sqlite_foreign_key_check()
