"""Each person's readiness from their page's device check: for the host's console only.

A player's or juror's page plays a test clip and asks whether the tone was heard, records two seconds on a spoken
player's page and asks whether they were heard played back, and measures its clock, its transport and a round trip
through the socket (``static/js/devcheck.js``); the ``device_check`` action brings the figures here.  The verdict
(the named problems) is made when the host is told, so the limits below apply to every check kept.  Never sent to
the jury or the stage: a phone that reads aloud or records is a young child's.
"""

from __future__ import annotations

from typing import Any

from .state import LiveState

# The host's console shows a countdown in whole seconds from each page's own clock: a clock a second off shows the
# deadline a second off (the screening itself corrects for the clock).
CLOCK_OFF_MS = 1000
# The host's play reaches a page in about half a round trip and the clip starts 1.5 s after it
# (flow.SCREENING_LEAD): beyond this the page has under a second left to seek to the clip's first frame.
SLOW_ROUND_TRIP_MS = 750

PROBLEMS = (
    "no_sound",  # the person did not hear the test clip's tone
    "sound_failed",  # the test clip would not play
    "no_microphone",  # a spoken player's device has no microphone or cannot record
    "microphone_blocked",  # the person or the browser refused the microphone
    "recording_failed",
    "playback_not_heard",  # two seconds recorded and played back, and the person did not hear them
    "clock_off",
    "polling_only",  # long-polling instead of a websocket: every message costs a request
    "slow_round_trip",
)
_SOUND_PROBLEMS = {"not_heard": "no_sound", "failed": "sound_failed"}
_MICROPHONE_PROBLEMS = {
    "none": "no_microphone",
    "denied": "microphone_blocked",
    "failed": "recording_failed",
    "not_heard": "playback_not_heard",
}


def problems(report: dict[str, Any]) -> list[str]:
    """The named problems of a check (empty: the device is ready), in the order of :data:`PROBLEMS`."""
    found = [
        _SOUND_PROBLEMS.get(report["sound"]),
        _MICROPHONE_PROBLEMS.get(report.get("microphone")),
        "clock_off" if abs(report["clock_offset_ms"]) > CLOCK_OFF_MS else None,
        "polling_only" if report["transport"] == "polling" else None,
        "slow_round_trip" if report["round_trip_ms"] > SLOW_ROUND_TRIP_MS else None,
    ]
    return [problem for problem in found if problem]


def host_readiness(state: LiveState, role: str, person_id: int) -> dict[str, Any]:
    """One person's latest check as the host sees it: who (a player's id, a juror's label), the figures, the
    problems."""
    report = state.device_checks[(role, person_id)]
    return {**_who(state, role, person_id), **report, "problems": problems(report)}


def host_readiness_all(state: LiveState) -> dict[str, dict[str, Any]]:
    """Every check kept, for the host's snapshot: players by id, jurors by label (absent: not checked)."""
    players, jurors = {}, {}
    for role, person_id in state.device_checks:
        entry = host_readiness(state, role, person_id)
        if role == "player":
            players[str(person_id)] = entry
        else:
            jurors[entry["juror"]] = entry
    return {"players": players, "jurors": jurors}


def _who(state: LiveState, role: str, person_id: int) -> dict[str, Any]:
    if role == "player":
        return {"role": role, "player": person_id}
    label = next(name for name, juror in state.juror_ids.items() if juror == person_id)
    return {"role": role, "juror": label}
