"""A session's export: every table of it (:mod:`.export_specs`) and the wide table, each row led by the session's
join code and design hash; ``vtt export``, the results page's zip and a study's all-sessions files write it."""

from __future__ import annotations

import pandas as pd
from sqlalchemy.orm import Session

from ..models import VttSession
from .export_specs import EXPORT_TABLES, ExportSource
from .session_rows import record_rows, session_rows
from .tables import SessionTables, tables_from_rows
from .wide import wide_table

EXPORT_FILES = tuple(spec.file for spec in EXPORT_TABLES)  # every file of an export but CODE_wide.csv


def export_tables(db: Session, vtt_session: VttSession) -> dict[str, pd.DataFrame]:
    """``{file name: table}`` for every table of the session, and ``<CODE>_wide.csv``.

    Every table starts with ``session`` (the join code) and ``design_hash``; players' and jurors'
    tokens (their logins) and the client keys (replay ids) are left out; event payload entries
    whose key names a token, password or secret are blanked.  Timestamps are ISO 8601 UTC.
    """
    return tables_and_export(db, vtt_session)[1]


def tables_and_export(db: Session, vtt_session: VttSession) -> tuple[SessionTables, dict[str, pd.DataFrame]]:
    """:func:`~.tables.session_tables` and :func:`export_tables` from one reading of the session's rows (a study
    needs both of every session: reading each twice was most of its report's time)."""
    rows = session_rows(db, vtt_session.id)
    source = ExportSource(vtt_session, rows, record_rows(db, vtt_session.id))
    exported = {spec.file: spec.table(source) for spec in EXPORT_TABLES}
    tables = tables_from_rows(vtt_session, rows)
    exported[f"{vtt_session.join_code}_wide.csv"] = wide_table(source, tables)
    stamp = {"session": vtt_session.join_code, "design_hash": vtt_session.design_hash}
    return tables, {file: _stamped(table, stamp) for file, table in exported.items()}


def _stamped(table: pd.DataFrame, stamp: dict) -> pd.DataFrame:
    """``table`` with a column per entry of ``stamp`` in front, its value on every row."""
    front = pd.DataFrame(
        {key: [value] * len(table) for key, value in stamp.items()}, index=table.index, columns=list(stamp)
    )
    return pd.concat([front, table], axis=1)
