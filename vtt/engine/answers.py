"""The answers: a player's own, the host's for an AI player, a spoken answer's recording and transcript, an edit."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from ..kinds import AnswerMode, Phase, PlayerKind, QuestionType
from ..protocol.messages import AnswerIn
from ..protocol.text import unstorable
from ..protocol.vocabulary import (
    MAX_RECORDING_BYTES,
    MAX_RECORDING_SECONDS,
    MAX_TRANSCRIBER,
    MAX_TRANSCRIPT,
    RECORDING_TYPES,
    TRANSCRIPT_LEVELS,
)
from . import audiences
from .actions import Action, Message, Outcome, Tally, declare, declare_host
from .checks import filled, in_phase, require, whole_number
from .state import (
    EditAnswer,
    LiveState,
    LogEvent,
    QuestionInfo,
    SaveAnswer,
    SaveRecording,
    SaveTakeTranscript,
    TakeTranscript,
)

# A recording's file name, as the upload view makes it: session, question, player and the action's id.
RECORDING_FILE = r"^[0-9]+-[0-9]+-[0-9]+-[A-Za-z0-9_-]{1,64}\.[a-z0-9]{2,5}$"


@declare("answer", roles=("player",), schema=AnswerIn)
def _answer(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    require(state.phase is Phase.ANSWERING, "answering_closed", "answering is closed")
    item = state.current_question
    require(action.args.get("question") == item.id, "wrong_question", "that is not the question being answered now")
    player = action.actor.id
    require(player in state.participants(state.round), "not_playing", "you do not play in this round")
    earlier = state.answers.get(item.id, {}).get(player)
    # The host entered it because the agent had failed: a late answer from the agent must not undo that.
    require(not (earlier and earlier.entered_by_host), "host_answered", "the host has entered this answer; it stays")
    text, choice = _answer_fields(item, action.args)
    provenance = action.args.get("provenance")
    if provenance is not None:
        require(
            state.players[player].kind is PlayerKind.AI, "not_ai", "only an AI player's answer carries a provenance"
        )
        provenance = _provenance(provenance)
    return _saved_answer(state, item, player, text, choice, action.client_key or "", now, provenance, False)


def _answer_fields(item: QuestionInfo, args: dict[str, Any]) -> tuple[str, int | None]:
    """(text, choice) of an answer: an option of a multiple-choice question, else text."""
    if item.type is QuestionType.MCQ:
        choice, last = args.get("choice"), len(item.choices) - 1
        require(choice is not None and choice <= last, "bad_field", f"choice must be an option from 0 to {last}")
        return "", choice
    return filled(args.get("text"), "text"), None


def _saved_answer(
    state: LiveState,
    item: QuestionInfo,
    player: int,
    text: str,
    choice: int | None,
    client_key: str,
    now: datetime,
    provenance: dict[str, Any] | None,
    by_host: bool,
    answered_at: datetime | None = None,
) -> Outcome:
    """Save an answer given at ``answered_at`` (default: now; a spoken answer: when its recording ended)."""
    at = answered_at or now
    latency = int((at - item.shown_at).total_seconds() * 1000) if item.shown_at else None
    outcome = Outcome(
        effects=[SaveAnswer(item.id, player, text, choice, max(latency or 0, 0), client_key, at, provenance, by_host)]
    )
    outcome.reply["question"] = item.id

    def announce(after: LiveState) -> list[Message]:
        saved = [Message("host", "answer", audiences.host_answer(after, item, after.answers[item.id][player]))]
        if after.players[player].kind is PlayerKind.AI:  # the Agents panel counts what was answered for the player
            saved.append(Message("host", "agent", audiences.host_agent(after, player)))
        return saved

    outcome.announce = announce
    return outcome


def _provenance(value: dict[str, Any]) -> dict[str, Any]:
    """``{backend, model, settings}``: which program produced an AI player's answer, its backend's name trimmed.
    The answer's schema gives its shape and size; the backend's name must keep a character once trimmed."""
    backend = filled(value["backend"], "provenance.backend")
    return {"backend": backend, "model": value.get("model"), "settings": value.get("settings") or {}}


def _answer_for(state: LiveState, action: Action, *, doing: str) -> tuple[QuestionInfo, int]:
    """The current question and the player whose answer the host gives for them (``question``, if given, must be
    the current one), while answering is open or closed, before the reveal."""
    in_phase(
        state,
        Phase.ANSWERING,
        Phase.ANSWERS_CLOSED,
        doing=f"{doing} (while answering is open or closed, before the reveal)",
    )
    item = state.current_question
    asked = action.args.get("question")
    require(asked is None or asked == item.id, "wrong_question", "that is not the question being answered now")
    player = action.args.get("player")
    require(player in state.players, "unknown_player", f"this session has no player {player!r}")
    return item, player


@declare_host("enter_answer")
def _enter_answer(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    """The host types (or imports from a predictions file) the answer of an AI player whose agent failed."""
    item, player = _answer_for(state, action, doing="enter an AI player's answer")
    require(
        state.players[player].kind is PlayerKind.AI,
        "not_ai",
        f"{state.players[player].name} is not an AI player: only an AI player's answer can be entered",
    )
    require(
        player in state.participants(state.round),
        "not_playing",
        f"{state.players[player].name} does not play in this round",
    )
    text, choice = _answer_fields(item, action.args)
    source = action.args.get("source") or "typed"
    # the file's name: the host's message bounds it, and the predictions import cuts it to that bound
    provenance = {"backend": "host", "model": None, "settings": {"source": source, "file": action.args.get("file")}}
    return _saved_answer(state, item, player, text, choice, action.client_key or "", now, provenance, True)


@declare_host("edit_answer")
def _edit_answer(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    # Only once answering is closed: a player answering again would otherwise undo the host's redaction.
    in_phase(state, Phase.ANSWERS_CLOSED, doing="edit an answer (after answering closes, before the reveal)")
    item = state.current_question
    player = action.args.get("player")
    answer = state.answers.get(item.id, {}).get(player)
    require(answer is not None, "no_answer", f"player {player!r} has no answer to this question")
    redact = action.args.get("redact") is True
    text = "" if redact else filled(action.args.get("text"), "text")
    require(
        item.type is QuestionType.OPEN or redact,
        "mcq_answer",
        "a multiple-choice answer can be redacted, not rewritten",
    )
    outcome = Outcome(effects=[EditAnswer(item.id, player, text, redact, now)])
    outcome.effects.append(
        LogEvent(
            "answer.original",
            action.actor.label,
            {"question": item.id, "player": player, "text": answer.text, "choice": answer.choice_index},
            None,
            now,
        )
    )
    outcome.announce = lambda after: [
        Message("host", "answer", audiences.host_answer(after, item, after.answers[item.id][player]))
    ]
    return outcome


# --- spoken answers ---------------------------------------------------------------------------------


@declare("recorded", roles=("player",), schema=None)  # sent by the upload view once the file is on disk
def _recorded(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    """A spoken answer's recording is on the server's disk (the upload view wrote it, then sent this): kept as the
    player's latest take, for the host to hear and transcribe.  It is not an answer until the host confirms one."""
    require(state.phase is Phase.ANSWERING, "answering_closed", "answering is closed")
    item = state.current_question
    require(action.args.get("question") == item.id, "wrong_question", "that is not the question being answered now")
    player = state.players[action.actor.id]
    require(
        AnswerMode.SPOKEN.value in player.answer_modes,
        "not_spoken",
        "only a player who answers aloud (answer mode spoken) sends recordings",
    )
    require(player.id in state.participants(state.round), "not_playing", "you do not play in this round")
    args = action.args
    file, mime = args.get("file"), args.get("mime")
    require(isinstance(file, str) and re.fullmatch(RECORDING_FILE, file), "bad_field", "file must be a recording")
    require(mime in RECORDING_TYPES, "bad_field", f"mime must be one of {', '.join(sorted(RECORDING_TYPES))}")
    size = whole_number(args.get("size"), "size", 1, MAX_RECORDING_BYTES, optional=False)
    duration = whole_number(args.get("duration_ms"), "duration_ms", 0, MAX_RECORDING_SECONDS * 1000)
    ended = args.get("ended_at")
    try:
        ended_at = datetime.fromisoformat(ended) if isinstance(ended, str) else None
    except ValueError:
        ended_at = None
    require(ended_at is not None and ended_at.tzinfo is not None, "bad_field", "ended_at must be an ISO time")
    # The page's word on when it stopped, kept inside what the server saw: after the question, not after now.
    ended_at = min(max(ended_at, item.shown_at or ended_at), now)
    effect = SaveRecording(item.id, player.id, file, mime, size, duration, ended_at, action.client_key or "", now)
    outcome = Outcome(effects=[effect], reply={"question": item.id, "file": file})
    outcome.announce = lambda after: [Message("host", "recording", audiences.host_recording(after, item, player.id))]
    return outcome


@declare_host("confirm_spoken")
def _confirm_spoken(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    """The host heard a spoken answer's latest recording and confirms what it says (typed, or a transcription
    backend's suggestion, corrected or not; for a multiple-choice question the option said): saved as the player's
    answer, answered when the recording ended, with its provenance."""
    item, player = _answer_for(state, action, doing="confirm a spoken answer")
    name = state.players[player].name
    recording = state.recordings.get(item.id, {}).get(player)
    require(recording is not None, "no_recording", f"{name} has sent no recording for this question")
    require(
        action.args.get("file") == recording.file,
        "stale_recording",
        f"{name} has recorded again since: listen to the latest recording first",
    )
    text, choice = _answer_fields(item, action.args)
    transcribed_by = action.args.get("transcribed_by") or "host"
    provenance = {
        "spoken": True,
        "recording": recording.file,
        "transcribed_by": transcribed_by,
        "recording_ended_at": audiences.protocol_timestamp(recording.ended_at, "milliseconds"),
    }
    key = action.client_key or ""
    return _saved_answer(state, item, player, text, choice, key, now, provenance, True, recording.ended_at)


@declare("transcribed", roles=("system",), schema=None)  # sent by the transcription view with its worker's words
def _transcribed(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    """A transcription backend heard a take (the host asked, a worker listened): its suggestion is kept with the
    take and shown to the host, whatever the phase.  Not an answer: the host confirms one (``confirm_spoken``)."""
    args = action.args
    item = state.questions.get(args.get("question"))
    require(item is not None, "wrong_question", "this session has no such question")
    takes = state.recordings.get(item.id, {})
    recording = takes.get(args.get("player"))
    require(recording is not None, "no_recording", "that player has sent no recording for this question")
    require(args.get("file") == recording.file, "stale_recording", "the player has recorded again since")
    text = args.get("text")
    require(isinstance(text, str), "bad_field", "text must be text")
    require(len(text) <= MAX_TRANSCRIPT, "too_long", f"text is longer than {MAX_TRANSCRIPT} characters")
    problem = unstorable(text)
    require(problem is None, "bad_text", f"text {problem}")
    confidence = args.get("confidence")
    require(
        confidence is None
        or (isinstance(confidence, int | float) and not isinstance(confidence, bool) and 0 <= confidence <= 1),
        "bad_field",
        "confidence must be a number from 0 to 1, or null",
    )
    backend = args.get("backend")
    require(
        isinstance(backend, str) and 0 < len(backend) <= MAX_TRANSCRIBER and unstorable(backend) is None,
        "bad_field",
        f"backend must be text of 1 to {MAX_TRANSCRIBER} characters",
    )
    level = args.get("level")
    require(level in TRANSCRIPT_LEVELS, "bad_field", f"level must be one of {', '.join(TRANSCRIPT_LEVELS)}")
    require((level == "none") == (not text.strip()), "bad_field", "level is none exactly when the text is empty")
    player = args["player"]
    suggestion = TakeTranscript(text, None if confidence is None else float(confidence), backend, level)
    outcome = Outcome(effects=[SaveTakeTranscript(item.id, player, recording.file, suggestion)])
    outcome.announce = lambda after: [Message("host", "recording", audiences.host_recording(after, item, player))]
    return outcome
