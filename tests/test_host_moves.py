"""The host's moves come from the rules: ``host_moves(state)`` lists exactly the moves of the flow that fit.

Whole sessions are played through ``decide``, the host taking the first listed move each time (a clip is played
once).  At every state on the way each host action is tried on a copy: a listed move must be accepted, and an
accepted action that moves the flow (its phase or its deadline: a ``SetPhase`` effect) must be listed.  The host's
status carries the moves; no one else's does.
"""

from __future__ import annotations

import copy
from datetime import timedelta

import pytest

from tests.support.engine import JURORS, T0, make_state
from tests.support.live import client_id, connect_all, make_session
from vtt.engine import audiences
from vtt.engine.actions import HOST, Action, Actor, Refusal
from vtt.engine.rules import decide, host_moves
from vtt.engine.state import LiveState, SetPhase
from vtt.kinds import ClipPlayback, Phase, QuestionType, RevealPolicy
from vtt.persistence.tally import round_tally
from vtt.protocol.vocabulary import HOST_ACTIONS

TRIAL_ARGS = {"extend": {"seconds": 30}}  # the one move that cannot be made without an argument

ANSWERING = ("answering", ["close_answering", "extend", "play_clip"])
# Once the clip has played, opening answering is the usual move and a replay comes last.
QUESTION = [
    ("clip", ["play_clip", "open_answering"]),
    ("clip", ["open_answering", "play_clip"]),
    ANSWERING,
    ("answers_closed", ["reveal"]),
]
VOTE = [("judging", ["open_vote"]), ("voting", ["close_vote", "extend"])]


def checked_moves(state: LiveState, now) -> list[str]:
    """``host_moves(state)``, checked against ``decide`` for every host action (each on a copy of the state)."""
    moves = host_moves(state)
    for name in HOST_ACTIONS:
        trial = copy.deepcopy(state)
        try:
            (outcome,) = decide(trial, Action(HOST, name, dict(TRIAL_ARGS.get(name, {}))), now, round_tally)
        except Refusal as refusal:
            assert name not in moves, f"{name} is listed at {state.phase.value} but refused: {refusal.message}"
            continue
        moved = any(isinstance(effect, SetPhase) for effect in outcome.effects)
        assert name in moves or not moved, f"{name} moves the flow at {state.phase.value} but is not listed"
    return moves


def assert_moves_reach_the_host_only(state: LiveState, messages) -> None:
    statuses = {message.audience: message.payload for message in messages if message.event == "status"}
    if statuses:
        assert statuses["host"] == {**audiences.status(state), "moves": host_moves(state)}
        assert statuses["player"] == statuses["juror"] == statuses["stage"] == audiences.status(state)
    assert audiences.host_snapshot(state, host_moves(state))["status"]["moves"] == host_moves(state)
    for snapshot in (
        audiences.stage_snapshot(state),
        audiences.player_snapshot(state, min(state.players)),
        audiences.juror_snapshot(state, "J1", [], []),
    ):
        assert "moves" not in snapshot["status"]


def play(state: LiveState) -> list[tuple[str, list[str]]]:
    """A whole session through ``decide``: every playing player answers, every juror votes, the host takes the
    first listed move (but a clip already played).  The phases and moves seen, each change once."""
    now, seen = T0, []

    def act(actor: Actor, name: str, **args) -> None:
        nonlocal now
        now += timedelta(seconds=1)
        (outcome,) = decide(state, Action(actor, name, args), now, round_tally)  # no deadline runs out
        assert_moves_reach_the_host_only(state, outcome.messages)
        step = (state.phase.value, checked_moves(state, now))
        if seen[-1] != step:
            seen.append(step)

    seen.append((state.phase.value, checked_moves(state, now)))
    while state.phase is not Phase.FINISHED:
        played = state.phase is Phase.CLIP and state.current_question.clip_started_at is not None
        act(HOST, next(move for move in host_moves(state) if not (played and move == "play_clip")))
        if state.phase is Phase.ANSWERING:
            item = state.current_question
            for player in state.participants(state.round):
                answer = {"choice": 1} if item.type is QuestionType.MCQ else {"text": "she is sad"}
                act(Actor("player", player), "answer", question=item.id, **answer)
        if state.phase is Phase.VOTING:
            for juror in JURORS:
                act(Actor("juror", juror), "vote", round=state.round, alias="A")
    return seen


def test_a_session_revealed_round_by_round_offers_every_move_in_turn():
    round_ = [("round", ["show_question"]), *QUESTION, ("judging", ["show_question"]), *QUESTION, *VOTE]
    assert play(make_state(reveal_policy=RevealPolicy.PER_ROUND)) == [
        ("draft", ["open_lobby"]),
        ("lobby", ["start_round"]),
        *round_,
        ("vote_closed", ["show_tally", "start_round"]),
        ("tally", ["reveal_identities", "start_round"]),
        ("identities", ["start_round"]),
        *round_,
        ("vote_closed", ["show_tally", "finish"]),
        ("tally", ["reveal_identities", "finish"]),
        ("identities", ["finish"]),
        ("finished", []),
    ]


def test_with_the_reveal_at_the_end_the_tally_leads_to_the_next_round():
    seen = play(make_state(reveal_policy=RevealPolicy.END))
    after_votes = [step for step in seen if step[0] in ("vote_closed", "tally", "identities", "finished")]
    assert after_votes == [
        ("vote_closed", ["show_tally", "start_round"]),
        ("tally", ["start_round"]),
        ("vote_closed", ["show_tally", "finish"]),
        ("tally", ["finish"]),
        ("finished", []),
    ]


def test_the_host_plays_no_clip_on_devices_nor_a_question_without_one():
    on_devices = make_state()
    on_devices.clip_playback = ClipPlayback.DEVICE
    question = [
        ("clip", ["open_answering"]),
        ("answering", ["close_answering", "extend"]),
        ("answers_closed", ["reveal"]),
    ]
    assert play(on_devices)[2:11] == [
        ("round", ["show_question"]),
        *question,
        ("judging", ["show_question"]),
        *question,
        ("judging", ["open_vote"]),
    ]

    without_a_clip = make_state()
    second = next(item for item in without_a_clip.questions.values() if (item.round, item.position) == (1, 2))
    second.clip_source = None
    assert play(without_a_clip)[2:12] == [
        ("round", ["show_question"]),
        *QUESTION,
        ("judging", ["show_question"]),
        *question,
        ("judging", ["open_vote"]),
    ]


def test_a_round_without_questions_goes_straight_to_the_vote():
    state = make_state()
    for item in [item for item in state.questions.values() if item.round == 2]:
        del state.questions[item.id]
    seen = play(state)
    second_round = seen[seen.index(("identities", ["start_round"])) + 1 :]
    assert second_round[:2] == [("round", ["open_vote"]), ("voting", ["close_vote", "extend"])]


@pytest.mark.each_database
def test_over_socket_io_the_host_s_status_lists_its_moves_and_no_one_else_s_does(app, client, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, reveal="end")
    host, stage, players, jurors = connect_all(app, client, people)
    offered = []
    while host.moves():
        offered.append(host.moves())
        host.host(next(move for move in host.moves() if move not in ("play_clip", "extend")))
        question = players["Mina"].last("question")
        if stage.last("status")["phase"] == "answering":
            answer = {"choice": 1} if question["type"] == "mcq" else {"text": "she is sad"}
            for player in players.values():
                assert player.send("answer", {"id": client_id(), "question": question["id"], **answer})["ok"]
    assert stage.last("status")["phase"] == "finished"
    assert offered == [
        ["open_lobby"],
        ["start_round"],
        ["show_question"],
        ["play_clip", "open_answering"],
        ["close_answering", "extend", "play_clip"],
        ["reveal"],
        ["open_vote"],
        ["close_vote", "extend"],
        ["show_tally", "finish"],
        ["finish"],
    ]
    for role in (stage, *players.values(), *jurors.values()):
        role.received()
        statuses = [m["args"][0] for m in role.seen if m["name"] == "status"]
        assert len(statuses) == len(offered) and all("moves" not in status for status in statuses)


def test_while_the_clip_plays_the_usual_move_is_to_open_answering_not_to_replay():
    state = make_state()
    now = T0
    for name in ("open_lobby", "start_round", "show_question"):
        now += timedelta(seconds=1)
        decide(state, Action(HOST, name, {}), now, round_tally)
    assert host_moves(state) == ["play_clip", "open_answering"]
    decide(state, Action(HOST, "play_clip", {}), now + timedelta(seconds=1), round_tally)
    assert state.phase is Phase.CLIP and state.current_question.clip_started_at is not None
    assert host_moves(state) == ["open_answering", "play_clip"]
