"""The session engine over plain data: what it refuses through a round, two AI votes per juror, open join.

The helpers (``make_state``, ``Run``, ``assert_blind``) are in ``tests/support/engine.py``.
"""

from __future__ import annotations

from tests.support.engine import (
    AI,
    GUEST,
    H1,
    H2,
    HOST,
    J1,
    J2,
    Q11,
    Q12,
    Q21,
    Run,
    make_state,
)
from vtt.engine.actions import SYSTEM, Actor
from vtt.engine.state import LogEvent, SaveSheet
from vtt.models import Phase
from vtt.protocol.vocabulary import MAX_SHEET_LINES, MAX_TEXT

# --- refusals ----------------------------------------------------------------------------------


def test_refusals_through_a_round():
    run = Run(make_state())
    state = run.state
    player, juror = Actor("player", H1), Actor("juror", J1)

    run.refuse(HOST, "finish", "not_over")
    run.refuse(player, "open_lobby", "not_allowed")
    run.refuse(juror, "start_round", "not_allowed")
    run.refuse(GUEST, "show_question", "not_allowed")
    run.refuse(Actor("player", AI), "finish", "not_allowed", force=True)
    run.refuse(HOST, "answer", "not_allowed", question=Q11, choice=1)
    run.refuse(HOST, "vote", "not_allowed", round=1, alias="A")
    run.refuse(SYSTEM, "close_vote", "not_allowed")
    run.refuse(HOST, "dance", "unknown_action")
    run.refuse(GUEST, "join", "join_closed", nickname="Mallory")
    run.refuse(HOST, "start_round", "wrong_phase")
    run.refuse(HOST, "set_open_join", "invalid", open="yes")
    run.refuse(HOST, "set_participants", "bad_field", round=3, players=None)
    run.refuse(HOST, "set_participants", "unknown_player", round=1, players=[H1, 4242])
    run.refuse(HOST, "set_participants", "too_few_players", round=1, players=[H1, H1])
    run.refuse(HOST, "set_participants", "invalid", round=1, players=[H1, True])

    run.do(HOST, "open_lobby")
    run.refuse(HOST, "open_lobby", "wrong_phase")
    run.refuse(HOST, "show_question", "wrong_phase")
    run.do(HOST, "start_round")
    run.refuse(HOST, "set_participants", "round_started", round=1, players=[H1, H2])
    run.refuse(HOST, "open_vote", "questions_left")
    run.refuse(juror, "vote", "vote_closed", round=1, alias="A")
    run.refuse(HOST, "open_answering", "wrong_phase")

    run.do(HOST, "show_question")
    run.refuse(player, "answer", "answering_closed", question=Q11, choice=1)  # not open yet
    run.refuse(HOST, "open_answering", "invalid", seconds=0)
    run.refuse(HOST, "open_answering", "invalid", seconds=99999)
    run.do(HOST, "open_answering")
    run.refuse(player, "answer", "bad_field", question=Q11, choice=9)
    run.refuse(player, "answer", "invalid", question=Q11, choice=-1)
    run.refuse(player, "answer", "invalid", question=Q11, choice=True)
    run.refuse(player, "answer", "bad_field", question=Q11)
    run.refuse(player, "answer", "wrong_question", question=Q12, text="hello")
    run.refuse(Actor("player", 4242), "answer", "not_playing", question=Q11, choice=1)
    run.refuse(HOST, "extend", "bad_seconds")
    run.refuse(HOST, "edit_answer", "wrong_phase", player=H1, text="x")  # not while players may answer again
    run.do(player, "answer", question=Q11, choice=3)
    run.do(Actor("player", AI), "answer", question=Q11, choice=2)
    run.do(HOST, "close_answering")
    run.refuse(player, "answer", "answering_closed", question=Q11, choice=1)  # after the close
    run.refuse(HOST, "close_answering", "wrong_phase")
    run.refuse(HOST, "edit_answer", "no_answer", player=H2, text="x")
    run.refuse(HOST, "edit_answer", "mcq_answer", player=H1, text="a red umbrella")
    run.refuse(juror, "sheet", "not_revealed", question=Q11, alias="A")
    run.do(HOST, "reveal")
    run.refuse(HOST, "edit_answer", "wrong_phase", player=H1, redact=True)  # after the reveal
    run.refuse(HOST, "open_vote", "questions_left")
    run.refuse(juror, "sheet", "invalid", question=Q11, alias="A", human_likeness=0)
    run.refuse(juror, "sheet", "invalid", question=Q11, alias="A", human_likeness=6)
    run.refuse(juror, "sheet", "invalid", question=Q11, alias="A", looks_like_ai="yes")
    run.refuse(juror, "sheet", "unknown_alias", question=Q11, alias="Z")
    run.refuse(juror, "sheet", "invalid", question=Q11, alias=None)
    run.refuse(juror, "sheet", "not_revealed", question=Q12, alias="A")
    run.refuse(juror, "sheet", "not_revealed", question=Q21, alias="A")
    run.refuse(juror, "sheet", "invalid", question=Q11, alias="A", note="n" * (MAX_TEXT + 1))
    run.do(juror, "sheet", question=Q11, alias="A", note="n" * MAX_TEXT, human_likeness=5)
    good, bad = {"question": Q11, "alias": "B", "note": "fine"}, {"question": Q11, "alias": "Z"}
    run.refuse(juror, "sheet", "unknown_alias", lines=[good, bad])  # one bad line refuses the whole save
    run.refuse(juror, "sheet", "invalid", lines=[])
    run.refuse(juror, "sheet", "invalid", lines=[good] * (MAX_SHEET_LINES + 1))
    run.do(juror, "sheet", lines=[good, {"question": Q11, "alias": "C", "looks_like_ai": True}])
    assert [(s.alias, s.note, s.looks_like_ai) for s in run.effects(SaveSheet)[-2:]] == [
        ("B", "fine", False),
        ("C", "", True),
    ]

    run.do(HOST, "show_question")
    run.do(HOST, "open_answering")
    run.refuse(player, "answer", "invalid", question=Q12, text="x" * (MAX_TEXT + 1))
    run.refuse(player, "answer", "empty", question=Q12, text="   ")
    run.refuse(player, "answer", "invalid", question=Q12, text=42)
    run.refuse(player, "answer", "wrong_question", question=Q11, choice=1)
    run.do(player, "answer", question=Q12, text="x" * MAX_TEXT)
    run.do(HOST, "close_answering")
    run.do(HOST, "reveal")
    run.refuse(HOST, "show_question", "round_done")
    run.refuse(HOST, "close_vote", "wrong_phase")

    run.do(HOST, "open_vote")
    run.refuse(HOST, "show_question", "wrong_phase")
    run.refuse(juror, "vote", "invalid", round=1, alias="A", confidence=9)
    run.refuse(juror, "vote", "invalid", round=1, alias="A", confidence=0)
    run.refuse(juror, "vote", "unknown_alias", round=1, alias="Z")
    run.refuse(juror, "vote", "vote_closed", round=2, alias="A")
    run.refuse(juror, "vote", "invalid", alias="A")  # the round is part of a vote (its schema says so)
    run.refuse(juror, "vote", "bad_field", round=1, alias="A", slot=2)  # one slot in this session
    run.refuse(juror, "vote", "invalid", round=1, alias="A", reason="r" * (MAX_TEXT + 1))
    run.refuse(HOST, "finish", "not_over")
    run.do(juror, "vote", round=1, alias="A", confidence=5)
    run.do(HOST, "close_vote")
    run.refuse(juror, "vote", "vote_closed", round=1, alias="B")  # after the close
    run.refuse(juror, "sheet", "round_closed", question=Q11, alias="A")  # the round's sheet is final
    run.refuse(HOST, "extend", "wrong_phase", seconds=10)
    run.refuse(HOST, "reveal_identities", "wrong_phase")
    run.refuse(HOST, "finish", "not_over")  # round 1 of 2
    assert state.phase is Phase.VOTE_CLOSED
    run.assert_all_blind()


def test_two_ai_votes_per_juror():
    run = Run(make_state(ai_votes_per_juror=2))
    state = run.state
    juror = Actor("juror", J1)
    run.do(HOST, "open_lobby")
    run.do(HOST, "start_round")
    run.question({})
    run.question({})
    run.do(HOST, "open_vote")
    a, b, c = (run.alias(p) for p in (AI, H1, H2))
    run.do(juror, "vote", round=1, slot=1, alias=a)
    run.refuse(juror, "vote", "named_twice", round=1, slot=2, alias=a)
    run.refuse(juror, "vote", "bad_field", round=1, slot=3, alias=b)
    run.refuse(juror, "vote", "invalid", round=1, slot=0, alias=b)
    run.do(juror, "vote", round=1, slot=2, alias=b)
    run.refuse(juror, "vote", "named_twice", round=1, slot=1, alias=b)
    run.do(juror, "vote", round=1, slot=1, alias=a)  # the same name again in its own slot
    run.do(juror, "vote", round=1, slot=1, alias=None)  # slot 1 abstains now
    run.do(juror, "vote", round=1, slot=2, alias=a)  # so slot 2 may take A
    run.do(juror, "vote", round=1, slot=1, alias=c)
    run.do(Actor("juror", J2), "vote", round=1, slot=1, alias=a)
    assert {s: v.player_id for s, v in state.votes[J1].items()} == {1: H2, 2: AI}
    run.do(HOST, "close_vote")
    tally = state.round_info[1].tally
    assert {row["player_id"]: row["votes"] for row in tally["players"]} == {AI: 2, H1: 0, H2: 1}
    assert (tally["cast"], tally["voters"], tally["abstentions"]) == (3, 2, 0)
    assert tally["majority_alias"] == a  # named by both voters


def test_open_join():
    run = Run(make_state(open_join=False))
    run.refuse(GUEST, "join", "join_closed", nickname="Mallory")
    run.do(HOST, "set_open_join", open=True)
    assert run.outcomes[-1].messages and run.messages("juror", "status")[-1].payload["open_join"] is True
    run.refuse(GUEST, "join", "empty", nickname="  ")
    run.refuse(GUEST, "join", "bad_field", nickname=7)
    (outcome,) = run.do(GUEST, "join", nickname="J1")
    assert outcome.reply["label"] == "J1 (2)" and outcome.reply["token"]
    (outcome,) = run.do(GUEST, "join", nickname="J1")
    assert outcome.reply["label"] == "J1 (3)"
    assert {"J1 (2)", "J1 (3)"} <= run.state.juror_labels
    log = outcome.effects[-1]
    assert isinstance(log, LogEvent) and "token" not in log.payload
    run.do(HOST, "finish", force=True)
    run.refuse(GUEST, "join", "finished", nickname="late")
    run.assert_all_blind()
