"""Who is on the jury: an open join, the host's open-join settings, a juror removed, a person's new link."""

from __future__ import annotations

import secrets
from datetime import datetime

from ..kinds import Phase
from . import audiences
from .actions import Action, Message, Outcome, Tally, declare, declare_host
from .checks import require, trimmed_text
from .state import AddJuror, LiveState, RemoveJuror, RenewToken, SetOpenJoin, SetTally
from .voting import vote_count_messages


@declare("join", roles=("guest",), schema=None)  # sent by the server for a connect or the join page
def _join(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    """An open join.  ``door_ok`` is set by the server (never by a client): the stage's door code was given."""
    require(state.open_join, "join_closed", "this session does not take open joins")
    require(state.phase is not Phase.FINISHED, "finished", "the session has finished")
    require(
        not state.join_door or action.args.get("door_ok") is True,
        "door_code",
        "enter the door code shown on the stage screen",
    )
    require(
        state.open_join_cap is None or state.open_jurors < state.open_join_cap,
        "join_full",
        f"this session's open join is full ({state.open_join_cap} jurors): ask the host",
    )
    nickname = trimmed_text(action.args.get("nickname"), "nickname", required=True)[:30]
    label, number = nickname, 2
    while label in state.juror_labels:
        label, number = f"{nickname} ({number})", number + 1
    token = secrets.token_urlsafe(18)
    outcome = Outcome(effects=[AddJuror(label, token, "open")], reply={"label": label, "token": token})
    outcome.announce = lambda after: [
        Message(
            "host",
            "juror",
            {"label": label, "open": True, "removed": False, "joined_at": audiences.protocol_timestamp(now)},
        )
    ]
    return outcome


@declare_host("set_open_join")
def _set_open_join(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    """Open or close open join; ``cap`` (0: none) and ``door`` (the stage's door code needed) when given."""
    value = action.args.get("open")
    require(value is not None, "bad_field", "open must be true or false")  # the host's message may leave it out
    require(state.phase is not Phase.FINISHED, "finished", "the session has finished: no one can join it any more")
    cap, door = action.args.get("cap"), action.args.get("door")
    effect = SetOpenJoin(
        value, state.open_join_cap if cap is None else (cap or None), state.join_door if door is None else door
    )
    return Outcome(effects=[effect], status_changed=True)


@declare_host("remove_juror")
def _remove_juror(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    """The host removes a juror (an open-join stranger, a lost phone): their link stops working, they can no
    longer act, and their votes leave the tally (the event log keeps them)."""
    label = action.args.get("juror")
    require(label in state.juror_ids, "unknown_juror", f"this session has no juror {label!r}")
    juror_id = state.juror_ids[label]
    require(juror_id not in state.removed_jurors, "already_removed", f"{label} was already removed")
    # A round whose vote has closed keeps its tally: recounted without the juror, so it agrees with the report.
    recounts = {}
    for number, info in sorted(state.round_info.items()):
        if info.tally is not None:
            recount = tally(state, number, frozenset({juror_id}))
            if recount is not None and recount != info.tally:
                recounts[number] = recount
    outcome = Outcome(
        effects=[
            RemoveJuror(juror_id, secrets.token_urlsafe(18), now),
            *(SetTally(number, recount) for number, recount in recounts.items()),
        ],
        reply={"disconnect": {"role": "juror", "id": juror_id}},
        status_changed=bool(recounts),
    )

    def announce(after: LiveState) -> list[Message]:
        messages = [Message("host", "juror", {"label": label, "removed": True})]
        if after.round in recounts:  # the host's tally card, and the room's if the tally is on screen
            messages.append(Message("host", "tally", recounts[after.round]))
            if after.phase in audiences.TALLY_SHOWN:
                shown = audiences.blind_tally(recounts[after.round])
                messages += [Message("juror", "tally", shown), Message("stage", "tally", shown)]
        return messages + (vote_count_messages(after) if after.phase is Phase.VOTING else [])

    outcome.announce = announce
    return outcome


@declare_host("new_link")
def _new_link(state: LiveState, action: Action, now: datetime, tally: Tally) -> Outcome:
    """A person's link replaced by a new one (a link sent to the wrong person, a lost phone): the old link stops
    working and its open pages are disconnected."""
    player, juror = action.args.get("player"), action.args.get("juror")
    require((player is None) != (juror is None), "bad_field", "give either player (an id) or juror (a label)")
    if player is not None:
        require(player in state.players, "unknown_player", f"this session has no player {player!r}")
        role, person = "player", player
    else:
        require(juror in state.juror_ids, "unknown_juror", f"this session has no juror {juror!r}")
        role, person = "juror", state.juror_ids[juror]
        require(person not in state.removed_jurors, "already_removed", f"{juror} was removed")
    token = secrets.token_urlsafe(18)
    return Outcome(
        effects=[RenewToken(role, person, token)], reply={"token": token, "disconnect": {"role": role, "id": person}}
    )
