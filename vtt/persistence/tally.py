"""A round's tally at the close of its vote, computed with the report's statistics (``analysis.votes``).

The live figures and the PDF report agree because both come from ``vote_stats`` over the same
roster: every player of the session, named as in the reports, and the same votes: those that count
(``vtt.persistence.counted``; a juror the host removes after a round closed leaves that round's stored
tally too: :func:`tally_reading_stored_votes`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from sqlalchemy.orm import Session

from ..engine.state import LiveState, VoteInfo
from ..models import Vote
from .counted import live_votes

Ballots = dict[int, dict[int, VoteInfo]]  # juror -> slot -> vote


def round_tally(
    state: LiveState, number: int, without: frozenset[int] = frozenset(), ballots: Ballots | None = None
) -> dict[str, Any] | None:
    """The tally of round ``number`` by the session's pass rule, leaving out the jurors ``without``.

    The votes are ``ballots``, or the ones ``state`` keeps (the current round's); None when neither
    holds the round's votes (an earlier round and no ``ballots``).  A removed juror's are left out, as
    ``counted`` leaves them out of the database's: ``state.removed_jurors`` includes a removal decided
    earlier in the batch, which the database does not have yet."""
    if ballots is None:
        if number != state.round:
            return None
        ballots = state.votes
    left_out = without | state.removed_jurors
    ballots = {juror: slots for juror, slots in ballots.items() if juror not in left_out}
    import pandas as pd  # here, not at the top: pandas and scipy cost a server seconds of start-up

    from analysis.votes import vote_stats

    pass_rule, alpha, threshold_pct = state.pass_rule, state.pass_alpha, state.pass_threshold_pct
    info = state.round_info[number]
    players = pd.DataFrame(
        {"name": [p.name for p in state.players.values()], "kind": [p.kind.value for p in state.players.values()]}
    )
    rows = [
        {
            "round": number,
            "juror": str(juror),
            "slot": slot,
            "vote": state.players[vote.player_id].name if vote.player_id is not None else None,
            "confidence": float(vote.confidence) if vote.confidence is not None else math.nan,
        }
        for juror, slots in ballots.items()
        for slot, vote in slots.items()
    ]
    votes = pd.DataFrame(rows, columns=["round", "juror", "slot", "vote", "confidence"])
    counts = {pid: 0 for pid in info.aliases}
    for slots in ballots.values():
        for vote in slots.values():
            if vote.player_id is not None:
                counts[vote.player_id] = counts.get(vote.player_id, 0) + 1
    cast = sum(counts.values())
    abstentions = sum(1 for slots in ballots.values() for vote in slots.values() if vote.player_id is None)
    top = max(counts.values(), default=0)
    result: dict[str, Any] = {
        "round": number,
        "pass_rule": pass_rule,
        "players": [
            {
                "player_id": pid,
                "name": state.players[pid].name,
                "kind": state.players[pid].kind.value,
                "alias": info.aliases[pid],
                "votes": counts.get(pid, 0),
            }
            for pid in sorted(info.aliases, key=info.aliases.get)
        ],
        "cast": cast,
        "voters": len([j for j, slots in ballots.items() if any(v.player_id is not None for v in slots.values())]),
        "abstentions": abstentions,
        "top_votes": top,
        # a control round: no AI played it, so detection is 0 % by construction (the report counts it the same way)
        "control": not any(state.players[pid].kind.value == "ai" for pid in info.aliases),
        "majority_alias": None,
        "detection_pct": None,
        "ci_low": None,
        "ci_high": None,
        "p_value": None,
        "ai_passed": None,
    }
    if cast:
        row = vote_stats(votes, players, pass_rule, alpha, threshold_pct).rounds.iloc[0]
        majority = row["majority_player"]
        by_name = {state.players[pid].name: alias for pid, alias in info.aliases.items()}
        result.update(
            majority_alias=by_name.get(majority) if majority is not None else None,
            detection_pct=_number(row["detection_pct"]),
            ci_low=_number(row["ci_low"]),
            ci_high=_number(row["ci_high"]),
            p_value=_number(row["p_value"]),
            ai_passed=bool(row["ai_passed"]),
        )
    return result


def _number(value) -> float | None:
    return None if value is None or math.isnan(float(value)) else round(float(value), 6)


def tally_reading_stored_votes(db: Session):
    """:func:`round_tally` that reads an earlier round's votes from the database (in the batch's transaction)."""

    def tally(state: LiveState, number: int, without: frozenset[int] = frozenset()) -> dict[str, Any] | None:
        return round_tally(state, number, without, None if number == state.round else _stored(db, state, number))

    return tally


def _stored(db: Session, state: LiveState, number: int) -> Ballots:
    ballots: Ballots = defaultdict(dict)
    rows = db.execute(
        live_votes(Vote.juror_id, Vote.slot, Vote.player_id, Vote.alias, Vote.confidence, Vote.reason).where(
            Vote.session_id == state.session_id, Vote.round == number
        )
    )
    for juror, slot, player, alias, confidence, reason in rows:
        ballots[juror][slot] = VoteInfo(player, alias, confidence, reason)
    return dict(ballots)
