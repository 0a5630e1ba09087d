"""AI jurors' round claims

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-28 15:10:00

- ``juror_claim``: a round an AI juror's run is asking now, one run per juror and round (two runs of one model on
  one session never ask a round twice); a claim past ``expires_at`` may be taken over.

A downgrade drops it.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "juror_claim",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.Integer(), nullable=False),
        sa.Column("juror_id", sa.Integer(), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("run", sa.String(length=32), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"], ["vtt_session.id"], name=op.f("fk_juror_claim_session_id_vtt_session"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["session_id", "juror_id"],
            ["juror.session_id", "juror.id"],
            name="fk_juror_claim_session_juror",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_juror_claim")),
        sa.UniqueConstraint("juror_id", "round", name=op.f("uq_juror_claim_juror_id_round")),
    )
    op.create_index(op.f("ix_juror_claim_session_id"), "juror_claim", ["session_id"], unique=False)


def downgrade() -> None:
    op.drop_table("juror_claim")
