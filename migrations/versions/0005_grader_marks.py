"""several graders: each grader's own marks of an answer, apart from its final mark

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 15:00:00

Adds ``grader_mark``: one row per (answer, grader), correct/incorrect and the optional 0-5 MovieCORE
rubric.  ``grade`` stays one row per answer and is the final mark the reports read (set by a grader
when the graders disagree, or from their agreement).

A downgrade drops ``grader_mark`` and with it the graders' own marks; the final marks in ``grade``
are kept.  A new table needs no batch mode on SQLite.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RUBRIC_DIMENSIONS = ("accuracy", "comprehensiveness", "depth", "evidence", "coherence")  # as in vtt.models, frozen


def upgrade() -> None:
    op.create_table(
        "grader_mark",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("answer_id", sa.Integer(), nullable=False),
        sa.Column("grader", sa.String(length=120), nullable=False),
        sa.Column("correct", sa.Boolean(), nullable=False),
        sa.Column("graded_at", sa.DateTime(timezone=True), nullable=False),
        *(sa.Column(dimension, sa.Integer(), nullable=True) for dimension in RUBRIC_DIMENSIONS),
        sa.CheckConstraint("grader <> ''", name=op.f("ck_grader_mark_grader_named")),
        *(
            sa.CheckConstraint(f"{d} IS NULL OR ({d} >= 0 AND {d} <= 5)", name=op.f(f"ck_grader_mark_{d}_0_to_5"))
            for d in RUBRIC_DIMENSIONS
        ),
        sa.ForeignKeyConstraint(
            ["answer_id"], ["answer.id"], name=op.f("fk_grader_mark_answer_id_answer"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_grader_mark")),
        sa.UniqueConstraint("answer_id", "grader", name=op.f("uq_grader_mark_answer_id_grader")),
    )


def downgrade() -> None:
    op.drop_table("grader_mark")
