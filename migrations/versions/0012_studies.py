"""Studies: sessions read together

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27 23:00:00

Adds ``study`` (a name, unique; a description; when it was made) and ``study_session`` (which sessions a study
holds, and since when; a session may be in several studies). Sessions are unchanged: each keeps its own frozen
design and hash. Deleting a study or a session removes the membership only.

A downgrade drops both tables (the sessions stay). New tables need no batch mode on SQLite.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "study",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=120), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_study")),
        sa.UniqueConstraint("name", name=op.f("uq_study_name")),
    )
    op.create_table(
        "study_session",
        sa.Column("study_id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.Integer(), nullable=False),
        sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["study_id"], ["study.id"], name=op.f("fk_study_session_study_id_study"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["vtt_session.id"],
            name=op.f("fk_study_session_session_id_vtt_session"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("study_id", "session_id", name=op.f("pk_study_session")),
    )


def downgrade() -> None:
    op.drop_table("study_session")
    op.drop_table("study")
