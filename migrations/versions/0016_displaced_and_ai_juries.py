"""Displaced and AI juries

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-04 09:00:00

A finished session judged again, by people online (a displaced jury) and by models (AI jurors):

- ``juror``: ``rounds`` (a displaced juror's rounds to judge), ``model`` (an AI juror's), ``completion_code``
  (shown to a displaced juror once every round is voted), ``attention_passed`` (the instructed-response line),
  ``link_id`` (the open link the juror arrived by).
- ``jury_link``: an open displaced link with its cap.
- ``juror_reply``: an AI juror's replies, read or unread, with their provenance.

A downgrade drops them.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "jury_link",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.Integer(), nullable=False),
        sa.Column("token", sa.String(length=64), nullable=False),
        sa.Column("cap", sa.Integer(), nullable=True),
        sa.Column("rounds", sa.JSON(), nullable=True),
        sa.Column("attention_check", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("cap IS NULL OR cap >= 1", name=op.f("ck_jury_link_cap_positive")),
        sa.ForeignKeyConstraint(
            ["session_id"], ["vtt_session.id"], name=op.f("fk_jury_link_session_id_vtt_session"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_jury_link")),
        sa.UniqueConstraint("token", name=op.f("uq_jury_link_token")),
    )
    op.create_index(op.f("ix_jury_link_session_id"), "jury_link", ["session_id"], unique=False)
    with op.batch_alter_table("juror") as batch:
        batch.add_column(sa.Column("rounds", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("model", sa.String(length=200), nullable=True))
        batch.add_column(sa.Column("completion_code", sa.String(length=24), nullable=True))
        batch.add_column(sa.Column("attention_passed", sa.Boolean(), nullable=True))
        batch.add_column(sa.Column("link_id", sa.Integer(), nullable=True))
        batch.create_foreign_key(
            op.f("fk_juror_link_id_jury_link"), "jury_link", ["link_id"], ["id"], ondelete="SET NULL"
        )
    op.create_table(
        "juror_reply",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.Integer(), nullable=False),
        sa.Column("juror_id", sa.Integer(), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("endpoint", sa.String(length=500), nullable=False),
        sa.Column("prompt_sha256", sa.String(length=64), nullable=False),
        sa.Column("temperature", sa.Float(), nullable=True),
        sa.Column("frames", sa.Integer(), nullable=False),
        sa.Column("reply", sa.Text(), nullable=False),
        sa.Column("read", sa.Boolean(), nullable=False),
        sa.Column("asked_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"], ["vtt_session.id"], name=op.f("fk_juror_reply_session_id_vtt_session"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["session_id", "juror_id"],
            ["juror.session_id", "juror.id"],
            name="fk_juror_reply_session_juror",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_juror_reply")),
    )
    op.create_index(op.f("ix_juror_reply_session_id"), "juror_reply", ["session_id"], unique=False)
    op.create_index(op.f("ix_juror_reply_juror_id"), "juror_reply", ["juror_id"], unique=False)


def downgrade() -> None:
    op.drop_table("juror_reply")
    with op.batch_alter_table("juror") as batch:
        batch.drop_constraint(op.f("fk_juror_link_id_jury_link"), type_="foreignkey")
        for column in ("link_id", "attention_passed", "completion_code", "model", "rounds"):
            batch.drop_column(column)
    op.drop_table("jury_link")
