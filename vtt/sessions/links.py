"""The links people open: each player's and juror's private page, the open join page, the stage screen.

One place builds them, for the command line and the host console alike.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

DEFAULT_BASE_URL = "http://127.0.0.1:5000"


def choose_base_url(given: str | None = None, configured: str | None = None) -> str:
    """What links start with: ``given`` (e.g. ``--base-url``), else ``configured`` (VTT_BASE_URL), else the default."""
    return (given or configured or DEFAULT_BASE_URL).rstrip("/")


def person_links(session, base: str, secret_key: str) -> dict[str, Any]:
    """Every link of a session (a :class:`vtt.models.VttSession`) under ``base``.

    ``{"stage_url", "join_url" (None unless open join), "players": [{"label", "kind", "answer_modes", "token",
    "url"}],
    "jurors": [{"label", "token", "url", "removed"}]}``, players and jurors in the order they were created.  The
    stage link carries the stage key (the installation's ``secret_key`` makes it): that stage shows the door code.
    """
    from ..access.admission import stage_key

    base = base.rstrip("/")
    code = session.join_code
    return {
        "stage_url": f"{base}/stage/{code}?key={stage_key(secret_key, session.id)}",
        "join_url": f"{base}/join/{code}" if session.open_join else None,
        "players": [
            {
                "label": player.name,
                "kind": str(player.kind),
                "answer_modes": list(player.answer_modes),
                "token": player.token,
                "url": f"{base}/play/{player.token}",
            }
            for player in session.players
        ],
        "jurors": [
            {
                "label": juror.label,
                "token": juror.token,
                "url": f"{base}/jury/{juror.token}",
                "removed": juror.removed_at is not None,
            }
            for juror in session.live_jurors
        ],
    }


def agent_command(server: str, token: str, code: str | None, backend: str = "SPEC", program: str = "vtt") -> str:
    """The ``vtt agent`` line that plays an AI player (its ``token``) on ``server`` with ``backend`` (``SPEC``: for
    the team to name, docs/agents.md); ``code`` (the session's) routes it behind nginx.  The one builder of the line,
    for the printed card and the host console alike."""
    session = ["--session", code] if code else []
    return shlex.join(
        [program, "agent", "--server", server.rstrip("/"), "--token", token, *session, "--backend", backend]
    )


def console_agent_command(server: str, token: str, predictions: Path | None, code: str | None) -> str:
    """The host console's :func:`agent_command`: replaying ``predictions`` (the demo ships its AI's), else a
    predictions file for the host to name, with the ``vtt`` beside this Python when there is one (the checkout's
    ``.venv/bin/vtt`` after ``make run``), so the line runs on this machine without activating anything."""
    installed = Path(sys.executable).with_name("vtt")
    program = str(installed) if installed.is_file() else "vtt"
    backend = f"replay:{predictions}" if predictions else "replay:PREDICTIONS.csv"
    return agent_command(server, token, code, backend, program)
