"""Whose votes and sheet lines count: the one rule every reader of them applies.

A juror the host removed (``Juror.removed_at`` set) counts nowhere: not in the live tally, a closed round's stored
tally or its recount, the exports, the report, the results page or a study. Their rows stay in the database, so the
record still shows what they did (``jurors.csv`` says when they were removed, the event log's ``votes_removed`` lists
the votes they had cast), and every reader leaves them out by selecting through here:

- the live state read from the database (``load``: the vote count and the tally after a restart) and a closed
  round's recount (``tally``) read :func:`live_votes`; the live state's own tally leaves out
  ``LiveState.removed_jurors`` (``tally.round_tally``), the same jurors before the batch that removed them is written;
- the session's rows (``vtt.results.session_rows``), which the tables, the exports (``votes.csv``,
  ``sheet_entries.csv``, the wide file), the report, the results page and a study's frames are built from, read
  :func:`counted`;
- a study's pooled rate (``vtt.studies``) reads :func:`live_votes`.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Select, select

from ..models import Juror, Jury, SheetEntry, Vote

# The rule itself: the juror who cast the vote or wrote the sheet line was not removed by the host.
JUROR_COUNTS: ColumnElement[bool] = Juror.removed_at.is_(None)


def counted(model: type[Vote] | type[SheetEntry], *columns: Any) -> Select:
    """``select(*columns)`` (the whole ``model`` without) over the votes or sheet lines of every jury that count:
    those of jurors the host did not remove."""
    on_juror = (Juror.id == model.juror_id) & (Juror.session_id == model.session_id)
    return select(*(columns or (model,))).select_from(model).join(Juror, on_juror).where(JUROR_COUNTS)


def live_votes(*columns: Any) -> Select:
    """:func:`counted` votes of the live jury alone: a displaced or AI juror's votes never reach the live tally, the
    stage or the round verdicts."""
    return counted(Vote, *columns).where(Juror.jury == Jury.LIVE)
