"""Spoken takes' reservations

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-28 15:50:00

- ``take_reservation``: a spoken take's upload while its bytes arrive, holding its place under the caps on takes and
  bytes per player and per session (``vtt.recordings.caps``); deleted when the upload ends.

A downgrade drops it.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "take_reservation",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("client_key", sa.String(length=64), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("reserved_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["vtt_session.id"],
            name=op.f("fk_take_reservation_session_id_vtt_session"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["session_id", "player_id"],
            ["player.session_id", "player.id"],
            name="fk_take_reservation_session_player",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_take_reservation")),
    )
    op.create_index(op.f("ix_take_reservation_session_id"), "take_reservation", ["session_id"], unique=False)


def downgrade() -> None:
    op.drop_table("take_reservation")
