"""What pages and agents report to the host alone: an AI agent's status, a read-aloud page's voice, a device check."""

from __future__ import annotations

from datetime import datetime

from ..kinds import AnswerMode, Phase, PlayerKind
from ..protocol.messages import AgentIn, DeviceCheckIn, NoticeIn
from ..protocol.vocabulary import (
    CHECK_MICROPHONES,
)
from . import audiences, readiness
from .actions import Action, Message, Outcome, Tally, declare
from .checks import require
from .state import LiveState, SaveDeviceCheck, SetAgentStatus, SetSpeechNotice


@declare("agent", roles=("player",), schema=AgentIn)
def _agent_status(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    """An AI player's agent says how it is doing (ready, working, answered, error): for the host's screen."""
    player = action.actor.id
    require(state.players[player].kind is PlayerKind.AI, "not_ai", "only an AI player's agent reports a status")
    status, message = action.args["status"], action.args.get("message") or ""
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
    notice, language = action.args["notice"], action.args["language"]
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
    measured = ("sound", "clock_offset_ms", "round_trip_ms", "transport", "rendition", "duration_ms")
    report = {**{name: args.get(name) for name in measured}, "microphone": microphone}
    report["at"] = audiences.protocol_timestamp(now)
    outcome = Outcome(effects=[SaveDeviceCheck(role, person, report)], reply={"problems": readiness.problems(report)})
    outcome.announce = lambda after: [Message("host", "readiness", readiness.host_readiness(after, role, person))]
    return outcome
