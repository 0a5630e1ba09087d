"""The jury's verdict: the jurors' sheets and votes, and the host's vote, tally, identities and finish."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from ..kinds import Phase, RevealPolicy
from ..protocol.messages import SheetIn, VoteIn
from . import audiences
from .actions import Action, Message, Outcome, Tally, declare, declare_host
from .checks import in_phase, require
from .state import LiveState, MarkRound, RevealIdentity, SaveSheet, SaveVote, SetTally


def _to_everyone(event: str, payload: dict[str, Any]) -> list[Message]:
    return [Message(audience, event, payload) for audience in ("host", "player", "juror", "stage")]


def vote_count_messages(state: LiveState) -> list[Message]:
    """How many jurors have voted: for the host and the stage (a later count replaces an earlier one)."""
    payload = audiences.vote_count(state)
    return [Message("host", "votes", payload, replaces="votes"), Message("stage", "votes", payload, replaces="votes")]


# --- the host's moves -------------------------------------------------------------------------------


def _open_vote_fits(state: LiveState) -> None:
    in_phase(state, Phase.JUDGING, Phase.ROUND, doing="open the vote")
    remaining = [q for q in state.round_questions(state.round) if not q.revealed_at]
    require(
        not remaining,
        "questions_left",
        f"round {state.round} still has {len(remaining)} question(s) to show and reveal",
    )


@declare_host("open_vote", fits=_open_vote_fits)
def _open_vote(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    seconds = action.args.get("seconds") or state.vote_seconds
    outcome = Outcome(effects=[MarkRound(state.round, "vote_opened_at", now)])
    outcome.move(Phase.VOTING, state.round, state.position, now + timedelta(seconds=seconds) if seconds else None)
    outcome.announce = vote_count_messages
    return outcome


def _close_vote_fits(state: LiveState) -> None:
    in_phase(state, Phase.VOTING, doing="close the vote")


@declare_host("close_vote", fits=_close_vote_fits)
def _close_vote(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    return close_vote_outcome(state, now, tally)


def close_vote_outcome(state: LiveState, now: datetime, tally: Tally) -> Outcome:
    """The vote closes: the round's tally is made, for the host first."""
    result = tally(state, state.round)
    outcome = Outcome(effects=[MarkRound(state.round, "vote_closed_at", now), SetTally(state.round, result)])
    outcome.move(Phase.VOTE_CLOSED, state.round, state.position, None)
    outcome.announce = lambda after: [Message("host", "tally", result)]
    return outcome


def _show_tally_fits(state: LiveState) -> None:
    in_phase(state, Phase.VOTE_CLOSED, doing="show the tally")


@declare_host("show_tally", fits=_show_tally_fits)
def _show_tally(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    outcome = Outcome()
    outcome.move(Phase.TALLY, state.round, state.position, None)
    shown = audiences.blind_tally(state.round_info[state.round].tally)
    outcome.announce = lambda after: [Message("juror", "tally", shown), Message("stage", "tally", shown)]
    return outcome


def _reveal_identities_fits(state: LiveState) -> None:
    in_phase(state, Phase.TALLY, doing="reveal identities")
    require(
        state.reveal_policy is RevealPolicy.PER_ROUND,
        "reveal_policy",
        "this session reveals identities only at the end (reveal policy 'end')",
    )


@declare_host("reveal_identities", fits=_reveal_identities_fits)
def _reveal_identities(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    result = state.round_info[state.round].tally
    top = [row["player_id"] for row in result["players"] if row["votes"] and row["votes"] == result["top_votes"]]
    outcome = Outcome(effects=[RevealIdentity(state.round, pid, now) for pid in top])
    outcome.move(Phase.IDENTITIES, state.round, state.position, None)
    number = state.round
    outcome.announce = lambda after: _to_everyone("identities", audiences.identities(after, number))
    return outcome


def _finish_fits(state: LiveState) -> None:
    """The session is over: the last round's vote has closed (``force`` stops it earlier: see ``_forced``)."""
    over = state.round == state.rounds and state.phase in (Phase.VOTE_CLOSED, Phase.TALLY, Phase.IDENTITIES)
    require(
        over, "not_over", "the session is not over: finish after the last round's vote (or with force to stop early)"
    )


def _forced(state: LiveState, action: Action) -> bool:
    """``finish`` with ``force`` stops a session that has not finished at any time."""
    return action.args.get("force") is True and state.phase is not Phase.FINISHED


@declare_host("finish", fits=_finish_fits, waived=_forced)
def _finish(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    outcome = Outcome()
    for number, info in sorted(state.round_info.items()):
        for player_id in sorted(info.aliases):
            if player_id not in info.revealed:
                outcome.effects.append(RevealIdentity(number, player_id, now))
    outcome.move(Phase.FINISHED, state.round, state.position, None)
    outcome.announce = lambda after: [
        message
        for number, info in sorted(after.round_info.items())
        if info.revealed
        for message in _to_everyone("identities", audiences.identities(after, number))
    ]
    return outcome


# --- the jurors -------------------------------------------------------------------------------------


@declare("sheet", roles=("juror",), schema=SheetIn)
def _sheet(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    """One judgment-sheet line, or several in ``lines`` (a page saves all the lines typed since its last save
    in one message); all of them are saved or none."""
    require(state.phase is not Phase.FINISHED, "finished", "the session has finished: the sheet is final")
    return Outcome(effects=[_sheet_line(state, action, line, now) for line in sheet_lines(action.args)])


def _sheet_line(state: LiveState, action: Action, line: dict[str, Any], now: datetime) -> SaveSheet:
    item = state.questions.get(line.get("question"))
    require(
        item is not None and item.round == state.round and item.revealed_at is not None,
        "not_revealed",
        "that question's answers are not in front of the jury",
    )
    require(
        state.round_info[item.round].vote_closed_at is None,
        "round_closed",
        "this round's vote is closed: the sheet is final",
    )
    return sheet_line(state, item.round, action.actor.id, item.id, line, action, now, where="this round")


@declare("vote", roles=("juror",), schema=VoteIn)
def _vote(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    require(
        state.phase is Phase.VOTING and action.args.get("round") == state.round,
        "vote_closed",
        "voting is closed" if state.phase is not Phase.VOTING else f"the vote open now is round {state.round}'s",
    )
    juror = action.actor.id
    others = {slot: vote.player_id for slot, vote in state.votes.get(juror, {}).items()}
    effect = vote_effect(state, state.round, juror, others, action, now, where="this round")
    return Outcome(effects=[effect], announce=vote_count_messages)


# --- a juror's sheet line and vote, live or displaced (``vtt.engine.displaced``) -----------------------


def sheet_lines(args: dict[str, Any]) -> list[Any]:
    """A ``sheet`` message's lines: its ``lines``, or the one line of its top-level fields."""
    lines = args.get("lines")
    return [args] if lines is None else lines


def sheet_line(
    state: LiveState,
    number: int,
    juror: int,
    question: int,
    line: dict[str, Any],
    action: Action,
    now: datetime,
    *,
    where: str,
) -> SaveSheet:
    """A juror's sheet line about question ``question`` of round ``number`` (its question already checked)."""
    player = _named(state, number, line.get("alias"), where)
    note = (line.get("note") or "").strip()
    likeness, marked = line.get("human_likeness"), line.get("looks_like_ai", False)
    return SaveSheet(juror, question, player, line["alias"], note, likeness, marked, action.client_key or "", now)


def vote_effect(
    state: LiveState,
    number: int,
    juror: int,
    others: dict[int, int | None],
    action: Action,
    now: datetime,
    *,
    where: str,
) -> SaveVote:
    """A juror's vote in round ``number`` (its round already checked); ``others``: the players they have named
    in that round's slots so far."""
    args = action.args
    slot = args.get("slot", 1)
    require(
        slot <= state.ai_votes_per_juror, "bad_field", f"slot must be from 1 to {state.ai_votes_per_juror} this session"
    )
    alias = args.get("alias")
    player = None
    if alias is not None:
        player = _named(state, number, alias, where)
        require(
            all(named != player for other, named in others.items() if other != slot),
            "named_twice",
            f"you have already named {alias} in another slot",
        )
    confidence, reason = args.get("confidence"), (args.get("reason") or "").strip()
    return SaveVote(number, juror, slot, player, alias, confidence, reason, action.client_key or "", now)


def _named(state: LiveState, number: int, alias: Any, where: str) -> int:
    player = state.round_info[number].player_of(alias)
    require(player is not None, "unknown_alias", f"no player is called {alias!r} in {where}")
    return player
