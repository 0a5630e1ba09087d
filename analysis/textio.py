"""Reading input files as people and benchmarks write them: JSON documents and loosely typed values.

Shared by ``analysis.predictions`` and the app's bank readers (``vtt.banks.readers``), so that a
value reads as the same text, and a broken JSON file is reported at the same line, in both.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any


def read_json(path: Path, invalid: Callable[[int, str], Exception]) -> Any:
    """A JSON file's content (UTF-8, a byte order mark allowed).

    A syntax error raises ``invalid(line, "not valid JSON: <why>")``: each caller's own error type.
    """
    try:
        with path.open(encoding="utf-8-sig") as handle:
            return json.load(handle)
    except json.JSONDecodeError as error:
        raise invalid(error.lineno, f"not valid JSON: {error.msg}") from None


def value_text(value: Any) -> str:
    """A loosely typed value as trimmed text: None and NaN are blank, a whole float loses its ".0" (3.0 is "3")."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()
