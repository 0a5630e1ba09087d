"""The session engine over plain data: a whole session through ``decide``, and the deal of aliases and answers.

No database: a :class:`LiveState` is built by hand, every action goes through
``vtt.engine.rules.decide`` with the real tally (``vtt.persistence.tally.round_tally``).  The helpers
(``make_state``, ``Run``, ``assert_blind``) are in ``tests/support/engine.py``.
"""

from __future__ import annotations

import pytest

from tests.support.engine import (
    AI,
    CHOICES,
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
    Run,
    assert_identities_payload,
    assert_permutation,
    make_state,
    wilson,
)
from vtt.engine.state import RevealIdentity, SaveSheet
from vtt.models import Phase, RevealPolicy

# --- the whole session ---------------------------------------------------------------------------


def test_whole_session_per_round_reveal():
    run = Run(make_state(seed=1234, reveal_policy=RevealPolicy.PER_ROUND))
    state = run.state

    lobby_with_participants(run)
    round1 = round_one_answered(run)
    votes = round_one_voted(run, round1)
    round_one_tally_and_identities_shown(run, round1, votes)
    round_two_played(run, round1)
    session_finished(run)

    run.assert_all_blind()
    versions = [o.reply["state_version"] for o in run.outcomes]
    assert versions == list(range(1, len(run.outcomes) + 1)) and state.state_version == len(run.outcomes)


def lobby_with_participants(run: Run) -> None:
    state = run.state
    run.do(HOST, "open_lobby")
    assert state.phase is Phase.LOBBY and state.round is None
    run.do(HOST, "set_participants", round=1, players=[AI, H2, H1, H1])
    assert state.round_info[1].participants == [H1, H2, AI]
    run.do(HOST, "set_participants", round=2, players=None)
    assert state.round_info[2].participants is None


def round_one_answered(run: Run) -> dict[int, str]:
    """Round 1's two questions answered and judged on the sheet; round 1's aliases."""
    state = run.state
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
    return round1


def round_one_voted(run: Run, round1: dict[int, str]) -> dict[int, int]:
    """Round 1's vote, closed; the votes per player of its tally."""
    state = run.state
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
    return votes


def round_one_tally_and_identities_shown(run: Run, round1: dict[int, str], votes: dict[int, int]) -> None:
    state = run.state
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


def round_two_played(run: Run, round1: dict[int, str]) -> None:
    """Round 2: aliases re-dealt, votes start empty."""
    state = run.state
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


def session_finished(run: Run) -> None:
    state = run.state
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
