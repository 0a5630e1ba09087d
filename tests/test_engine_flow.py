"""The session engine over plain data: a whole session through ``decide``, refusals, deadlines, blinding.

No database: a :class:`LiveState` is built by hand, every action goes through
``vtt.engine.rules.decide`` with the real tally (``vtt.persistence.tally.round_tally``).  The helpers
(``make_state``, ``Run``, ``assert_blind``) are in ``tests/support/engine.py``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from tests.support.engine import (
    AI,
    CHOICES,
    GUEST,
    H1,
    H2,
    HOST,
    J1,
    J2,
    J3,
    J4,
    JURORS,
    Q11,
    Q12,
    Q21,
    Q22,
    T0,
    Run,
    assert_blind,
    assert_identities_payload,
    assert_permutation,
    make_players,
    make_state,
    wilson,
)
from vtt.engine import audiences
from vtt.engine.actions import SYSTEM, Action, Actor, Outcome, Refusal
from vtt.engine.rules import decide, host_moves
from vtt.engine.state import AUDIENCES, EditAnswer, LogEvent, RevealIdentity, SaveSheet, SetPhase
from vtt.models import ClipPlayback, Phase, RevealPolicy
from vtt.persistence.tally import round_tally
from vtt.protocol.vocabulary import MAX_SHEET_LINES, MAX_TEXT

# --- the whole session ---------------------------------------------------------------------------


def test_whole_session_per_round_reveal():
    run = Run(make_state(seed=1234, reveal_policy=RevealPolicy.PER_ROUND))
    state = run.state

    run.do(HOST, "open_lobby")
    assert state.phase is Phase.LOBBY and state.round is None
    run.do(HOST, "set_participants", round=1, players=[AI, H2, H1, H1])
    assert state.round_info[1].participants == [H1, H2, AI]
    run.do(HOST, "set_participants", round=2, players=None)
    assert state.round_info[2].participants is None

    # --- round 1 ---
    (outcome,) = run.do(HOST, "start_round")
    assert outcome.reply["round"] == 1
    assert (state.phase, state.round, state.position) == (Phase.ROUND, 1, None)
    assert_permutation(state, 1, [H1, H2, AI])
    round1 = dict(state.round_info[1].aliases)
    cards = [m for m in outcome.messages if m.event == "round"]
    assert {m.audience for m in cards} == {"juror", "stage"}
    assert all(m.payload["aliases"] == ["A", "B", "C"] for m in cards)

    shown = run.question({H1: {"choice": 0}, H2: {"choice": 1}, AI: {"choice": 2}})
    assert shown["question"] == Q11 and len(shown["answers"]) == 3
    assert sorted(row["alias"] for row in shown["answers"]) == ["A", "B", "C"]
    assert [row["alias"] for row in shown["answers"]] == state.questions[Q11].reveal_order
    texts = {row["alias"]: (row["text"], row["choice"], row["answered"]) for row in shown["answers"]}
    assert texts == {
        round1[H1]: (CHOICES[0], 0, True),
        round1[H2]: (CHOICES[1], 1, True),
        round1[AI]: (CHOICES[2], 2, True),
    }
    run.sheets(Q11)
    sheets = run.effects(SaveSheet)
    assert len(sheets) == 3 * len(JURORS)
    assert all(round1[s.player_id] == s.alias and s.question_id == Q11 for s in sheets)

    # an open question; H1 changes the answer (the last one stands), H2 does not answer
    shown = run.question(
        [
            (H1, {"text": "She is angry"}),
            (AI, {"text": "  Her brother forgot her birthday.  "}),
            (H1, {"text": "She is sad"}),
        ]
    )
    assert state.answers[Q12].keys() == {H1, AI}
    assert shown["question"] == Q12
    texts = {row["alias"]: (row["text"], row["answered"]) for row in shown["answers"]}
    assert texts == {
        round1[H1]: ("She is sad", True),
        round1[AI]: ("Her brother forgot her birthday.", True),
        round1[H2]: ("", False),
    }
    assert all(set(row) == {"alias", "text", "choice", "answered"} for row in shown["answers"])
    run.sheets(Q12)

    run.do(HOST, "open_vote")
    assert state.phase is Phase.VOTING and state.round_info[1].vote_opened_at == run.now
    run.vote(J1, round1[AI], confidence=4, reason="too fluent")
    run.vote(J2, round1[H1], confidence=2)
    run.vote(J2, round1[AI], confidence=5)  # changed: the last write wins
    run.vote(J3, round1[H2])
    run.vote(J4, None)  # an abstention
    assert state.votes[J2][1].player_id == AI and state.votes[J2][1].confidence == 5
    assert state.votes[J4][1].player_id is None
    counts = [m.payload for m in run.messages("stage", "votes")]
    assert counts[-1]["voted"] == 4 and counts[-1]["jurors"] == 4

    run.do(HOST, "close_vote")
    assert state.phase is Phase.VOTE_CLOSED and state.round_info[1].vote_closed_at == run.now
    tally = state.round_info[1].tally
    assert run.messages("host", "tally")[-1].payload == tally
    votes = {row["player_id"]: row["votes"] for row in tally["players"]}
    assert votes == {AI: 2, H1: 0, H2: 1}
    assert [row["alias"] for row in tally["players"]] == ["A", "B", "C"]
    assert (tally["cast"], tally["abstentions"], tally["voters"], tally["top_votes"]) == (3, 1, 3, 2)
    assert tally["majority_alias"] == round1[AI]  # 2 of 3 voters: more than half
    assert tally["detection_pct"] == pytest.approx(100 * 2 / 3, abs=1e-5)
    assert tally["p_value"] == pytest.approx(7 / 27, abs=1e-5)  # P(X >= 2), X ~ Bin(3, 1/3)
    low, high = wilson(2, 3)
    assert (tally["ci_low"], tally["ci_high"]) == (pytest.approx(low, abs=1e-4), pytest.approx(high, abs=1e-4))
    assert tally["ai_passed"] is False  # human-tie: the best human (1) drew fewer votes than the AI (2)
    assert not run.messages("juror", "tally")  # not shown yet

    run.do(HOST, "show_tally")
    assert state.phase is Phase.TALLY
    shown_tally = run.messages("juror", "tally")[-1].payload
    assert shown_tally == run.messages("stage", "tally")[-1].payload
    by_alias = sorted((alias, player) for player, alias in round1.items())
    assert shown_tally == {
        "round": 1,
        "votes": [{"alias": alias, "votes": votes[player]} for alias, player in by_alias],
        "cast": 3,
        "abstentions": 1,
        "majority": round1[AI],
    }

    assert not run.messages(event="identities")
    (outcome,) = run.do(HOST, "reveal_identities")
    assert state.phase is Phase.IDENTITIES and state.round_info[1].revealed == {AI}
    assert [e.player_id for e in outcome.effects if isinstance(e, RevealIdentity)] == [AI]
    identities = [m for m in outcome.messages if m.event == "identities"]
    assert {m.audience for m in identities} == {"host", "player", "juror", "stage"}
    for message in identities:
        assert message.payload == {
            "round": 1,
            "revealed": [{"alias": round1[AI], "is_ai": True, "age": None, "stage": None}],
        }
        assert_identities_payload(message.payload, state)

    # --- round 2: aliases re-dealt, votes start empty ---
    run.do(HOST, "start_round")
    assert (state.phase, state.round, state.position, state.votes) == (Phase.ROUND, 2, None, {})
    assert_permutation(state, 2, [H1, H2, AI])
    assert state.round_info[1].aliases == round1  # round 1's stay as they were
    round2 = dict(state.round_info[2].aliases)

    shown = run.question(
        {
            H1: {"text": "Because the dog ran away"},
            H2: {"text": "she lost her keys"},
            AI: {"text": "Her brother forgot."},
        }
    )
    assert {row["alias"]: row["text"] for row in shown["answers"]} == {
        round2[H1]: "Because the dog ran away",
        round2[H2]: "she lost her keys",
        round2[AI]: "Her brother forgot.",
    }
    run.sheets(Q21)
    shown = run.question({H1: {"choice": 4}, H2: {"choice": 4}, AI: {"choice": 2}})
    run.sheets(Q22)

    run.do(HOST, "open_vote")
    run.vote(J1, round2[H1], confidence=3)
    run.vote(J2, round2[H1])
    run.vote(J3, round2[AI], confidence=5)
    run.vote(J4, round2[H2], confidence=1)
    run.do(HOST, "close_vote")
    tally = state.round_info[2].tally
    assert {row["player_id"]: row["votes"] for row in tally["players"]} == {H1: 2, H2: 1, AI: 1}
    assert (tally["cast"], tally["abstentions"], tally["voters"], tally["top_votes"]) == (4, 0, 4, 2)
    assert tally["majority_alias"] is None  # 2 of 4 is not more than half
    assert tally["detection_pct"] == pytest.approx(25.0)
    assert tally["ai_passed"] is True  # human-tie: a human drew at least as many votes as the AI
    assert state.round_info[1].tally["cast"] == 3  # round 1's tally untouched
    run.do(HOST, "show_tally")
    (outcome,) = run.do(HOST, "reveal_identities")
    assert state.round_info[2].revealed == {H1}  # the most-voted player: a human
    (message,) = [m for m in outcome.messages if m.event == "identities" and m.audience == "juror"]
    assert message.payload == {
        "round": 2,
        "revealed": [{"alias": round2[H1], "is_ai": False, "age": 10, "stage": "middle concrete"}],
    }

    run.refuse(HOST, "start_round", "no_more_rounds")
    (outcome,) = run.do(HOST, "finish")
    assert state.phase is Phase.FINISHED
    assert all(info.revealed == {H1, H2, AI} for info in state.round_info.values())
    assert sorted((e.round, e.player_id) for e in outcome.effects if isinstance(e, RevealIdentity)) == [
        (1, H1),
        (1, H2),
        (2, H2),
        (2, AI),
    ]
    final = [m for m in outcome.messages if m.event == "identities" and m.audience == "juror"]
    assert [m.payload["round"] for m in final] == [1, 2]
    for message in final:
        assert len(message.payload["revealed"]) == 3
        assert_identities_payload(message.payload, state)
    run.refuse(HOST, "finish", "not_over", force=True)  # finished is final
    run.refuse(HOST, "open_lobby", "wrong_phase")

    run.assert_all_blind()
    versions = [o.reply["state_version"] for o in run.outcomes]
    assert versions == list(range(1, len(run.outcomes) + 1)) and state.state_version == len(run.outcomes)


def test_reveal_policy_end_refuses_per_round_reveal():
    run = Run(make_state(reveal_policy=RevealPolicy.END))
    state = run.state
    run.do(HOST, "open_lobby")
    run.do(HOST, "start_round")
    run.question({H1: {"choice": 1}, AI: {"choice": 2}})
    run.question({H2: {"text": "no idea"}})
    run.do(HOST, "open_vote")
    for juror in JURORS:
        run.vote(juror, run.alias(AI))
    run.do(HOST, "close_vote")
    run.do(HOST, "show_tally")
    run.refuse(HOST, "reveal_identities", "reveal_policy")
    assert not run.messages(event="identities")
    run.refuse(HOST, "finish", "not_over")  # round 1 of 2
    (outcome,) = run.do(HOST, "finish", force=True)  # stop early: every dealt round's identities
    assert state.phase is Phase.FINISHED
    assert state.round_info[1].revealed == {H1, H2, AI} and state.round_info[2].revealed == set()
    final = [m for m in outcome.messages if m.event == "identities"]
    assert {m.audience for m in final} == {"host", "player", "juror", "stage"}
    assert all(m.payload["round"] == 1 for m in final)
    run.assert_all_blind()


def two_rounds_of_aliases(seed: int) -> tuple[dict[int, str], dict[int, str]]:
    """Round 1's and round 2's aliases of a session with ``seed`` (quickest way through round 1)."""
    run = Run(make_state(seed=seed))
    run.do(HOST, "open_lobby")
    run.do(HOST, "start_round")
    run.question({})
    run.question({})
    run.do(HOST, "open_vote")
    run.do(HOST, "close_vote")
    run.do(HOST, "start_round")
    assert_permutation(run.state, 1, [H1, H2, AI])
    assert_permutation(run.state, 2, [H1, H2, AI])
    return dict(run.state.round_info[1].aliases), dict(run.state.round_info[2].aliases)


def test_aliases_derive_from_the_seed():
    assert two_rounds_of_aliases(1234) == two_rounds_of_aliases(1234)
    seen = {seed: two_rounds_of_aliases(seed) for seed in range(12)}
    # another seed -> another deal (3 players: 6 ways per round; 12 seeds all alike is ~1e-17)
    assert len({tuple(sorted(r1.items())) + tuple(sorted(r2.items())) for r1, r2 in seen.values()}) > 1
    # and the aliases are re-shuffled between rounds (not the same deal every round)
    assert any(r1 != r2 for r1, r2 in seen.values())


def test_answer_order_derives_from_the_seed():
    def orders(seed: int) -> list[list[str]]:
        run = Run(make_state(seed=seed))
        run.do(HOST, "open_lobby")
        run.do(HOST, "start_round")
        run.question({})
        run.question({})
        return [run.state.questions[Q11].reveal_order, run.state.questions[Q12].reveal_order]

    assert orders(77) == orders(77)
    assert all(sorted(order) == ["A", "B", "C"] for order in orders(77))
    assert len({tuple(map(tuple, orders(seed))) for seed in range(12)}) > 1


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
    run.refuse(HOST, "set_open_join", "bad_field", open="yes")
    run.refuse(HOST, "set_participants", "bad_field", round=3, players=None)
    run.refuse(HOST, "set_participants", "unknown_player", round=1, players=[H1, 4242])
    run.refuse(HOST, "set_participants", "too_few_players", round=1, players=[H1, H1])
    run.refuse(HOST, "set_participants", "bad_field", round=1, players=[H1, True])

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
    run.refuse(HOST, "open_answering", "bad_seconds", seconds=0)
    run.refuse(HOST, "open_answering", "bad_seconds", seconds=99999)
    run.do(HOST, "open_answering")
    run.refuse(player, "answer", "bad_field", question=Q11, choice=9)
    run.refuse(player, "answer", "bad_field", question=Q11, choice=-1)
    run.refuse(player, "answer", "bad_field", question=Q11, choice=True)
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
    run.refuse(juror, "sheet", "bad_field", question=Q11, alias="A", human_likeness=0)
    run.refuse(juror, "sheet", "bad_field", question=Q11, alias="A", human_likeness=6)
    run.refuse(juror, "sheet", "bad_field", question=Q11, alias="A", looks_like_ai="yes")
    run.refuse(juror, "sheet", "unknown_alias", question=Q11, alias="Z")
    run.refuse(juror, "sheet", "unknown_alias", question=Q11, alias=None)
    run.refuse(juror, "sheet", "not_revealed", question=Q12, alias="A")
    run.refuse(juror, "sheet", "not_revealed", question=Q21, alias="A")
    run.refuse(juror, "sheet", "too_long", question=Q11, alias="A", note="n" * (MAX_TEXT + 1))
    run.do(juror, "sheet", question=Q11, alias="A", note="n" * MAX_TEXT, human_likeness=5)
    good, bad = {"question": Q11, "alias": "B", "note": "fine"}, {"question": Q11, "alias": "Z"}
    run.refuse(juror, "sheet", "unknown_alias", lines=[good, bad])  # one bad line refuses the whole save
    run.refuse(juror, "sheet", "bad_field", lines=[])
    run.refuse(juror, "sheet", "bad_field", lines=[good] * (MAX_SHEET_LINES + 1))
    run.do(juror, "sheet", lines=[good, {"question": Q11, "alias": "C", "looks_like_ai": True}])
    assert [(s.alias, s.note, s.looks_like_ai) for s in run.effects(SaveSheet)[-2:]] == [
        ("B", "fine", False),
        ("C", "", True),
    ]

    run.do(HOST, "show_question")
    run.do(HOST, "open_answering")
    run.refuse(player, "answer", "too_long", question=Q12, text="x" * (MAX_TEXT + 1))
    run.refuse(player, "answer", "empty", question=Q12, text="   ")
    run.refuse(player, "answer", "bad_field", question=Q12, text=42)
    run.refuse(player, "answer", "wrong_question", question=Q11, choice=1)
    run.do(player, "answer", question=Q12, text="x" * MAX_TEXT)
    run.do(HOST, "close_answering")
    run.do(HOST, "reveal")
    run.refuse(HOST, "show_question", "round_done")
    run.refuse(HOST, "close_vote", "wrong_phase")

    run.do(HOST, "open_vote")
    run.refuse(HOST, "show_question", "wrong_phase")
    run.refuse(juror, "vote", "bad_field", round=1, alias="A", confidence=9)
    run.refuse(juror, "vote", "bad_field", round=1, alias="A", confidence=0)
    run.refuse(juror, "vote", "unknown_alias", round=1, alias="Z")
    run.refuse(juror, "vote", "vote_closed", round=2, alias="A")
    run.refuse(juror, "vote", "vote_closed", alias="A")  # the round is part of a vote
    run.refuse(juror, "vote", "bad_field", round=1, alias="A", slot=2)  # one slot in this session
    run.refuse(juror, "vote", "too_long", round=1, alias="A", reason="r" * (MAX_TEXT + 1))
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
    run.refuse(juror, "vote", "bad_field", round=1, slot=0, alias=b)
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
    run.refuse(HOST, "extend", "bad_seconds", seconds=True, at=run.at(39.5))
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
        run.refuse(HOST, "play_clip", "bad_field", duration=bad, at=run.at(2))
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


# --- a humans-only control round --------------------------------------------------------------


def test_humans_only_control_round():
    run = Run(make_state())
    state = run.state
    run.do(HOST, "open_lobby")
    run.do(HOST, "set_participants", round=1, players=[H2, H1])
    run.do(HOST, "start_round")
    assert_permutation(state, 1, [H1, H2])
    assert AI not in state.round_info[1].aliases
    assert state.participants(1) == [H1, H2] and state.participants(2) == [H1, H2, AI]
    run.do(HOST, "show_question")
    run.do(HOST, "open_answering")
    run.refuse(Actor("player", AI), "answer", "not_playing", question=Q11, choice=2)
    run.do(Actor("player", H1), "answer", question=Q11, choice=0)
    run.do(Actor("player", H2), "answer", question=Q11, choice=1)
    run.do(HOST, "close_answering")
    run.do(HOST, "reveal")
    shown = run.messages("juror", "answers")[-1].payload
    assert sorted(row["alias"] for row in shown["answers"]) == ["A", "B"]
    run.refuse(Actor("juror", J1), "sheet", "unknown_alias", question=Q11, alias="C")
    run.question({H1: {"text": "tired"}})
    run.do(HOST, "open_vote")
    run.refuse(Actor("juror", J1), "vote", "unknown_alias", round=1, alias="C")
    run.vote(J1, run.alias(H1))
    run.vote(J2, run.alias(H1))
    run.vote(J3, run.alias(H2))
    run.do(HOST, "close_vote")
    tally = state.round_info[1].tally
    assert {row["player_id"]: row["votes"] for row in tally["players"]} == {H1: 2, H2: 1}
    assert tally["detection_pct"] == 0.0 and tally["majority_alias"] == run.alias(H1)
    assert tally["control"] is True
    run.do(HOST, "show_tally")
    run.do(HOST, "reveal_identities")
    assert state.round_info[1].revealed == {H1}

    run.do(HOST, "start_round")  # round 2: everyone again, the AI included
    assert_permutation(state, 2, [H1, H2, AI])
    run.do(HOST, "show_question")
    run.do(HOST, "open_answering")
    run.do(Actor("player", AI), "answer", question=Q21, text="She is upset about the birthday.")
    run.do(HOST, "finish", force=True)
    assert state.round_info[1].revealed == {H1, H2} and state.round_info[2].revealed == {H1, H2, AI}
    run.assert_all_blind()


# --- editing and redacting before the reveal ----------------------------------------------------


def test_edit_and_redact_before_the_reveal():
    run = Run(make_state())
    state = run.state
    run.do(HOST, "open_lobby")
    run.do(HOST, "start_round")
    run.do(HOST, "show_question")
    run.do(HOST, "open_answering")
    run.do(Actor("player", H1), "answer", question=Q11, choice=0)
    run.do(Actor("player", H2), "answer", question=Q11, choice=1)
    run.do(HOST, "close_answering")
    (outcome,) = run.do(HOST, "edit_answer", player=H2, redact=True)
    original = [e for e in outcome.effects if isinstance(e, LogEvent) and e.kind == "answer.original"]
    assert [e.payload for e in original] == [{"question": Q11, "player": H2, "text": "", "choice": 1}]
    answer = state.answers[Q11][H2]
    assert (answer.text, answer.choice_index, answer.redacted, answer.edited) == ("", None, True, True)
    run.do(HOST, "reveal")
    rows = {row["alias"]: row for row in run.messages("juror", "answers")[-1].payload["answers"]}
    assert rows[run.alias(H2)] == {"alias": run.alias(H2), "text": "", "choice": None, "answered": False}
    assert rows[run.alias(H1)]["text"] == CHOICES[0]

    told = "As an AI language model, I cannot watch the video, but she seems upset."
    run.do(HOST, "show_question")
    run.do(HOST, "open_answering")
    run.do(Actor("player", AI), "answer", question=Q12, text=told)
    run.do(Actor("player", H1), "answer", question=Q12, text="she is upset")
    (closed,) = run.do(HOST, "close_answering")
    (tells,) = [m for m in closed.messages if m.event == "tells"]
    assert tells.audience == "host"
    assert [w["player"]["id"] for w in tells.payload["warnings"]] == [AI]
    assert "language model" in tells.payload["warnings"][0]["tells"]
    run.refuse(HOST, "edit_answer", "empty", player=AI, text="  ")
    run.refuse(HOST, "edit_answer", "no_answer", player=H2, text="x")
    (outcome,) = run.do(HOST, "edit_answer", player=AI, text="She seems upset.")
    edits = [e for e in outcome.effects if isinstance(e, EditAnswer)]
    assert [(e.question_id, e.player_id, e.text, e.redacted) for e in edits] == [(Q12, AI, "She seems upset.", False)]
    original = [e for e in outcome.effects if isinstance(e, LogEvent) and e.kind == "answer.original"]
    assert [e.payload for e in original] == [{"question": Q12, "player": AI, "text": told, "choice": None}]
    assert [m.audience for m in outcome.messages if m.event == "answer"] == ["host"]
    run.do(HOST, "reveal")
    rows = {row["alias"]: row for row in run.messages("juror", "answers")[-1].payload["answers"]}
    assert rows[run.alias(AI)]["text"] == "She seems upset." and rows[run.alias(AI)]["answered"] is True
    jury_text = repr([m.payload for m in run.messages() if m.audience in ("juror", "stage")])
    assert "language model" not in jury_text
    run.refuse(HOST, "edit_answer", "wrong_phase", player=AI, text="changed after the reveal")
    assert state.answers[Q12][AI].text == "She seems upset."
    run.assert_all_blind()


def test_blind_checker_catches_leaks():
    players = make_players()
    assert_blind("juror", "answers", {"answers": [{"alias": "A", "text": "hi"}], "clip": {"kind": "shot"}}, players)
    assert_blind(
        "juror",
        "identities",
        {"round": 1, "revealed": [{"alias": "A", "is_ai": True, "age": None, "stage": None}]},
        players,
    )
    leaks = [
        {"player_id": 1},
        {"x": [{"kind": "ai"}]},
        {"n": AI},
        {"t": "by Skynet MK7"},
        {"age": 10},
        {"note": f"player {H1}"},
        {"latency_ms": 5},
        {"token": "t"},
        {"when": T0},
        {"clip": {"kind": "ai"}},
        {"is_ai": True},
        {str(H2): "A"},
    ]
    for leak in leaks:
        with pytest.raises(AssertionError):
            assert_blind("stage", "answers", leak, players)


def test_blind_checker_on_snapshots():
    run = Run(make_state())
    run.do(HOST, "open_lobby")
    run.do(HOST, "start_round")
    run.question({H1: {"choice": 1}})
    run.do(HOST, "finish", force=True)
    snapshot = audiences.stage_snapshot(run.state)
    assert snapshot["identities"]
    assert_blind("stage", "snapshot", snapshot, run.state.players, snapshot=True)
    with pytest.raises(AssertionError):  # the identities list is allowed in a snapshot only
        assert_blind("stage", "snapshot", snapshot, run.state.players)


def test_no_sheet_after_a_forced_finish():
    run = Run(make_state())
    run.do(HOST, "open_lobby")
    run.do(HOST, "start_round")
    run.question({H1: {"choice": 1}, AI: {"choice": 2}})
    run.do(HOST, "finish", force=True)
    assert run.state.round_info[1].revealed == {H1, H2, AI}
    run.refuse(Actor("juror", J1), "sheet", "finished", question=Q11, alias=run.alias(AI), looks_like_ai=True)


def test_juror_pages_are_told_to_save_less_often_as_jurors_grow():
    state = make_state()
    assert audiences.status(state)["sheet_save_seconds"] == 1
    for jurors, seconds in ((500, 1), (501, 2), (2000, 4), (2001, 5), (5000, 10), (20_000, 10)):
        state.juror_labels = {f"J{n}" for n in range(jurors)}
        assert audiences.status(state)["sheet_save_seconds"] == seconds, jurors


def test_the_host_enters_an_ai_player_s_open_answer_and_agents_report_to_the_host_only():
    run = Run(make_state())
    state = run.state
    for move in ("open_lobby", "start_round"):
        run.do(HOST, move)
    run.question({H1: {"choice": 0}, AI: {"choice": 2}})
    run.do(HOST, "show_question")  # Q12, open
    players = [m for m in run.outcomes[-1].messages if m.event == "question"]
    assert {m.audience: m.payload.get("qid") for m in players} == {
        "player": "q12",
        "juror": None,
        "stage": None,
        "host": "q12",
    }
    run.refuse(HOST, "enter_answer", "wrong_phase", player=AI, text="Her brother forgot.")
    run.do(HOST, "open_answering")
    run.refuse(HOST, "enter_answer", "not_ai", player=H1, text="Her brother forgot.")
    run.refuse(HOST, "enter_answer", "empty", player=AI, text="   ")
    run.refuse(HOST, "enter_answer", "bad_field", player=AI, text="x", source="dream")
    run.refuse(
        Actor("player", AI),
        "answer",
        "too_long",
        question=Q12,
        text="x",
        provenance={"backend": "http", "model": "m", "settings": {"prompt": "y" * 4000}},
    )
    run.refuse(Actor("player", H1), "answer", "not_ai", question=Q12, text="x", provenance={"backend": "me"})
    run.do(
        Actor("player", AI),
        "answer",
        question=Q12,
        text="She is upset.",
        provenance={"backend": "http", "model": "llava", "settings": {"temperature": 0}},
    )
    assert state.answers[Q12][AI].provenance == {"backend": "http", "model": "llava", "settings": {"temperature": 0}}
    run.do(
        HOST, "enter_answer", player=AI, text="  Her brother forgot her birthday. ", source="import", file="preds.jsonl"
    )
    entered = state.answers[Q12][AI]
    assert (entered.text, entered.entered_by_host) == ("Her brother forgot her birthday.", True)
    assert entered.provenance == {
        "backend": "host",
        "model": None,
        "settings": {"source": "import", "file": "preds.jsonl"},
    }
    shown, counted = [m.payload for m in run.outcomes[-1].messages]
    assert shown["entered_by_host"] is True and shown["player"]["id"] == AI
    # the Agents panel's counts: the agent's earlier answer to Q11; its answer to Q12 replaced by the host's
    assert counted == {"player": AI, "answered": 1, "entered": 1}

    run.refuse(Actor("player", H1), "agent", "not_ai", status="error", message="?")
    run.refuse(Actor("player", AI), "agent", "bad_field", status="sleeping")
    run.do(Actor("player", AI), "agent", status="error", message="backend raised ValueError")
    messages = run.outcomes[-1].messages
    assert [(m.audience, m.event) for m in messages] == [("host", "agent")]
    assert messages[0].payload == {
        "player": AI,
        "status": "error",
        "message": "backend raised ValueError",
        "at": run.now.isoformat().replace("+00:00", "Z"),
        "answered": 1,
        "entered": 1,
    }
    assert audiences.host_snapshot(state, host_moves(state))["agents"] == {
        str(AI): {k: v for k, v in messages[0].payload.items() if k != "player"}
    }
    run.do(HOST, "close_answering")
    run.do(HOST, "reveal")
    run.refuse(HOST, "enter_answer", "wrong_phase", player=AI, text="too late")
    run.do(HOST, "finish", force=True)
    run.do(Actor("player", AI), "agent", status="ready")  # any phase
    run.assert_all_blind()
    for view in (audiences.stage_snapshot(state), audiences.juror_snapshot(state, "J1", [], [])):
        assert_blind("juror", "snapshot", view, state.players, snapshot=True)
    assert audiences.player_snapshot(state, H1)["status"]["phase"] == "finished"
