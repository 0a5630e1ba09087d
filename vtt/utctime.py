"""A timezone-aware UTC timestamp column type, the same on SQLite and PostgreSQL (every ``datetime`` of the models)."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import DateTime
from sqlalchemy.types import TypeDecorator


class UTCDateTime(TypeDecorator):
    """A timezone-aware UTC timestamp on every backend.

    PostgreSQL keeps the zone itself; SQLite stores text without one, so values are converted to
    UTC before they are written and come back marked as UTC (naive datetimes are taken as UTC).
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    @staticmethod
    def _in_utc(value: datetime | None) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)

    def process_bind_param(self, value: datetime | None, _dialect) -> datetime | None:
        return self._in_utc(value)

    def process_result_value(self, value: datetime | None, _dialect) -> datetime | None:
        return self._in_utc(value)
