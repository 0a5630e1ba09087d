"""Background jobs

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-28 16:00:00

- ``job``: a piece of background work (an export, a report) every server process sees: its kind, session, state,
  progress, start and end, error and output, and the machine and process running it.

A downgrade drops it.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "job",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=40), nullable=False),
        sa.Column("session_id", sa.Integer(), nullable=True),
        sa.Column("args", sa.JSON(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("progress", sa.String(length=200), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("output", sa.JSON(), nullable=True),
        sa.Column("host", sa.String(length=255), nullable=True),
        sa.Column("pid", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["session_id"], ["vtt_session.id"], name=op.f("fk_job_session_id_vtt_session"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_job")),
    )
    op.create_index("ix_job_state_id", "job", ["state", "id"], unique=False)
    op.create_index(op.f("ix_job_session_id"), "job", ["session_id"], unique=False)


def downgrade() -> None:
    op.drop_table("job")
