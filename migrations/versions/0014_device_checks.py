"""Device checks

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-02 09:00:00

Adds ``player.device_check`` and ``juror.device_check`` (JSON, nullable): the latest device check of the person's
page (the test clip heard or not, a spoken player's microphone, the clock's offset, the transport, a round trip),
for the host's Readiness panel. Existing rows get null: not checked.

A downgrade drops the columns.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("player", "juror")


def upgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("device_check", sa.JSON(), nullable=True))


def downgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table) as batch:
            batch.drop_column("device_check")
