"""Clips the host plays for everyone: when a question's screening starts

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25 10:00:00

Adds ``session_question.clip_started_at`` (timestamp, nullable): with ``clip_playback`` ``host`` (a design
option, kept in the session's design JSON: no column) the host's play or replay stamps the moment the clip
starts on the stage and every player's page; a page that connects later seeks to where the screening is.
NULL for a clip never played by the host (and for every question placed before this revision).

A downgrade drops the column: a session's screenings are forgotten (the event log keeps each ``play_clip``).
SQLite: batch mode recreates ``session_question``.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("session_question") as batch:
        batch.add_column(sa.Column("clip_started_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("session_question") as batch:
        batch.drop_column("clip_started_at")
