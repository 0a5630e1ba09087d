"""The host's moves through the lobby, a round and its questions: the clip, answering, the reveal.

Every shuffle derives from the session's recorded seed: the aliases of a round and the order of a question's
answers can be recomputed from the seed alone.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

from ..kinds import ClipPlayback, Phase
from . import audiences
from .actions import Action, Message, Outcome, Tally, declare_host
from .checks import in_phase, require
from .state import DealAliases, LiveState, MarkQuestion, QuestionInfo, SetParticipants

ALIASES = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
# The host's play reaches every page, which then starts the clip together at a moment this far ahead: long
# enough for the status to arrive and the video to seek on a venue's Wi-Fi.
SCREENING_LEAD = timedelta(seconds=1.5)


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


# Each move of the flow has a precondition, ``_<move>_fits(state)``, raising a refusal when the move does not fit
# the state: the rules check it before the move's handler runs, and ``host_moves`` lists the moves whose
# precondition holds.


def _open_lobby_fits(state: LiveState) -> None:
    in_phase(state, Phase.DRAFT, doing="open the lobby")


@declare_host("open_lobby", fits=_open_lobby_fits)
def _open_lobby(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    outcome = Outcome()
    outcome.move(Phase.LOBBY, None, None, None)
    return outcome


def _start_round_fits(state: LiveState) -> None:
    in_phase(state, Phase.LOBBY, Phase.VOTE_CLOSED, Phase.TALLY, Phase.IDENTITIES, doing="start a round")
    require(
        (state.round or 0) < state.rounds, "no_more_rounds", f"round {state.round} was the last: finish the session"
    )


@declare_host("start_round", fits=_start_round_fits)
def _start_round(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    number = (state.round or 0) + 1
    outcome = Outcome()
    outcome.effects.append(DealAliases(number, tuple(alias_order(state.seed, number, state.participants(number)))))
    outcome.move(Phase.ROUND, number, None, None)
    outcome.announce = lambda after: [
        Message(audience, "round", audiences.round_card(after, number)) for audience in ("juror", "stage")
    ]
    outcome.reply["round"] = number
    return outcome


@declare_host("set_participants")
def _set_participants(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    number = action.args.get("round")
    require(number is not None and number <= state.rounds, "bad_field", f"round must be from 1 to {state.rounds}")
    require(not state.round_info[number].aliases, "round_started", f"round {number} has begun: its players are fixed")
    chosen = action.args.get("players")
    if chosen is not None:
        unknown = sorted(set(chosen) - set(state.players))
        require(not unknown, "unknown_player", f"no player with id {unknown[0] if unknown else ''} in this session")
        require(len(set(chosen)) >= 2, "too_few_players", "a round needs at least two players")
        chosen = tuple(sorted(set(chosen)))
    return Outcome(effects=[SetParticipants(number, chosen)], reply={"round": number})


def _show_question_fits(state: LiveState) -> None:
    in_phase(state, Phase.ROUND, Phase.JUDGING, doing="show the next question")
    require(
        _next_question(state) is not None, "round_done", f"round {state.round} has no more questions: open the vote"
    )


def _next_question(state: LiveState) -> QuestionInfo | None:
    position = (state.position or 0) + 1
    return next((q for q in state.round_questions(state.round) if q.position == position), None)


@declare_host("show_question", fits=_show_question_fits)
def _show_question(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    item = _next_question(state)
    outcome = Outcome(effects=[MarkQuestion(item.id, "shown_at", now)])
    outcome.move(Phase.CLIP, state.round, item.position, None)
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
    in_phase(state, Phase.CLIP, Phase.ANSWERING, doing="play the clip")
    require(
        state.clip_playback is ClipPlayback.HOST,
        "clip_playback",
        "in this session each player plays the clip on their own device (clip_playback 'device')",
    )
    require(bool(state.current_question.clip_source), "no_clip", f"question {state.position} has no clip")


@declare_host("play_clip", fits=_play_clip_fits)
def _play_clip(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    """The host starts (or restarts) the current question's clip on the stage and every player's page at once.

    The screening starts ``SCREENING_LEAD`` from now, in server time; each page corrects for its own clock.
    While the clip phase lasts, answering opens by itself when the clip has played (the host may open it
    earlier); a replay while the players answer changes no deadline."""
    item = state.current_question
    length = _clip_seconds(action.args.get("duration"), item)
    starts = now + SCREENING_LEAD
    outcome = Outcome(effects=[MarkQuestion(item.id, "clip_started_at", starts)], status_changed=True)
    if state.phase is Phase.CLIP:
        outcome.move(Phase.CLIP, state.round, state.position, starts + timedelta(seconds=length) if length else None)
    outcome.reply["starts_at"] = audiences.protocol_timestamp(starts, "milliseconds")
    return outcome


def _clip_seconds(value: Any, item: QuestionInfo) -> float | None:
    """How long the clip plays: what the host's console measured (``duration``), else its span, else unknown."""
    if value is not None:
        return float(value)
    if item.clip_start is not None and item.clip_end is not None:
        return item.clip_end - item.clip_start
    return None


def _open_answering_fits(state: LiveState) -> None:
    in_phase(state, Phase.CLIP, doing="open answering")


@declare_host("open_answering", fits=_open_answering_fits)
def _open_answering(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    return open_answering_outcome(state, now, action.args.get("seconds") or state.answer_seconds)


def open_answering_outcome(state: LiveState, now: datetime, seconds: int | None) -> Outcome:
    """Answering opens for ``seconds`` (None: until the host closes it)."""
    outcome = Outcome()
    outcome.move(Phase.ANSWERING, state.round, state.position, now + timedelta(seconds=seconds) if seconds else None)
    return outcome


def _extend_fits(state: LiveState) -> None:
    in_phase(state, Phase.ANSWERING, Phase.VOTING, doing="extend the time")


@declare_host("extend", fits=_extend_fits)
def _extend(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    seconds = action.args.get("seconds")
    require(seconds is not None, "bad_seconds", "say by how many seconds")
    start = state.deadline if state.deadline and state.deadline > now else now
    outcome = Outcome()
    outcome.move(state.phase, state.round, state.position, start + timedelta(seconds=seconds))
    return outcome


def _close_answering_fits(state: LiveState) -> None:
    in_phase(state, Phase.ANSWERING, doing="close answering")


@declare_host("close_answering", fits=_close_answering_fits)
def _close_answering(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    return close_answering_outcome(state, now)


def close_answering_outcome(state: LiveState, now: datetime) -> Outcome:
    """Answering closes: the host hears of the identity tells in the answers."""
    item = state.current_question
    outcome = Outcome(effects=[MarkQuestion(item.id, "answers_closed_at", now)])
    outcome.move(Phase.ANSWERS_CLOSED, state.round, state.position, None)
    outcome.announce = lambda after: [Message("host", "tells", audiences.host_tells(after, item))]
    return outcome


def _reveal_fits(state: LiveState) -> None:
    in_phase(state, Phase.ANSWERS_CLOSED, doing="reveal the answers")


@declare_host("reveal", fits=_reveal_fits)
def _reveal(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    item = state.current_question
    aliases = list(state.round_info[state.round].aliases.values())
    order = tuple(answer_order(state.seed, item.round, item.position, aliases))
    outcome = Outcome(effects=[MarkQuestion(item.id, "revealed_at", now, order)])
    outcome.move(Phase.JUDGING, state.round, state.position, None)

    def announce(after: LiveState) -> list[Message]:
        shown = audiences.revealed_answers(after, item)  # all answers of the question, in one message
        return [
            Message("juror", "answers", shown),
            Message("stage", "answers", shown),
            Message("host", "answers", shown),
        ]

    outcome.announce = announce
    return outcome
