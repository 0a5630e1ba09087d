"""Open join rules and removed jurors

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25 12:00:00

Adds ``vtt_session.open_join_cap`` (integer, nullable: no cap), how many jurors may join openly (with the join code
and a nickname); ``vtt_session.join_door`` (boolean, default false), whether an open join needs the door code the
stage screen shows (it changes every two minutes: a remote script cannot read it); and ``juror.removed_at``
(timestamp, nullable), when the host removed a juror (their votes left the tally; the event log keeps them).

A downgrade drops the three columns: caps and door codes are forgotten, removed jurors count again (their
deleted votes stay deleted; the ``remove_juror`` events hold them).  SQLite: batch mode recreates both tables.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("vtt_session") as batch:
        batch.add_column(sa.Column("open_join_cap", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("join_door", sa.Boolean(), nullable=False, server_default=sa.false()))
    with op.batch_alter_table("juror") as batch:
        batch.add_column(sa.Column("removed_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("juror") as batch:
        batch.drop_column("removed_at")
    with op.batch_alter_table("vtt_session") as batch:
        batch.drop_column("join_door")
        batch.drop_column("open_join_cap")
