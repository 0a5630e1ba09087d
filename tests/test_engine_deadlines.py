"""The session engine over plain data: answer and vote deadlines, and the host's screening of a clip.

The helpers (``make_state``, ``Run``, ``assert_blind``) are in ``tests/support/engine.py``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from tests.support.engine import (
    AI,
    H1,
    H2,
    HOST,
    J1,
    J2,
    Q11,
    Run,
    make_state,
)
from vtt.engine import audiences
from vtt.engine.actions import Action, Actor, Outcome, Refusal
from vtt.engine.rules import decide
from vtt.engine.state import AUDIENCES, LogEvent, SetPhase
from vtt.models import ClipPlayback, Phase
from vtt.persistence.tally import round_tally

# --- deadlines -----------------------------------------------------------------------------------


def to_answering(seconds: int = 10, **state_args: Any) -> Run:
    run = Run(make_state(**state_args))
    run.do(HOST, "open_lobby")
    run.do(HOST, "start_round")
    run.do(HOST, "show_question")
    run.do(HOST, "open_answering", seconds=seconds, at=run.at(0))
    return run


def test_late_answer_is_refused_and_the_clock_closes_answering():
    run = to_answering(seconds=10)
    state = run.state
    assert state.phase is Phase.ANSWERING and state.deadline == run.at(10)
    run.do(Actor("player", H1), "answer", question=Q11, choice=1, at=run.at(9))
    assert run.do(HOST, "tick", at=run.at(9.999)) == []  # not yet
    version = state.state_version
    with pytest.raises(Refusal) as caught:
        decide(state, Action(Actor("player", H2), "answer", {"question": Q11, "choice": 2}), run.at(11), round_tally)
    refusal = caught.value
    assert refusal.code == "answering_closed"
    (closed,) = refusal.before
    run.outcomes += refusal.before
    phases = [e for e in closed.effects if isinstance(e, SetPhase)]
    assert [p.phase for p in phases] == [Phase.ANSWERS_CLOSED] and phases[0].deadline is None
    assert any(isinstance(e, LogEvent) and e.kind == "deadline" for e in closed.effects)
    assert state.phase is Phase.ANSWERS_CLOSED and state.deadline is None
    assert state.questions[Q11].answers_closed_at == run.at(11)
    assert state.state_version == version + 1 == closed.reply["state_version"]
    assert state.answers[Q11].keys() == {H1}
    assert any(m.event == "status" and m.payload["phase"] == "answers_closed" for m in closed.messages)
    run.assert_all_blind()


def test_tick_closes_answering_at_the_deadline():
    run = to_answering(seconds=10)
    (closed,) = run.do(HOST, "tick", at=run.at(11))
    assert run.state.phase is Phase.ANSWERS_CLOSED and closed.reply["state_version"] == run.state.state_version
    assert run.do(HOST, "tick", at=run.at(20)) == []  # nothing left to expire
    run.do(HOST, "reveal")


def test_extend_moves_the_answer_deadline():
    run = to_answering(seconds=10)
    run.do(HOST, "extend", seconds=30, at=run.at(5))
    assert run.state.deadline == run.at(40)  # added to the running deadline
    run.do(Actor("player", H1), "answer", question=Q11, choice=1, at=run.at(39))
    run.refuse(HOST, "extend", "invalid", seconds=True, at=run.at(39.5))
    assert run.do(HOST, "tick", at=run.at(40))[0].reply["state_version"] == run.state.state_version
    assert run.state.phase is Phase.ANSWERS_CLOSED


def test_the_session_default_answer_time_applies():
    run = Run(make_state(answer_seconds=20))
    run.do(HOST, "open_lobby")
    run.do(HOST, "start_round")
    run.do(HOST, "show_question")
    run.do(HOST, "open_answering", at=run.at(100))
    assert run.state.deadline == run.at(120)


# --- the host's screening of a clip -------------------------------------------------------------


def statuses(outcome: Outcome) -> dict[str, dict[str, Any]]:
    """The status message of an outcome, per audience (every audience gets the same one)."""
    return {m.audience: m.payload for m in outcome.messages if m.event == "status"}


def test_the_host_plays_the_clip_for_everyone_and_answering_opens_when_it_has_played():
    run = Run(make_state(answer_seconds=20))
    run.do(HOST, "open_lobby")
    run.do(HOST, "start_round")
    run.do(HOST, "show_question", at=run.at(0))
    assert run.state.clip_playback is ClipPlayback.HOST and audiences.status(run.state)["screening"] is None
    (played,) = run.do(HOST, "play_clip", at=run.at(10))
    starts = run.at(11.5)  # SCREENING_LEAD ahead: every page gets the status and seeks first
    assert (
        run.state.questions[Q11].clip_started_at == starts and played.reply["starts_at"] == "2024-05-01T12:00:11.500Z"
    )
    sent = statuses(played)
    assert sent.keys() == set(AUDIENCES)
    assert sent["player"]["screening"] == {"question": Q11, "starts_at": "2024-05-01T12:00:11.500Z"}
    assert sent["player"]["clip_playback"] == "host" and sent["player"]["phase"] == "clip"
    # the span is 1.0-9.5 s: answering opens 8.5 s after the screening starts, by the clock
    assert run.state.deadline == starts + timedelta(seconds=8.5)
    assert run.do(HOST, "tick", at=run.at(19.9)) == []
    (opened,) = run.do(HOST, "tick", at=run.at(20.1))
    assert run.state.phase is Phase.ANSWERING and run.state.deadline == run.at(40.1)  # the session's 20 s
    assert statuses(opened)["juror"]["screening"] == sent["juror"]["screening"]  # still the same screening
    # a replay while the players answer starts the clip again and leaves their time alone
    (replayed,) = run.do(HOST, "play_clip", at=run.at(25))
    assert statuses(replayed)["stage"]["screening"]["starts_at"] == "2024-05-01T12:00:26.500Z"
    assert run.state.phase is Phase.ANSWERING and run.state.deadline == run.at(40.1)
    run.do(Actor("player", H1), "answer", question=Q11, choice=2, at=run.at(30))
    run.do(HOST, "close_answering")
    run.refuse(HOST, "play_clip", "wrong_phase")  # the answers are coming: the screening is over
    run.do(HOST, "reveal")
    run.do(HOST, "show_question")  # the next question: no screening until the host plays its clip
    assert audiences.status(run.state)["screening"] is None
    run.assert_all_blind()


def test_the_host_s_measured_duration_or_no_deadline_for_a_clip_of_unknown_length():
    run = Run(make_state())
    run.do(HOST, "open_lobby")
    run.do(HOST, "start_round")
    run.do(HOST, "show_question", at=run.at(0))
    run.do(HOST, "play_clip", duration=3.25, at=run.at(1))
    assert run.state.deadline == run.at(2.5 + 3.25)  # what the console measured beats the span
    for bad in (0, -1, 3601, True, "8"):
        run.refuse(HOST, "play_clip", "invalid", duration=bad, at=run.at(2))
    run.do(HOST, "open_answering", seconds=30, at=run.at(3))  # the host moves on before the clip ends
    assert run.state.phase is Phase.ANSWERING and run.state.deadline == run.at(33)
    run.do(Actor("player", H1), "answer", question=Q11, choice=2)
    run.do(HOST, "close_answering")
    run.do(HOST, "reveal")
    run.do(HOST, "show_question")  # an open question on a whole scene: no span
    run.do(HOST, "play_clip")
    assert run.state.phase is Phase.CLIP and run.state.deadline is None  # the host opens answering
    assert run.do(HOST, "tick", at=run.at(10**5)) == []


def test_play_clip_is_refused_in_device_mode_without_a_clip_and_outside_the_clip():
    run = Run(make_state())
    run.state.clip_playback = ClipPlayback.DEVICE
    run.do(HOST, "open_lobby")
    run.do(HOST, "start_round")
    run.refuse(HOST, "play_clip", "wrong_phase")  # no question on screen
    run.do(HOST, "show_question")
    refusal = run.refuse(HOST, "play_clip", "clip_playback")
    assert "own device" in refusal.message
    assert audiences.status(run.state)["screening"] is None and audiences.status(run.state)["clip_playback"] == "device"
    run.state.clip_playback = ClipPlayback.HOST
    run.state.current_question.clip_source = None
    assert "no clip" in run.refuse(HOST, "play_clip", "no_clip").message
    run.refuse(Actor("player", H1), "play_clip", "not_allowed")


def to_voting(seconds: int = 30, **state_args: Any) -> Run:
    run = Run(make_state(**state_args))
    run.do(HOST, "open_lobby")
    run.do(HOST, "start_round")
    run.question({H1: {"choice": 1}})
    run.question({AI: {"text": "Because he left."}})
    run.do(HOST, "open_vote", seconds=seconds, at=run.at(1000))
    assert run.state.deadline == run.at(1000 + seconds)
    return run


def test_vote_deadline_runs_the_tally_on_a_tick():
    run = to_voting(seconds=30)
    state = run.state
    run.vote(J1, run.alias(AI), at=run.at(1010))
    run.vote(J2, run.alias(H1), at=run.at(1029))
    (closed,) = run.do(HOST, "tick", at=run.at(1031))
    assert state.phase is Phase.VOTE_CLOSED and state.deadline is None
    assert state.round_info[1].vote_closed_at == run.at(1031)
    tally = state.round_info[1].tally
    assert tally["cast"] == 2 and tally["detection_pct"] == pytest.approx(50.0)
    assert any(m.audience == "host" and m.event == "tally" and m.payload == tally for m in closed.messages)
    run.do(HOST, "show_tally")
    run.assert_all_blind()


def test_late_vote_is_refused_after_the_tally():
    run = to_voting(seconds=30)
    state = run.state
    run.vote(J1, run.alias(AI), at=run.at(1010))
    with pytest.raises(Refusal) as caught:
        decide(
            state, Action(Actor("juror", J2), "vote", {"round": 1, "alias": run.alias(H2)}), run.at(1030), round_tally
        )
    assert caught.value.code == "vote_closed"
    (closed,) = caught.value.before
    run.outcomes += caught.value.before
    run.assert_all_blind()
    assert state.phase is Phase.VOTE_CLOSED and state.round_info[1].tally["cast"] == 1
    assert J2 not in state.votes
    assert [e.round for e in closed.effects if type(e).__name__ == "SetTally"] == [1]


def test_session_default_vote_time_and_no_limit():
    run = to_voting(seconds=45, vote_seconds=90)
    assert run.state.deadline == run.at(1045)  # the host's seconds win over the session's default
    run = Run(make_state(vote_seconds=90))
    run.do(HOST, "open_lobby")
    run.do(HOST, "start_round")
    run.question({})
    run.question({})
    run.do(HOST, "open_vote", at=run.at(0))
    assert run.state.deadline == run.at(90)
    run = Run(make_state())
    run.do(HOST, "open_lobby")
    run.do(HOST, "start_round")
    run.question({})
    run.question({})
    run.do(HOST, "open_vote", at=run.at(0))
    assert run.state.deadline is None
    assert run.do(HOST, "tick", at=run.at(10**6)) == []
    assert run.state.phase is Phase.VOTING
