"""What pages and agents report to the host alone: an AI agent's status, a read-aloud page's voice, a device check."""

from __future__ import annotations

import re
from datetime import datetime

from ..kinds import AnswerMode, Phase, PlayerKind
from ..protocol.messages import AgentIn, DeviceCheckIn, NoticeIn
from ..protocol.vocabulary import (
    AGENT_STATUSES,
    CHECK_MICROPHONES,
    CHECK_RENDITIONS,
    CHECK_SOUNDS,
    CHECK_TRANSPORTS,
    LANGUAGE_TAG,
    MAX_CHECK_MS,
    MAX_CLOCK_OFFSET_MS,
    MAX_LANGUAGE_TAG,
    MAX_ROUND_TRIP_MS,
    SPEECH_NOTICES,
)
from . import audiences, readiness
from .actions import Action, Message, Outcome, Tally, declare
from .checks import require, whole_number
from .state import LiveState, SaveDeviceCheck, SetAgentStatus, SetSpeechNotice


@declare("agent", roles=("player",), schema=AgentIn)
def _agent_status(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    """An AI player's agent says how it is doing (ready, working, answered, error): for the host's screen."""
    player = action.actor.id
    require(state.players[player].kind is PlayerKind.AI, "not_ai", "only an AI player's agent reports a status")
    status = action.args.get("status")
    require(status in AGENT_STATUSES, "bad_field", f"status must be one of {', '.join(AGENT_STATUSES)}")
    message = "" if action.args.get("message") is None else action.args.get("message")  # the schema bounds it
    outcome = Outcome(effects=[SetAgentStatus(player, status, message, now)])
    outcome.announce = lambda after: [Message("host", "agent", audiences.host_agent(after, player))]
    return outcome


@declare("notice", roles=("player",), schema=NoticeIn)
def _notice(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    """A read-aloud player's page says it has no voice for its language (the host reads aloud instead), or that it
    has one after all: for the host's console only (answer modes never reach the jury or the stage)."""
    player = state.players[action.actor.id]
    require(
        AnswerMode.READ_ALOUD.value in player.answer_modes,
        "not_read_aloud",
        "only a player whose page reads aloud (answer mode read_aloud) reports on its voice",
    )
    notice = action.args.get("notice")
    require(notice in SPEECH_NOTICES, "bad_field", f"notice must be one of {', '.join(SPEECH_NOTICES)}")
    language = action.args.get("language")
    require(
        isinstance(language, str) and len(language) <= MAX_LANGUAGE_TAG and re.fullmatch(LANGUAGE_TAG, language),
        "bad_field",
        "language must be a language tag such as ko or en-GB",
    )
    outcome = Outcome(effects=[SetSpeechNotice(player.id, notice, language, now)])
    outcome.announce = lambda after: [Message("host", "notice", audiences.host_notice(after, player.id))]
    return outcome


@declare("device_check", roles=("player", "juror"), schema=DeviceCheckIn)
def _device_check(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    """A player's or juror's page checked the device (the test clip's sound, a spoken player's microphone, the
    connection): kept on their row, the latest check wins, and only the host hears of it (its Readiness panel)."""
    require(state.phase is not Phase.FINISHED, "finished", "the session has finished")
    args, role, person = action.args, action.actor.role, action.actor.id
    if role == "player":
        require(state.players[person].kind is PlayerKind.HUMAN, "not_human", "an AI player has no device to check")
    spoken = role == "player" and AnswerMode.SPOKEN.value in state.players[person].answer_modes
    microphone = args.get("microphone")
    if spoken:
        require(
            microphone in CHECK_MICROPHONES,
            "bad_field",
            f"a spoken player's check says what the microphone did: one of {', '.join(CHECK_MICROPHONES)}",
        )
    else:
        require(microphone is None, "not_spoken", "only a spoken player's page records: microphone must be null")
    for name, allowed in (("sound", CHECK_SOUNDS), ("transport", CHECK_TRANSPORTS), ("rendition", CHECK_RENDITIONS)):
        require(args.get(name) in allowed, "bad_field", f"{name} must be one of {', '.join(allowed)}")
    report = {
        "sound": args["sound"],
        "microphone": microphone,
        "clock_offset_ms": whole_number(
            args.get("clock_offset_ms"), "clock_offset_ms", -MAX_CLOCK_OFFSET_MS, MAX_CLOCK_OFFSET_MS, optional=False
        ),
        "round_trip_ms": whole_number(args.get("round_trip_ms"), "round_trip_ms", 0, MAX_ROUND_TRIP_MS, optional=False),
        "transport": args["transport"],
        "rendition": args["rendition"],
        "duration_ms": whole_number(args.get("duration_ms"), "duration_ms", 0, MAX_CHECK_MS),
        "at": audiences.protocol_timestamp(now),
    }
    outcome = Outcome(effects=[SaveDeviceCheck(role, person, report)], reply={"problems": readiness.problems(report)})
    outcome.announce = lambda after: [Message("host", "readiness", readiness.host_readiness(after, role, person))]
    return outcome
