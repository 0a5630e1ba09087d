"""``python -m vtt.workers.ai_jury SESSION_ID URL MODEL FRAMES MEDIA_DIR [CUT_SHORT]``: the results page's "Ask a model
to judge", in a process of its own (CUT_SHORT ``1``: a round cut short is offered too).

The calls and their writes would otherwise run inside the server; this process asks them
(:func:`vtt.juries.ai.judge_session`, the API key from ``VTT_JUDGE_API_KEY`` or ``OPENAI_API_KEY``) and ends with one
JSON line, the run's figures (or ``{"error": ...}`` and exit status 1 when the session or the settings are unusable).
The run is logged as a ``jury.ai.run`` event, which the results page shows; a run that failed is shown from that
last line.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def main(
    session_id: str, url: str, model: str, frames: str = "0", media_dir: str = "", cut_short: str = "0", report=None
) -> dict:
    """``report(text)``, when a job runs it: the calls made so far (``done/total``) for the host's page."""
    from ..db import db_factory_from_env
    from ..jobs.runner import counted
    from ..juries.ai import JurySettings, judge_session

    api_key = os.environ.get("VTT_JUDGE_API_KEY") or os.environ.get("OPENAI_API_KEY") or None
    settings = JurySettings.from_spec(
        url, model, api_key=api_key, frames=int(frames), media_dir=Path(media_dir) if media_dir else None
    )
    started, progress = counted(report)
    return judge_session(
        db_factory_from_env(), int(session_id), settings, cut_short=cut_short == "1", started=started, progress=progress
    ).as_dict()


if __name__ == "__main__":
    from ..juries.ai import JuryError

    try:
        print(json.dumps(main(*sys.argv[1:7])))
    except JuryError as error:  # the session or the settings: the results page shows this line
        print(json.dumps({"error": str(error)}))
        sys.exit(1)
