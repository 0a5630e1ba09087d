"""questions without keys: a multiple-choice question may have no key (a benchmark's test split)

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23 12:05:00

Drops the check ``ck_question_mcq_has_key``: ``vtt questions import --allow-missing-keys`` stores a test
split's questions without their (withheld) keys; their answers are graded by hand or left out of accuracy.

A downgrade puts the check back, and so refuses, naming them, questions that have no key: delete or key them
first (only the research team knows which).

SQLite: batch mode recreates ``question``; ``migrations/env.py`` turns foreign keys off for the run.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from alembic.util import CommandError

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CHECK = "ck_question_mcq_has_key"


def upgrade() -> None:
    with op.batch_alter_table("question") as batch:
        batch.drop_constraint(op.f(CHECK), type_="check")


def downgrade() -> None:
    unkeyed = (
        op.get_bind()
        .execute(sa.text("SELECT id, qid FROM question WHERE type = 'mcq' AND answer_index IS NULL ORDER BY id"))
        .all()
    )
    if unkeyed:
        named = ", ".join(f"question id={row.id} (qid {row.qid!r})" for row in unkeyed[:20])
        more = f" and {len(unkeyed) - 20} more" if len(unkeyed) > 20 else ""
        raise CommandError(
            f"revision 0002 needs a key on every multiple-choice question; these have none: "
            f"{named}{more}. Key or delete them, then downgrade again."
        )
    with op.batch_alter_table("question") as batch:
        batch.create_check_constraint(op.f(CHECK), "type <> 'mcq' OR answer_index IS NOT NULL")
