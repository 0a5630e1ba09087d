"""``python -m vtt.workers.transcribe FILE SPEC LANGUAGE``: the console's "Suggest a transcript", in a process of
its own (decoding and recognising take the CPU for seconds; the server's loop must not wait on them).

Prints one JSON line, ``{"text", "confidence", "backend", "level", "seconds"}``, or ``{"error": ...}`` with exit
status 1.
An ``http:`` backend's key comes from ``VTT_TRANSCRIBE_API_KEY`` and its model from ``VTT_TRANSCRIBE_MODEL``
(default whisper-1).
"""

from __future__ import annotations

import json
import os
import sys


def main(path: str, spec: str, language: str) -> dict:
    from ..transcribe import DEFAULT_MODEL, transcribe

    heard = transcribe(
        path,
        spec,
        language=language,
        api_key=os.environ.get("VTT_TRANSCRIBE_API_KEY") or None,
        model=os.environ.get("VTT_TRANSCRIBE_MODEL") or DEFAULT_MODEL,
    )
    confidence = None if heard.confidence is None else round(heard.confidence, 3)
    seconds = round(heard.seconds, 3)
    return {
        "text": heard.text,
        "confidence": confidence,
        "backend": heard.backend,
        "level": heard.level,
        "seconds": seconds,
    }


if __name__ == "__main__":
    from ..transcribe import TranscriptionError

    try:
        print(json.dumps(main(*sys.argv[1:4]), ensure_ascii=False))
    except TranscriptionError as error:
        print(json.dumps({"error": str(error)}, ensure_ascii=False))
        sys.exit(1)
