"""a judge's suggested grades, apart from the graders' marks

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26 19:00:00

Adds ``judge_suggestion``: one row per (answer, dimension, model, prompt hash), the score a chat-completions judge
suggested (``verdict`` 0/1 or a 0-5 MovieCORE dimension; NULL when its reply held none), with the endpoint, the
temperature, the time and the raw reply. Suggestions never change ``grade`` or ``grader_mark``: a grader takes one
by saving it as their own mark.

A downgrade drops ``judge_suggestion`` and the suggestions with it; marks are untouched. A new table needs no
batch mode on SQLite.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "judge_suggestion",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("answer_id", sa.Integer(), nullable=False),
        sa.Column("dimension", sa.String(length=40), nullable=False),
        sa.Column("score", sa.Integer(), nullable=True),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("endpoint", sa.String(length=500), nullable=False),
        sa.Column("prompt_sha256", sa.String(length=64), nullable=False),
        sa.Column("temperature", sa.Float(), nullable=True),
        sa.Column("asked_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("reply", sa.Text(), nullable=False),
        sa.CheckConstraint(
            "score IS NULL OR (score >= 0 AND score <= 5)", name=op.f("ck_judge_suggestion_score_0_to_5")
        ),
        sa.ForeignKeyConstraint(
            ["answer_id"], ["answer.id"], name=op.f("fk_judge_suggestion_answer_id_answer"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_judge_suggestion")),
        sa.UniqueConstraint(
            "answer_id",
            "dimension",
            "model",
            "prompt_sha256",
            name=op.f("uq_judge_suggestion_answer_id_dimension_model_prompt_sha256"),
        ),
    )


def downgrade() -> None:
    op.drop_table("judge_suggestion")
