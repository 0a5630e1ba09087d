"""A transcript suggestion's confidence

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27 09:00:00

Adds ``recording.transcript_confidence`` (a float, nullable): how sure the transcription backend was of its
suggestion, 0 to 1; null when it gave no figure or no suggestion was asked for. Existing rows get null.

A downgrade drops the column.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("recording") as batch:
        batch.add_column(sa.Column("transcript_confidence", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("recording") as batch:
        batch.drop_column("transcript_confidence")
