"""The client-side version rules (docs/protocol.md, "Versions and gaps") as the bots apply them."""

from vtt.client.view import View


def at(version: int, previous: int, **payload):
    return {**payload, "state_version": version, "prev_version": previous}


def test_sibling_events_of_one_action_both_apply():
    view = View()
    view.snapshot({"state_version": 4, "status": {"phase": "round"}, "question": None})
    assert view.event("status", at(5, 3, phase="clip"))
    assert view.event("question", at(5, 5, id=7, text="Why?"))  # the same action's second event
    assert (view.phase, view.data["question"]["id"], view.known) == ("clip", 7, 5)
    assert not view.stale


def test_events_the_snapshot_already_holds_are_ignored():
    view = View()
    view.snapshot({"state_version": 5, "status": {"phase": "clip"}, "question": {"id": 7}})
    assert not view.event("status", at(5, 3, phase="clip"))
    assert not view.event("question", at(5, 5, id=99))
    assert not view.event("status", at(4, 2, phase="round"))
    assert view.data["question"]["id"] == 7 and not view.stale
    assert view.event("status", at(6, 5, phase="answering")) and view.phase == "answering"


def test_a_missed_event_marks_the_view_stale_and_is_not_applied():
    view = View()
    view.snapshot({"state_version": 5, "status": {"phase": "clip"}})
    assert not view.event("status", at(9, 7, phase="judging"))
    assert view.stale and view.phase == "clip" and view.known == 5
    view.snapshot({"state_version": 9, "status": {"phase": "judging"}})
    assert not view.stale and view.phase == "judging"


def test_a_new_round_clears_the_jurors_round_state_and_answers_replace_by_question():
    view = View()
    view.snapshot({"state_version": 1, "status": {}, "revealed": [{"question": 1, "answers": []}],
                   "sheet": [{"question": 1, "alias": "A"}], "votes": [{"round": 1}]})
    view.event("answers", at(2, 1, question=1, answers=[{"alias": "B"}]))
    assert view.data["revealed"] == [{"question": 1, "answers": [{"alias": "B"}]}]
    view.event("round", at(3, 2, round=2, aliases=["A", "B"]))
    assert (view.data["revealed"], view.data["sheet"], view.data["votes"]) == ([], [], [])
    assert view.data["round"] == {"round": 2, "aliases": ["A", "B"]}


def test_payloads_without_versions_change_nothing():
    view = View()
    view.snapshot({"state_version": 1, "status": {"phase": "lobby"}})
    assert not view.event("status", {"phase": "round"})
    assert not view.event("status", "not a dict")
    assert view.phase == "lobby"
