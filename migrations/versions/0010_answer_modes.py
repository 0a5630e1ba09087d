"""Players' answer modes

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27 12:00:00

Adds ``player.answer_modes`` (JSON list, not null, default ``["text"]``): how a player takes part, any of
``text`` (types or picks an option), ``spoken`` (says the answer) and ``read_aloud`` (the page reads the question
and each option aloud). Existing players get ``["text"]``, what every player had before. The server default stays
(the model declares it too), so rows written without the column, by older code or plain SQL, get it as well.

A downgrade drops the column: every player is a text player again. SQLite: batch mode recreates the table.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("player") as batch:
        batch.add_column(sa.Column("answer_modes", sa.JSON(), nullable=False, server_default=sa.text("'[\"text\"]'")))


def downgrade() -> None:
    with op.batch_alter_table("player") as batch:
        batch.drop_column("answer_modes")
