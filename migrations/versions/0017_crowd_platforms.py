"""Crowd platforms on an open displaced link

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-05 09:00:00

An open link made a juror at every press of Start: one person pressing it twice had two jurors. Now:

- ``jury_link``: ``participant_param``, ``study_param``, ``session_param`` (the query parameters a crowd platform
  passes its ids in; NULL: not read) and ``complete_url`` (where the end of the task sends the juror, with
  ``{code}``). Links made before keep reading no parameter and send nobody anywhere.
- ``juror``: ``participant_id``, ``platform_study_id``, ``platform_session_id`` (the platform's ids at arrival) and
  ``browser_key`` (the open link's cookie in the juror's browser), each unique per link with ``link_id``.

A downgrade drops them.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("jury_link") as batch:
        batch.add_column(sa.Column("participant_param", sa.String(length=40), nullable=True))
        batch.add_column(sa.Column("study_param", sa.String(length=40), nullable=True))
        batch.add_column(sa.Column("session_param", sa.String(length=40), nullable=True))
        batch.add_column(sa.Column("complete_url", sa.String(length=2000), nullable=True))
    with op.batch_alter_table("juror") as batch:
        batch.add_column(sa.Column("participant_id", sa.String(length=64), nullable=True))
        batch.add_column(sa.Column("platform_study_id", sa.String(length=64), nullable=True))
        batch.add_column(sa.Column("platform_session_id", sa.String(length=64), nullable=True))
        batch.add_column(sa.Column("browser_key", sa.String(length=64), nullable=True))
        batch.create_unique_constraint(op.f("uq_juror_link_id_participant_id"), ["link_id", "participant_id"])
        batch.create_unique_constraint(op.f("uq_juror_link_id_browser_key"), ["link_id", "browser_key"])


def downgrade() -> None:
    with op.batch_alter_table("juror") as batch:
        batch.drop_constraint(op.f("uq_juror_link_id_browser_key"), type_="unique")
        batch.drop_constraint(op.f("uq_juror_link_id_participant_id"), type_="unique")
        for column in ("browser_key", "platform_session_id", "platform_study_id", "participant_id"):
            batch.drop_column(column)
    with op.batch_alter_table("jury_link") as batch:
        for column in ("complete_url", "session_param", "study_param", "participant_param"):
            batch.drop_column(column)
