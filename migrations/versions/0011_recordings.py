"""Spoken answers' recordings

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27 18:00:00

Adds ``recording``: one row per take of a spoken answer (session question, player, the file's name in the
recordings folder, its type, size and length, when it ended and arrived, the upload's action id, a transcription
backend's suggestion, and when the audio was deleted). Rows point at their own session's question and player
(composite keys, as ``answer`` does). The audio files are not in the database.

A downgrade drops the table (the files stay in the recordings folder). A new table needs no batch mode on SQLite.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "recording",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.Integer(), nullable=False),
        sa.Column("session_question_id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("file", sa.String(length=200), nullable=False),
        sa.Column("mime", sa.String(length=40), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("duration_ms", sa.Integer(), nullable=True),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("client_key", sa.String(length=64), nullable=False),
        sa.Column("transcript", sa.Text(), nullable=True),
        sa.Column("transcribed_by", sa.String(length=200), nullable=True),
        sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("size > 0", name=op.f("ck_recording_size_positive")),
        sa.ForeignKeyConstraint(
            ["session_id", "player_id"],
            ["player.session_id", "player.id"],
            name="fk_recording_session_player",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["session_id", "session_question_id"],
            ["session_question.session_id", "session_question.id"],
            name="fk_recording_session_session_question",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["session_id"], ["vtt_session.id"], name=op.f("fk_recording_session_id_vtt_session"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_recording")),
        sa.UniqueConstraint("file", name=op.f("uq_recording_file")),
        sa.UniqueConstraint("player_id", "client_key", name=op.f("uq_recording_player_id_client_key")),
    )
    op.create_index(op.f("ix_recording_session_id"), "recording", ["session_id"], unique=False)
    op.create_index(op.f("ix_recording_session_question_id"), "recording", ["session_question_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_recording_session_question_id"), table_name="recording")
    op.drop_index(op.f("ix_recording_session_id"), table_name="recording")
    op.drop_table("recording")
