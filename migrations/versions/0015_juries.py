"""Juries

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-03 09:00:00

Adds ``juror.jury`` (``live``, ``displaced`` or ``ai``; a VARCHAR with a CHECK): which jury a juror judges with.
Votes and sheet lines reach their jury through their juror. Every existing juror judged in the room: ``live``.

A downgrade drops the column.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("juror") as batch:
        batch.add_column(
            sa.Column(
                "jury",
                sa.Enum("live", "displaced", "ai", name="jury", native_enum=False, create_constraint=True, length=24),
                nullable=False,
                server_default="live",
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("juror") as batch:
        batch.drop_constraint(op.f("ck_juror_jury"), type_="check")  # SQLite's copy of the table would keep it
        batch.drop_column("jury")
