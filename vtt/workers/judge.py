"""``python -m vtt.workers.judge SESSION_ID URL MODEL``: the grading page's "Ask the judge", in a process of its own.

Hundreds of HTTP calls and their writes would otherwise run inside the server; this process asks them
(:func:`vtt.judge.suggest.suggest`, the API key from ``VTT_JUDGE_API_KEY`` or ``OPENAI_API_KEY``) and ends with one
JSON line, the run's figures (or ``{"error": ...}`` and exit status 1 when the settings are unusable). The run is
logged as a ``judge.run`` event, which the grading page shows; a run that failed is shown from that last line.
"""

from __future__ import annotations

import json
import os
import sys


def main(session_id: str, url: str, model: str, report=None) -> dict:
    """``report(text)``, when a job runs it: the calls made so far (``done/total``) for the host's page."""
    from ..db import db_factory_from_env
    from ..jobs.runner import counted
    from ..judge.suggest import JudgeSettings, suggest

    api_key = os.environ.get("VTT_JUDGE_API_KEY") or os.environ.get("OPENAI_API_KEY") or None
    settings = JudgeSettings.from_spec(url, model, api_key=api_key)
    started, progress = counted(report)
    return suggest(db_factory_from_env(), int(session_id), settings, started=started, progress=progress).as_dict()


if __name__ == "__main__":
    from ..judge.suggest import JudgeError

    try:
        print(json.dumps(main(*sys.argv[1:4])))
    except JudgeError as error:  # the settings: the grading page shows this line
        print(json.dumps({"error": str(error)}))
        sys.exit(1)
