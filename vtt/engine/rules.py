"""The rules of a Video Turing Test: which action fits which state, and what follows from it.

``decide(state, action, now, tally)`` checks an action of the host, a player, a juror, a guest
(open join) or the system clock against the state and the actor's role.  A misfit raises
:class:`Refusal` with a code and a sentence, and changes nothing.  An accepted action returns an
:class:`Outcome`: the effects (applied to ``state`` before returning, and written to the database
by the caller), the messages per audience, and what the actor's acknowledgement carries.
``host_moves(state)`` lists the host's moves of the flow that fit the state, from the checks their handlers make.

Flow: draft -> lobby -> per round [round -> per question (clip [-> play_clip] -> answering -> answers_closed ->
judging) -> voting -> vote_closed -> tally -> (identities)] -> finished.  Deadlines are data: an
expired one closes its phase on the next action or clock tick (``decide`` runs the clock first).

Every shuffle derives from the session's recorded seed: the aliases of a round and the order of
a question's answers can be recomputed from the seed alone.
"""

from __future__ import annotations

import json
import random
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..kinds import AnswerMode, ClipPlayback, Phase, PlayerKind, QuestionType, RevealPolicy
from ..protocol.text import unstorable
from ..protocol.vocabulary import (
    AGENT_STATUSES,
    ANSWER_SOURCES,
    GUEST_ACTIONS,
    HOST_ACTIONS,
    JUROR_ACTIONS,
    LANGUAGE_TAG,
    MAX_AGENT_MESSAGE,
    MAX_BACKEND,
    MAX_CLIP_SECONDS,
    MAX_EXTEND_SECONDS,
    MAX_FILE_NAME,
    MAX_JURORS,
    MAX_LANGUAGE_TAG,
    MAX_PROVENANCE,
    MAX_RECORDING_BYTES,
    MAX_RECORDING_SECONDS,
    MAX_SHEET_LINES,
    MAX_TEXT,
    MAX_TRANSCRIBER,
    PLAYER_ACTIONS,
    RECORDING_TYPES,
    SPEECH_NOTICES,
)
from . import audiences
from .state import (
    AddJuror,
    DealAliases,
    EditAnswer,
    Effect,
    LiveState,
    LogEvent,
    MarkQuestion,
    MarkRound,
    QuestionInfo,
    RemoveJuror,
    RenewToken,
    RevealIdentity,
    SaveAnswer,
    SaveRecording,
    SaveSheet,
    SaveVote,
    SetAgentStatus,
    SetOpenJoin,
    SetParticipants,
    SetPhase,
    SetSpeechNotice,
    SetTally,
    apply_effect,
)

ALIASES = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
# The host's play reaches every page, which then starts the clip together at a moment this far ahead: long
# enough for the status to arrive and the video to seek on a venue's Wi-Fi.
SCREENING_LEAD = timedelta(seconds=1.5)

Tally = Callable[[LiveState, int], dict[str, Any]]


@dataclass(frozen=True)
class Actor:
    role: str  # host | player | juror | guest | system
    id: int | None = None

    @property
    def label(self) -> str:
        return f"{self.role}:{self.id}" if self.id is not None else self.role


SYSTEM = Actor("system")
HOST = Actor("host")


@dataclass(frozen=True)
class Action:
    actor: Actor
    name: str
    args: dict[str, Any] = field(default_factory=dict, hash=False)
    client_key: str | None = None


@dataclass(frozen=True)
class Message:
    """One event for one audience; ``replaces`` lets a later message of a batch supersede it."""

    audience: str
    event: str
    payload: dict[str, Any]
    replaces: str | None = None


@dataclass
class Outcome:
    """What an accepted action does; ``announce`` builds its messages from the state after it."""

    effects: list[Effect] = field(default_factory=list)
    reply: dict[str, Any] = field(default_factory=dict)
    announce: Callable[[LiveState], list[Message]] | None = None
    status_changed: bool = False
    messages: list[Message] = field(default_factory=list)


def refused(code: str, message: str, state_version: int | None = None) -> dict[str, Any]:
    """The one shape of a refused action's reply (docs/protocol.md, "Actions and acknowledgements")."""
    reply: dict[str, Any] = {"ok": False, "error": {"code": code, "message": message}}
    if state_version is not None:
        reply["state_version"] = state_version
    return reply


SERVER_ERROR = ("server_error", "the server could not save this; try again")  # retry with the same id


class Refusal(Exception):
    """An action that does not fit: ``code`` for programs, ``message`` for people."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message
        self.before: list[Outcome] = []  # the clock's outcome when a deadline expired just before

    def as_error(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}

    def reply(self, state_version: int | None = None) -> dict[str, Any]:
        return refused(self.code, self.message, state_version)


# --- the entry point ---------------------------------------------------------------------------


def decide(state: LiveState, action: Action, now: datetime, tally: Tally) -> list[Outcome]:
    """The outcomes of ``action`` (an expired deadline's own outcome first, if any).

    Each outcome is already applied to ``state`` and counted in ``state_version``.  Raises
    :class:`Refusal` when the action does not fit; the clock's outcome, if any, still stands
    (the refusal carries it as ``before``).  The action ``tick`` only runs the clock.
    """
    outcomes = []
    expired = _expire(state, now, tally)
    if expired:
        outcomes.append(expired)
    if action.name == "tick":
        return outcomes
    function = _HANDLERS.get(action.name)
    try:
        if function is None:
            raise Refusal("unknown_action", f"there is no action called {action.name!r}")
        if action.actor.role != _ROLE_OF[action.name]:
            raise Refusal("not_allowed", f"a {action.actor.role} cannot {action.name.replace('_', ' ')}")
        if action.actor.role == "juror" and action.actor.id in state.removed_jurors:
            raise Refusal("removed", "the host removed you from this session's jury")
        outcome = function(state, action, now, tally)
    except Refusal as refusal:
        refusal.before = outcomes
        raise
    outcome.effects.append(LogEvent(action.name, action.actor.label, _loggable(action.args), action.client_key, now))
    _commit(state, outcome)
    outcomes.append(outcome)
    return outcomes


def _commit(state: LiveState, outcome: Outcome) -> None:
    for effect in outcome.effects:
        apply_effect(state, effect)
    state.state_version += 1
    outcome.reply.setdefault("state_version", state.state_version)
    if outcome.status_changed:
        shared = audiences.status(state)
        outcome.messages += [
            Message("host", "status", audiences.host_status(state, host_moves(state))),
            *(Message(audience, "status", shared) for audience in ("player", "juror", "stage")),
        ]
    if outcome.announce:
        outcome.messages += outcome.announce(state)


def _loggable(args: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in args.items() if key != "token"}


def _expire(state: LiveState, now: datetime, tally: Tally) -> Outcome | None:
    """Close the current phase when its deadline has passed."""
    if state.deadline is None or now < state.deadline:
        return None
    if state.phase is Phase.CLIP:  # the host's screening has ended: answering opens
        outcome = _open_answering_outcome(state, now, state.answer_seconds)
    elif state.phase is Phase.ANSWERING:
        outcome = _close_answering_outcome(state, now)
    elif state.phase is Phase.VOTING:
        outcome = _close_vote_outcome(state, now, tally)
    else:
        return None
    outcome.effects.append(LogEvent("deadline", SYSTEM.label, {"phase": state.phase.value}, None, now))
    _commit(state, outcome)
    return outcome


# --- helpers --------------------------------------------------------------------------------------


def _require(condition: bool, code: str, message: str) -> None:
    if not condition:
        raise Refusal(code, message)


def _phase(state: LiveState, *phases: Phase, doing: str) -> None:
    if state.phase not in phases:
        raise Refusal("wrong_phase", f"cannot {doing} now: the session is at {state.phase.value.replace('_', ' ')}")


def _to_everyone(event: str, payload: dict[str, Any]) -> list[Message]:
    return [Message(audience, event, payload) for audience in ("host", "player", "juror", "stage")]


def _move(
    state: LiveState,
    outcome: Outcome,
    phase: Phase,
    round_: int | None,
    position: int | None,
    deadline: datetime | None,
) -> None:
    outcome.effects.append(SetPhase(phase, round_, position, deadline))
    outcome.status_changed = True


def _seconds(value: Any, default: int | None) -> int | None:
    if value is None:
        return default
    _require(
        isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_EXTEND_SECONDS,
        "bad_seconds",
        f"seconds must be a whole number from 1 to {MAX_EXTEND_SECONDS}",
    )
    return value


def _text(value: Any, name: str, *, required: bool = False) -> str:
    text = "" if value is None else value
    _require(isinstance(text, str), "bad_field", f"{name} must be text")
    text = text.strip()
    _require(len(text) <= MAX_TEXT, "too_long", f"{name} is longer than {MAX_TEXT} characters")
    _require(bool(text) or not required, "empty", f"{name} is empty")
    problem = unstorable(text)
    _require(problem is None, "bad_text", f"{name} {problem}")
    return text


def _whole(value: Any, name: str, low: int, high: int, *, optional: bool = True) -> int | None:
    if value is None and optional:
        return None
    _require(
        isinstance(value, int) and not isinstance(value, bool) and low <= value <= high,
        "bad_field",
        f"{name} must be a whole number from {low} to {high}",
    )
    return value


def alias_order(seed: int, round_: int, players: list[int]) -> list[tuple[int, str]]:
    """The round's aliases: players (sorted by id) dealt a shuffled run of letters, from the seed."""
    letters = list(ALIASES[: len(players)])
    random.Random(f"{seed}/aliases/{round_}").shuffle(letters)
    return list(zip(sorted(players), letters))


def answer_order(seed: int, round_: int, position: int, aliases: list[str]) -> list[str]:
    """The order a question's answers are listed in, from the seed."""
    order = sorted(aliases)
    random.Random(f"{seed}/answers/{round_}/{position}").shuffle(order)
    return order


# --- host: the flow ------------------------------------------------------------------------------

# Each move of the flow has a precondition, ``_<move>_fits(state)``, raising :class:`Refusal` when the move does
# not fit the state: its handler checks it first, and :func:`host_moves` lists the moves whose precondition holds.


def _open_lobby_fits(state: LiveState) -> None:
    _phase(state, Phase.DRAFT, doing="open the lobby")


def _open_lobby(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    _open_lobby_fits(state)
    outcome = Outcome()
    _move(state, outcome, Phase.LOBBY, None, None, None)
    return outcome


def _start_round_fits(state: LiveState) -> None:
    _phase(state, Phase.LOBBY, Phase.VOTE_CLOSED, Phase.TALLY, Phase.IDENTITIES, doing="start a round")
    _require(
        (state.round or 0) < state.rounds, "no_more_rounds", f"round {state.round} was the last: finish the session"
    )


def _start_round(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    _start_round_fits(state)
    number = (state.round or 0) + 1
    outcome = Outcome()
    outcome.effects.append(DealAliases(number, tuple(alias_order(state.seed, number, state.participants(number)))))
    _move(state, outcome, Phase.ROUND, number, None, None)
    outcome.announce = lambda after: [
        Message(audience, "round", audiences.round_card(after, number)) for audience in ("juror", "stage")
    ]
    outcome.reply["round"] = number
    return outcome


def _set_participants(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    number = _whole(action.args.get("round"), "round", 1, state.rounds, optional=False)
    _require(not state.round_info[number].aliases, "round_started", f"round {number} has begun: its players are fixed")
    chosen = action.args.get("players")
    if chosen is not None:
        _require(
            isinstance(chosen, list) and all(isinstance(p, int) and not isinstance(p, bool) for p in chosen),
            "bad_field",
            "players must be a list of player ids, or null for everyone",
        )
        unknown = sorted(set(chosen) - set(state.players))
        _require(not unknown, "unknown_player", f"no player with id {unknown[0] if unknown else ''} in this session")
        _require(len(set(chosen)) >= 2, "too_few_players", "a round needs at least two players")
        chosen = tuple(sorted(set(chosen)))
    return Outcome(effects=[SetParticipants(number, chosen)], reply={"round": number})


def _show_question_fits(state: LiveState) -> None:
    _phase(state, Phase.ROUND, Phase.JUDGING, doing="show the next question")
    _require(
        _next_question(state) is not None, "round_done", f"round {state.round} has no more questions: open the vote"
    )


def _next_question(state: LiveState) -> QuestionInfo | None:
    position = (state.position or 0) + 1
    return next((q for q in state.round_questions(state.round) if q.position == position), None)


def _show_question(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    _show_question_fits(state)
    item = _next_question(state)
    outcome = Outcome(effects=[MarkQuestion(item.id, "shown_at", now)])
    _move(state, outcome, Phase.CLIP, state.round, item.position, None)
    outcome.announce = lambda after: _question_messages(after, item)
    return outcome


def _question_messages(state: LiveState, item) -> list[Message]:
    shown = audiences.question(item)
    # a player sitting this round out ignores it (snapshot: playing); players also get the bank's qid
    playing = Message("player", "question", audiences.player_question(item))
    return [
        playing,
        Message("juror", "question", shown),
        Message("stage", "question", shown),
        Message("host", "question", audiences.host_question(item)),
    ]


def _play_clip_fits(state: LiveState) -> None:
    _phase(state, Phase.CLIP, Phase.ANSWERING, doing="play the clip")
    _require(
        state.clip_playback is ClipPlayback.HOST,
        "clip_playback",
        "in this session each player plays the clip on their own device (clip_playback 'device')",
    )
    _require(bool(state.current_question.clip_source), "no_clip", f"question {state.position} has no clip")


def _play_clip(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    """The host starts (or restarts) the current question's clip on the stage and every player's page at once.

    The screening starts ``SCREENING_LEAD`` from now, in server time; each page corrects for its own clock.
    While the clip phase lasts, answering opens by itself when the clip has played (the host may open it
    earlier); a replay while the players answer changes no deadline."""
    _play_clip_fits(state)
    item = state.current_question
    length = _clip_seconds(action.args.get("duration"), item)
    starts = now + SCREENING_LEAD
    outcome = Outcome(effects=[MarkQuestion(item.id, "clip_started_at", starts)], status_changed=True)
    if state.phase is Phase.CLIP:
        _move(
            state,
            outcome,
            Phase.CLIP,
            state.round,
            state.position,
            starts + timedelta(seconds=length) if length else None,
        )
    outcome.reply["starts_at"] = audiences.iso(starts, "milliseconds")
    return outcome


def _clip_seconds(value: Any, item: QuestionInfo) -> float | None:
    """How long the clip plays: what the host's console measured (``duration``), else its span, else unknown."""
    if value is not None:
        _require(
            isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= MAX_CLIP_SECONDS,
            "bad_field",
            f"duration must be a number of seconds above 0 and at most {MAX_CLIP_SECONDS:g}",
        )
        return float(value)
    if item.clip_start is not None and item.clip_end is not None:
        return item.clip_end - item.clip_start
    return None


def _open_answering_fits(state: LiveState) -> None:
    _phase(state, Phase.CLIP, doing="open answering")


def _open_answering(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    _open_answering_fits(state)
    return _open_answering_outcome(state, now, _seconds(action.args.get("seconds"), state.answer_seconds))


def _open_answering_outcome(state: LiveState, now: datetime, seconds: int | None) -> Outcome:
    outcome = Outcome()
    _move(
        state,
        outcome,
        Phase.ANSWERING,
        state.round,
        state.position,
        now + timedelta(seconds=seconds) if seconds else None,
    )
    return outcome


def _extend_fits(state: LiveState) -> None:
    _phase(state, Phase.ANSWERING, Phase.VOTING, doing="extend the time")


def _extend(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    _extend_fits(state)
    seconds = _seconds(action.args.get("seconds"), None)
    _require(seconds is not None, "bad_seconds", "say by how many seconds")
    start = state.deadline if state.deadline and state.deadline > now else now
    outcome = Outcome()
    _move(state, outcome, state.phase, state.round, state.position, start + timedelta(seconds=seconds))
    return outcome


def _close_answering_fits(state: LiveState) -> None:
    _phase(state, Phase.ANSWERING, doing="close answering")


def _close_answering(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    _close_answering_fits(state)
    return _close_answering_outcome(state, now)


def _close_answering_outcome(state: LiveState, now: datetime) -> Outcome:
    item = state.current_question
    outcome = Outcome(effects=[MarkQuestion(item.id, "answers_closed_at", now)])
    _move(state, outcome, Phase.ANSWERS_CLOSED, state.round, state.position, None)
    outcome.announce = lambda after: [Message("host", "tells", audiences.host_tells(after, item))]
    return outcome


def _edit_answer(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    # Only once answering is closed: a player answering again would otherwise undo the host's redaction.
    _phase(state, Phase.ANSWERS_CLOSED, doing="edit an answer (after answering closes, before the reveal)")
    item = state.current_question
    player = action.args.get("player")
    answer = state.answers.get(item.id, {}).get(player)
    _require(answer is not None, "no_answer", f"player {player!r} has no answer to this question")
    redact = action.args.get("redact") is True
    text = "" if redact else _text(action.args.get("text"), "text", required=True)
    _require(
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


def _reveal_fits(state: LiveState) -> None:
    _phase(state, Phase.ANSWERS_CLOSED, doing="reveal the answers")


def _reveal(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    _reveal_fits(state)
    item = state.current_question
    aliases = list(state.round_info[state.round].aliases.values())
    order = tuple(answer_order(state.seed, item.round, item.position, aliases))
    outcome = Outcome(effects=[MarkQuestion(item.id, "revealed_at", now, order)])
    _move(state, outcome, Phase.JUDGING, state.round, state.position, None)

    def announce(after: LiveState) -> list[Message]:
        shown = audiences.revealed_answers(after, item)  # all answers of the question, in one message
        return [
            Message("juror", "answers", shown),
            Message("stage", "answers", shown),
            Message("host", "answers", shown),
        ]

    outcome.announce = announce
    return outcome


def _open_vote_fits(state: LiveState) -> None:
    _phase(state, Phase.JUDGING, Phase.ROUND, doing="open the vote")
    remaining = [q for q in state.round_questions(state.round) if not q.revealed_at]
    _require(
        not remaining,
        "questions_left",
        f"round {state.round} still has {len(remaining)} question(s) to show and reveal",
    )


def _open_vote(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    _open_vote_fits(state)
    seconds = _seconds(action.args.get("seconds"), state.vote_seconds)
    outcome = Outcome(effects=[MarkRound(state.round, "vote_opened_at", now)])
    _move(
        state, outcome, Phase.VOTING, state.round, state.position, now + timedelta(seconds=seconds) if seconds else None
    )
    outcome.announce = _vote_count_messages
    return outcome


def _vote_count_messages(state: LiveState) -> list[Message]:
    payload = audiences.vote_count(state)
    return [Message("host", "votes", payload, replaces="votes"), Message("stage", "votes", payload, replaces="votes")]


def _close_vote_fits(state: LiveState) -> None:
    _phase(state, Phase.VOTING, doing="close the vote")


def _close_vote(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    _close_vote_fits(state)
    return _close_vote_outcome(state, now, tally)


def _close_vote_outcome(state: LiveState, now: datetime, tally: Tally) -> Outcome:
    result = tally(state, state.round)
    outcome = Outcome(effects=[MarkRound(state.round, "vote_closed_at", now), SetTally(state.round, result)])
    _move(state, outcome, Phase.VOTE_CLOSED, state.round, state.position, None)
    outcome.announce = lambda after: [Message("host", "tally", result)]
    return outcome


def _show_tally_fits(state: LiveState) -> None:
    _phase(state, Phase.VOTE_CLOSED, doing="show the tally")


def _show_tally(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    _show_tally_fits(state)
    outcome = Outcome()
    _move(state, outcome, Phase.TALLY, state.round, state.position, None)
    shown = audiences.blind_tally(state.round_info[state.round].tally)
    outcome.announce = lambda after: [Message("juror", "tally", shown), Message("stage", "tally", shown)]
    return outcome


def _reveal_identities_fits(state: LiveState) -> None:
    _phase(state, Phase.TALLY, doing="reveal identities")
    _require(
        state.reveal_policy is RevealPolicy.PER_ROUND,
        "reveal_policy",
        "this session reveals identities only at the end (reveal policy 'end')",
    )


def _reveal_identities(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    _reveal_identities_fits(state)
    result = state.round_info[state.round].tally
    top = [row["player_id"] for row in result["players"] if row["votes"] and row["votes"] == result["top_votes"]]
    outcome = Outcome(effects=[RevealIdentity(state.round, pid, now) for pid in top])
    _move(state, outcome, Phase.IDENTITIES, state.round, state.position, None)
    number = state.round
    outcome.announce = lambda after: _to_everyone("identities", audiences.identities(after, number))
    return outcome


def _finish_fits(state: LiveState) -> None:
    """The session is over: the last round's vote has closed (``force`` stops it earlier: see ``_finish``)."""
    over = state.round == state.rounds and state.phase in (Phase.VOTE_CLOSED, Phase.TALLY, Phase.IDENTITIES)
    _require(
        over, "not_over", "the session is not over: finish after the last round's vote (or with force to stop early)"
    )


def _finish(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    forced = action.args.get("force") is True and state.phase is not Phase.FINISHED
    if not forced:
        _finish_fits(state)
    outcome = Outcome()
    for number, info in sorted(state.round_info.items()):
        for player_id in sorted(info.aliases):
            if player_id not in info.revealed:
                outcome.effects.append(RevealIdentity(number, player_id, now))
    _move(state, outcome, Phase.FINISHED, state.round, state.position, None)
    outcome.announce = lambda after: [
        message
        for number, info in sorted(after.round_info.items())
        if info.revealed
        for message in _to_everyone("identities", audiences.identities(after, number))
    ]
    return outcome


def _set_open_join(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    """Open or close open join; ``cap`` (0: none) and ``door`` (the stage's door code needed) when given."""
    value = action.args.get("open")
    _require(isinstance(value, bool), "bad_field", "open must be true or false")
    cap = _whole(action.args.get("cap"), "cap", 0, MAX_JURORS)
    door = action.args.get("door")
    _require(door is None or isinstance(door, bool), "bad_field", "door must be true or false")
    effect = SetOpenJoin(
        value, state.open_join_cap if cap is None else (cap or None), state.join_door if door is None else door
    )
    return Outcome(effects=[effect], status_changed=True)


# --- players and jurors -----------------------------------------------------------------------


def _answer(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    _require(state.phase is Phase.ANSWERING, "answering_closed", "answering is closed")
    item = state.current_question
    _require(action.args.get("question") == item.id, "wrong_question", "that is not the question being answered now")
    player = action.actor.id
    _require(player in state.participants(state.round), "not_playing", "you do not play in this round")
    earlier = state.answers.get(item.id, {}).get(player)
    # The host entered it because the agent had failed: a late answer from the agent must not undo that.
    _require(not (earlier and earlier.entered_by_host), "host_answered", "the host has entered this answer; it stays")
    text, choice = _answer_fields(item, action.args)
    provenance = action.args.get("provenance")
    if provenance is not None:
        _require(
            state.players[player].kind is PlayerKind.AI, "not_ai", "only an AI player's answer carries a provenance"
        )
        provenance = _provenance(provenance)
    return _saved_answer(state, item, player, text, choice, action.client_key or "", now, provenance, False)


def _answer_fields(item: QuestionInfo, args: dict[str, Any]) -> tuple[str, int | None]:
    """(text, choice) of an answer: an option of a multiple-choice question, else text."""
    if item.type is QuestionType.MCQ:
        return "", _whole(args.get("choice"), "choice", 0, len(item.choices) - 1, optional=False)
    return _text(args.get("text"), "text", required=True), None


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
    outcome.announce = lambda after: [
        Message("host", "answer", audiences.host_answer(after, item, after.answers[item.id][player]))
    ]
    return outcome


def _provenance(value: Any) -> dict[str, Any]:
    """``{backend, model, settings}``: which program produced an AI player's answer (checked again here:
    the wire schema checks it too, but the engine takes actions from other callers)."""
    _require(
        isinstance(value, dict) and set(value) <= {"backend", "model", "settings"},
        "bad_field",
        "provenance must be an object with backend, model and settings",
    )
    backend, model, settings = value.get("backend"), value.get("model"), value.get("settings") or {}
    _require(
        isinstance(backend, str) and 0 < len(backend.strip()) <= MAX_BACKEND,
        "bad_field",
        f"provenance.backend must be text of 1 to {MAX_BACKEND} characters",
    )
    _require(model is None or isinstance(model, str), "bad_field", "provenance.model must be text or null")
    _require(isinstance(settings, dict), "bad_field", "provenance.settings must be an object")
    kept = {"backend": backend.strip(), "model": model, "settings": settings}
    size = len(json.dumps(kept, ensure_ascii=False, default=str))
    _require(size <= MAX_PROVENANCE, "too_long", f"provenance is {size} characters as JSON; at most {MAX_PROVENANCE}")
    return kept


def _answer_for(state: LiveState, action: Action, *, doing: str) -> tuple[QuestionInfo, int]:
    """The current question and the player whose answer the host gives for them (``question``, if given, must be
    the current one), while answering is open or closed, before the reveal."""
    _phase(
        state,
        Phase.ANSWERING,
        Phase.ANSWERS_CLOSED,
        doing=f"{doing} (while answering is open or closed, before the reveal)",
    )
    item = state.current_question
    asked = action.args.get("question")
    _require(asked is None or asked == item.id, "wrong_question", "that is not the question being answered now")
    player = action.args.get("player")
    _require(player in state.players, "unknown_player", f"this session has no player {player!r}")
    return item, player


def _enter_answer(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    """The host types (or imports from a predictions file) the answer of an AI player whose agent failed."""
    item, player = _answer_for(state, action, doing="enter an AI player's answer")
    _require(
        state.players[player].kind is PlayerKind.AI,
        "not_ai",
        f"{state.players[player].name} is not an AI player: only an AI player's answer can be entered",
    )
    _require(
        player in state.participants(state.round),
        "not_playing",
        f"{state.players[player].name} does not play in this round",
    )
    text, choice = _answer_fields(item, action.args)
    source = action.args.get("source") or "typed"
    _require(source in ANSWER_SOURCES, "bad_field", f"source must be one of {', '.join(ANSWER_SOURCES)}")
    file = action.args.get("file")
    _require(
        file is None or (isinstance(file, str) and len(file) <= MAX_FILE_NAME),
        "bad_field",
        f"file must be a file name of at most {MAX_FILE_NAME} characters",
    )
    provenance = {"backend": "host", "model": None, "settings": {"source": source, "file": file}}
    return _saved_answer(state, item, player, text, choice, action.client_key or "", now, provenance, True)


# A recording's file name, as the upload view makes it: session, question, player and the action's id.
RECORDING_FILE = r"^[0-9]+-[0-9]+-[0-9]+-[A-Za-z0-9_-]{1,64}\.[a-z0-9]{2,5}$"


def _recorded(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    """A spoken answer's recording is on the server's disk (the upload view wrote it, then sent this): kept as the
    player's latest take, for the host to hear and transcribe.  It is not an answer until the host confirms one."""
    _require(state.phase is Phase.ANSWERING, "answering_closed", "answering is closed")
    item = state.current_question
    _require(action.args.get("question") == item.id, "wrong_question", "that is not the question being answered now")
    player = state.players[action.actor.id]
    _require(
        AnswerMode.SPOKEN.value in player.answer_modes,
        "not_spoken",
        "only a player who answers aloud (answer mode spoken) sends recordings",
    )
    _require(player.id in state.participants(state.round), "not_playing", "you do not play in this round")
    args = action.args
    file, mime = args.get("file"), args.get("mime")
    _require(isinstance(file, str) and re.fullmatch(RECORDING_FILE, file), "bad_field", "file must be a recording")
    _require(mime in RECORDING_TYPES, "bad_field", f"mime must be one of {', '.join(sorted(RECORDING_TYPES))}")
    size = _whole(args.get("size"), "size", 1, MAX_RECORDING_BYTES, optional=False)
    duration = _whole(args.get("duration_ms"), "duration_ms", 0, MAX_RECORDING_SECONDS * 1000)
    ended = args.get("ended_at")
    try:
        ended_at = datetime.fromisoformat(ended) if isinstance(ended, str) else None
    except ValueError:
        ended_at = None
    _require(ended_at is not None and ended_at.tzinfo is not None, "bad_field", "ended_at must be an ISO time")
    # The page's word on when it stopped, kept inside what the server saw: after the question, not after now.
    ended_at = min(max(ended_at, item.shown_at or ended_at), now)
    effect = SaveRecording(item.id, player.id, file, mime, size, duration, ended_at, action.client_key or "", now)
    outcome = Outcome(effects=[effect], reply={"question": item.id, "file": file})
    outcome.announce = lambda after: [Message("host", "recording", audiences.host_recording(after, item, player.id))]
    return outcome


def _confirm_spoken(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    """The host heard a spoken answer's latest recording and confirms what it says (typed, or a transcription
    backend's suggestion, corrected or not; for a multiple-choice question the option said): saved as the player's
    answer, answered when the recording ended, with its provenance."""
    item, player = _answer_for(state, action, doing="confirm a spoken answer")
    name = state.players[player].name
    recording = state.recordings.get(item.id, {}).get(player)
    _require(recording is not None, "no_recording", f"{name} has sent no recording for this question")
    _require(
        action.args.get("file") == recording.file,
        "stale_recording",
        f"{name} has recorded again since: listen to the latest recording first",
    )
    text, choice = _answer_fields(item, action.args)
    transcribed_by = action.args.get("transcribed_by") or "host"
    _require(
        isinstance(transcribed_by, str) and len(transcribed_by) <= MAX_TRANSCRIBER,
        "bad_field",
        f"transcribed_by must be text of at most {MAX_TRANSCRIBER} characters",
    )
    provenance = {
        "spoken": True,
        "recording": recording.file,
        "transcribed_by": transcribed_by,
        "recording_ended_at": audiences.iso(recording.ended_at, "milliseconds"),
    }
    key = action.client_key or ""
    return _saved_answer(state, item, player, text, choice, key, now, provenance, True, recording.ended_at)


def _agent_status(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    """An AI player's agent says how it is doing (ready, working, answered, error): for the host's screen."""
    player = action.actor.id
    _require(state.players[player].kind is PlayerKind.AI, "not_ai", "only an AI player's agent reports a status")
    status = action.args.get("status")
    _require(status in AGENT_STATUSES, "bad_field", f"status must be one of {', '.join(AGENT_STATUSES)}")
    message = "" if action.args.get("message") is None else action.args.get("message")
    _require(isinstance(message, str), "bad_field", "message must be text")
    _require(len(message) <= MAX_AGENT_MESSAGE, "too_long", f"message is longer than {MAX_AGENT_MESSAGE} characters")
    outcome = Outcome(effects=[SetAgentStatus(player, status, message, now)])
    outcome.announce = lambda after: [Message("host", "agent", audiences.host_agent(after, player))]
    return outcome


def _notice(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    """A read-aloud player's page says it has no voice for its language (the host reads aloud instead), or that it
    has one after all: for the host's console only (answer modes never reach the jury or the stage)."""
    player = state.players[action.actor.id]
    _require(
        AnswerMode.READ_ALOUD.value in player.answer_modes,
        "not_read_aloud",
        "only a player whose page reads aloud (answer mode read_aloud) reports on its voice",
    )
    notice = action.args.get("notice")
    _require(notice in SPEECH_NOTICES, "bad_field", f"notice must be one of {', '.join(SPEECH_NOTICES)}")
    language = action.args.get("language")
    _require(
        isinstance(language, str) and len(language) <= MAX_LANGUAGE_TAG and re.fullmatch(LANGUAGE_TAG, language),
        "bad_field",
        "language must be a language tag such as ko or en-GB",
    )
    outcome = Outcome(effects=[SetSpeechNotice(player.id, notice, language, now)])
    outcome.announce = lambda after: [Message("host", "notice", audiences.host_notice(after, player.id))]
    return outcome


def _sheet(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    """One judgment-sheet line, or several in ``lines`` (a page saves all the lines typed since its last save
    in one message); all of them are saved or none."""
    _require(state.phase is not Phase.FINISHED, "finished", "the session has finished: the sheet is final")
    lines = action.args.get("lines")
    if lines is None:
        lines = [action.args]
    _require(
        isinstance(lines, list) and 1 <= len(lines) <= MAX_SHEET_LINES,
        "bad_field",
        f"lines must be a list of 1 to {MAX_SHEET_LINES} sheet lines",
    )
    return Outcome(effects=[_sheet_line(state, action, line, now) for line in lines])


def _sheet_line(state: LiveState, action: Action, args: dict[str, Any], now: datetime) -> SaveSheet:
    _require(isinstance(args, dict), "bad_field", "a sheet line must be an object")
    item = state.questions.get(args.get("question"))
    _require(
        item is not None and item.round == state.round and item.revealed_at is not None,
        "not_revealed",
        "that question's answers are not in front of the jury",
    )
    info = state.round_info[item.round]
    _require(info.vote_closed_at is None, "round_closed", "this round's vote is closed: the sheet is final")
    player = info.player_of(args.get("alias"))
    _require(player is not None, "unknown_alias", f"no player is called {args.get('alias')!r} in this round")
    likeness = _whole(args.get("human_likeness"), "human_likeness", 1, 5)
    marked = args.get("looks_like_ai", False)
    _require(isinstance(marked, bool), "bad_field", "looks_like_ai must be true or false")
    return SaveSheet(
        action.actor.id,
        item.id,
        player,
        args["alias"],
        _text(args.get("note"), "note"),
        likeness,
        marked,
        action.client_key or "",
        now,
    )


def _vote(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    args = action.args
    _require(
        state.phase is Phase.VOTING and args.get("round") == state.round,
        "vote_closed",
        "voting is closed" if state.phase is not Phase.VOTING else f"the vote open now is round {state.round}'s",
    )
    slot = _whole(args.get("slot", 1), "slot", 1, state.ai_votes_per_juror, optional=False)
    alias = args.get("alias")
    info = state.round_info[state.round]
    player = None
    if alias is not None:
        player = info.player_of(alias)
        _require(player is not None, "unknown_alias", f"no player is called {alias!r} in this round")
        others = state.votes.get(action.actor.id, {})
        _require(
            all(v.player_id != player for s, v in others.items() if s != slot),
            "named_twice",
            f"you have already named {alias} in another slot",
        )
    confidence = _whole(args.get("confidence"), "confidence", 1, 5)
    effect = SaveVote(
        state.round,
        action.actor.id,
        slot,
        player,
        alias,
        confidence,
        _text(args.get("reason"), "reason"),
        action.client_key or "",
        now,
    )
    return Outcome(effects=[effect], announce=_vote_count_messages)


def _join(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    """An open join.  ``door_ok`` is set by the server (never by a client): the stage's door code was given."""
    _require(state.open_join, "join_closed", "this session does not take open joins")
    _require(state.phase is not Phase.FINISHED, "finished", "the session has finished")
    _require(
        not state.join_door or action.args.get("door_ok") is True,
        "door_code",
        "enter the door code shown on the stage screen",
    )
    _require(
        state.open_join_cap is None or state.open_jurors < state.open_join_cap,
        "join_full",
        f"this session's open join is full ({state.open_join_cap} jurors): ask the host",
    )
    nickname = _text(action.args.get("nickname"), "nickname", required=True)[:30]
    label, number = nickname, 2
    while label in state.juror_labels:
        label, number = f"{nickname} ({number})", number + 1
    token = secrets.token_urlsafe(18)
    outcome = Outcome(effects=[AddJuror(label, token, "open")], reply={"label": label, "token": token})
    outcome.announce = lambda after: [
        Message("host", "juror", {"label": label, "open": True, "removed": False, "joined_at": audiences.iso(now)})
    ]
    return outcome


def _remove_juror(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    """The host removes a juror (an open-join stranger, a lost phone): their link stops working, they can no
    longer act, and their votes leave the tally (the event log keeps them)."""
    label = action.args.get("juror")
    _require(
        isinstance(label, str) and label in state.juror_ids, "unknown_juror", f"this session has no juror {label!r}"
    )
    juror_id = state.juror_ids[label]
    _require(juror_id not in state.removed_jurors, "already_removed", f"{label} was already removed")
    outcome = Outcome(
        effects=[RemoveJuror(juror_id, secrets.token_urlsafe(18), now)],
        reply={"disconnect": {"role": "juror", "id": juror_id}},
    )

    def announce(after: LiveState) -> list[Message]:
        messages = [Message("host", "juror", {"label": label, "removed": True})]
        return messages + (_vote_count_messages(after) if after.phase is Phase.VOTING else [])

    outcome.announce = announce
    return outcome


def _new_link(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    """A person's link replaced by a new one (a link sent to the wrong person, a lost phone): the old link stops
    working and its open pages are disconnected."""
    player, juror = action.args.get("player"), action.args.get("juror")
    _require((player is None) != (juror is None), "bad_field", "give either player (an id) or juror (a label)")
    if player is not None:
        _require(player in state.players, "unknown_player", f"this session has no player {player!r}")
        role, person = "player", player
    else:
        _require(
            isinstance(juror, str) and juror in state.juror_ids, "unknown_juror", f"this session has no juror {juror!r}"
        )
        role, person = "juror", state.juror_ids[juror]
        _require(person not in state.removed_jurors, "already_removed", f"{juror} was removed")
    token = secrets.token_urlsafe(18)
    return Outcome(
        effects=[RenewToken(role, person, token)], reply={"token": token, "disconnect": {"role": role, "id": person}}
    )


_HANDLERS: dict[str, Callable[..., Outcome]] = {
    "open_lobby": _open_lobby,
    "start_round": _start_round,
    "set_participants": _set_participants,
    "show_question": _show_question,
    "play_clip": _play_clip,
    "open_answering": _open_answering,
    "extend": _extend,
    "close_answering": _close_answering,
    "edit_answer": _edit_answer,
    "reveal": _reveal,
    "open_vote": _open_vote,
    "close_vote": _close_vote,
    "show_tally": _show_tally,
    "reveal_identities": _reveal_identities,
    "finish": _finish,
    "set_open_join": _set_open_join,
    "remove_juror": _remove_juror,
    "new_link": _new_link,
    "enter_answer": _enter_answer,
    "confirm_spoken": _confirm_spoken,
    "answer": _answer,
    "recorded": _recorded,
    "agent": _agent_status,
    "notice": _notice,
    "sheet": _sheet,
    "vote": _vote,
    "join": _join,
}

# The moves of the flow with their preconditions, ranked: when several fit at once, the earlier one is the move a
# host normally takes (the tally and the identities before the next round, closing before extending, the clip
# before opening answering without it).
FLOW_MOVES: dict[str, Callable[[LiveState], None]] = {
    "open_lobby": _open_lobby_fits,
    "show_tally": _show_tally_fits,
    "reveal_identities": _reveal_identities_fits,
    "start_round": _start_round_fits,
    "finish": _finish_fits,
    "show_question": _show_question_fits,
    "open_vote": _open_vote_fits,
    "reveal": _reveal_fits,
    "close_answering": _close_answering_fits,
    "close_vote": _close_vote_fits,
    "extend": _extend_fits,
    "play_clip": _play_clip_fits,
    "open_answering": _open_answering_fits,
}


def host_moves(state: LiveState) -> list[str]:
    """The moves of the flow that fit ``state``, the usual one first: the host console's buttons, the host bot's
    choice.  A move is listed when the precondition its handler checks holds (its arguments are checked when it
    is made); ``finish`` with ``force``, which stops a session at any time, is not a move of the flow."""
    return [name for name, fits in FLOW_MOVES.items() if _holds(fits, state)]


def _holds(fits: Callable[[LiveState], None], state: LiveState) -> bool:
    try:
        fits(state)
    except Refusal:
        return False
    return True


# Who may send which action is the protocol's word (vtt.protocol.vocabulary); a named action without a
# handler here fails at import.
_ROLE_OF = {
    **dict.fromkeys(HOST_ACTIONS, "host"),
    **dict.fromkeys(PLAYER_ACTIONS, "player"),
    **dict.fromkeys(JUROR_ACTIONS, "juror"),
    **dict.fromkeys(GUEST_ACTIONS, "guest"),
}
if _ROLE_OF.keys() != _HANDLERS.keys():
    raise ImportError(f"actions without a handler or a role: {sorted(_ROLE_OF.keys() ^ _HANDLERS.keys())}")
