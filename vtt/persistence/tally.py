"""A round's tally at the close of its vote, computed with part 2's statistics (``analysis.votes``).

The live figures and the PDF report agree because both come from ``vote_stats`` over the same
roster: every player of the session, named as in the reports.
"""

from __future__ import annotations

import math
from typing import Any

from ..engine.state import LiveState


def round_tally(state: LiveState, number: int) -> dict[str, Any]:
    """The tally of round ``number`` from the votes in ``state`` (the current round's), by the session's pass rule."""
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
        for juror, slots in state.votes.items()
        for slot, vote in slots.items()
    ]
    votes = pd.DataFrame(rows, columns=["round", "juror", "slot", "vote", "confidence"])
    counts = {pid: 0 for pid in info.aliases}
    for slots in state.votes.values():
        for vote in slots.values():
            if vote.player_id is not None:
                counts[vote.player_id] = counts.get(vote.player_id, 0) + 1
    cast = sum(counts.values())
    abstentions = sum(1 for slots in state.votes.values() for vote in slots.values() if vote.player_id is None)
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
        "voters": len([j for j, slots in state.votes.items() if any(v.player_id is not None for v in slots.values())]),
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
