"""The session engine over plain data: a humans-only round, the host's edits and entered answers, and the blind
checker that every message to a juror or the stage passes.

The helpers (``make_state``, ``Run``, ``assert_blind``) are in ``tests/support/engine.py``.
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
    Q11,
    Q12,
    Q21,
    T0,
    Run,
    assert_blind,
    assert_permutation,
    make_players,
    make_state,
)
from vtt.engine import audiences
from vtt.engine.actions import Actor
from vtt.engine.rules import host_moves
from vtt.engine.state import EditAnswer, LogEvent

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
    run.refuse(HOST, "enter_answer", "invalid", player=AI, text="x", source="dream")
    run.refuse(
        Actor("player", AI),
        "answer",
        "invalid",
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
    run.refuse(Actor("player", AI), "agent", "invalid", status="sleeping")
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
