"""The JSON module the Socket.IO server parses packets with: one decoder, built once.

python-engineio's default builds a new ``JSONDecoder`` for every packet (to cap integer sizes);
that was 2 % of a loaded server's CPU.  Same cap, one decoder.
"""

from __future__ import annotations

import json
from typing import Any

MAX_INTEGER_DIGITS = 100


def _bounded_int(text: str) -> int:
    if len(text) > MAX_INTEGER_DIGITS:
        raise ValueError("integer too large")
    return int(text)


_decoder = json.JSONDecoder(parse_int=_bounded_int)
dumps = json.dumps


def loads(text: str | bytes, **_options: Any) -> Any:
    return _decoder.decode(text.decode() if isinstance(text, bytes) else text)
