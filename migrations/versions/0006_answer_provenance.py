"""AI players: where each answer came from (provenance) and whether the host entered it

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24 10:00:00

Adds to ``answer``:

- ``provenance`` (JSON, nullable): which backend, model and settings produced an AI player's answer
  (``{"backend", "model", "settings"}``), as the agent sent it or as the host entered it; NULL for
  answers without one (humans, and every answer saved before this revision);
- ``entered_by_host`` (boolean, required): the host typed or imported the answer for an AI player whose
  agent failed; existing rows get false.

An agent's last status report lives in ``player.details["agent"]`` (an existing JSON column): no schema change.

A downgrade drops both columns and with them the provenance of every answer (the event log keeps what each
``answer`` and ``enter_answer`` action carried).  SQLite: batch mode recreates ``answer``.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("answer") as batch:
        batch.add_column(sa.Column("provenance", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("entered_by_host", sa.Boolean(), nullable=False, server_default=sa.false()))
    with op.batch_alter_table("answer") as batch:
        batch.alter_column("entered_by_host", existing_type=sa.Boolean(), server_default=None)


def downgrade() -> None:
    with op.batch_alter_table("answer") as batch:
        batch.drop_column("entered_by_host")
        batch.drop_column("provenance")
