"""How the export writes a value: timestamps, JSON cells, blanked secrets, whole numbers next to blanks."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime

import pandas as pd

SECRET_KEYS = ("token", "password", "secret")  # payload keys holding any of these are blanked in events.csv
# an answer's provenance keys blanked in answers.csv: exact names (a model's "max_tokens" is research data)
CREDENTIAL_KEYS = frozenset({"api_key", "apikey", "authorization", "password", "secret", "token", "access_token"})


def export_timestamp(moment: datetime | None) -> str | None:
    """A timestamp as the export writes it: ISO 8601 in UTC to the microsecond (``2026-11-23T09:04:14.123456Z``);
    None stays None.

    Every cell of a column has one width, so the times sort as text and keep the database's precision; a time
    without a zone (SQLite reads them back so) is UTC.  The live protocol's times are written otherwise
    (``vtt.engine.audiences``: the time's own precision, or milliseconds where a browser's clock reads them).
    """
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def json_text(value) -> str | None:
    """A structured value as one cell: JSON with sorted keys, non-ASCII kept; None stays None."""
    return None if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)


def blanked(value, secret: Callable[[str], bool]):
    """``value`` with every mapping entry, at any depth, whose lower-cased key is ``secret`` blanked."""
    if isinstance(value, dict):
        return {key: "[removed]" if secret(str(key).lower()) else blanked(item, secret) for key, item in value.items()}
    if isinstance(value, list):
        return [blanked(item, secret) for item in value]
    return value


def names_a_secret(key: str) -> bool:
    """A key that holds token, password or secret anywhere in its name."""
    return any(word in key for word in SECRET_KEYS)


def is_credential(key: str) -> bool:
    """A key named exactly like a credential (api_key, authorization...)."""
    return key in CREDENTIAL_KEYS


def whole_numbers_exact(table: pd.DataFrame) -> pd.DataFrame:
    """An object table whose whole-number columns become Int64: 5 stays "5" next to blanks, not "5.0"."""
    for column in table.columns:
        values = table[column].dropna()
        if len(values) and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            table[column] = table[column].astype("Int64")
    return table
