"""several sheet lines per message: a juror's page saves every line typed since its last save at once

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23 13:00:00

Drops ``uq_sheet_entry_juror_id_client_key``: the lines of one ``sheet`` message share its client id. Replays
are recognised by the event log (``uq_event_session_id_actor_client_key``), as before.

A downgrade puts the constraint back, and so refuses, naming them, sheet entries of a juror that share a
client id: in the 0003 schema only one of them could exist.

SQLite: batch mode recreates ``sheet_entry``; ``migrations/env.py`` turns foreign keys off for the run.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from alembic.util import CommandError

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UNIQUE = "uq_sheet_entry_juror_id_client_key"


def upgrade() -> None:
    with op.batch_alter_table("sheet_entry") as batch:
        batch.drop_constraint(op.f(UNIQUE), type_="unique")


def downgrade() -> None:
    shared = (
        op.get_bind()
        .execute(
            sa.text(
                "SELECT juror_id, client_key, COUNT(*) AS lines FROM sheet_entry GROUP BY juror_id, client_key "
                "HAVING COUNT(*) > 1 ORDER BY juror_id, client_key"
            )
        )
        .all()
    )
    if shared:
        named = ", ".join(
            f"juror id={row.juror_id} (client_key {row.client_key!r}, {row.lines} lines)" for row in shared[:20]
        )
        more = f" and {len(shared) - 20} more" if len(shared) > 20 else ""
        raise CommandError(
            f"revision 0003 allows one sheet entry per client id and juror; these share one: "
            f"{named}{more}. Export the session first, then delete all but one, or stay on 0004."
        )
    with op.batch_alter_table("sheet_entry") as batch:
        batch.create_unique_constraint(op.f(UNIQUE), ["juror_id", "client_key"])
