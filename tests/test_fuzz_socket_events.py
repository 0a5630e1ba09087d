"""Hypothesis fuzz of every Socket.IO event from each role, in every phase: whatever arrives, the server answers
with a clear refusal (never a missing ack, never ``server_error``), keeps the connection, and writes nothing for
what it refused.  The values and sessions are in ``tests/support/fuzz.py``."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from tests.support.fuzz import (
    EVENTS,
    FUZZ,
    JSON,
    KEYS,
    PHASE_MOVES,
    ROLES,
    Room,
    Rooms,
    dont_wait,
    mutated,
    send_and_check,
)
from tests.support.live import client_id
from vtt.protocol.vocabulary import HOST_ACTIONS


@pytest.fixture
def rooms(app, host, db_factory):
    return Rooms(app, host, db_factory)


# --- 1. socket events ------------------------------------------------------------------------------------------


@settings(FUZZ, max_examples=250)
@given(data=st.data())
def test_any_json_to_any_event_from_any_role_gets_a_clear_reply(rooms, db_factory, data):
    room = rooms.get(data.draw(st.sampled_from(sorted(PHASE_MOVES)), label="phase"))
    role, event = data.draw(st.sampled_from(ROLES), label="role"), data.draw(st.sampled_from(EVENTS), label="event")
    if data.draw(st.booleans(), label="bare"):
        payload = data.draw(JSON, label="payload")
    else:
        payload = data.draw(st.dictionaries(KEYS, JSON, max_size=6), label="payload")
    send_and_check(room, db_factory, role, event, dont_wait(event, payload))


@settings(FUZZ, max_examples=350)
@given(data=st.data())
def test_schema_shaped_messages_with_mutated_fields_get_a_clear_reply(rooms, db_factory, data):
    room = rooms.get(data.draw(st.sampled_from(sorted(PHASE_MOVES)), label="phase"))
    event = data.draw(st.sampled_from(EVENTS), label="event")
    allowed = {
        "answer": ("player", "ai"),
        "agent": ("ai", "player"),
        "sheet": ("juror",),
        "vote": ("juror",),
        "host": ("host",),
    }.get(event, ROLES)
    role = data.draw(st.one_of(st.sampled_from(allowed), st.sampled_from(ROLES)), label="role")
    payload = data.draw(mutated(event, room.ctx), label="payload")
    send_and_check(room, db_factory, role, event, dont_wait(event, payload))


@settings(FUZZ, max_examples=60)
@given(data=st.data())
def test_events_without_a_payload_get_a_clear_reply(rooms, db_factory, data):
    room = rooms.get(data.draw(st.sampled_from(["draft", "answering", "voting"]), label="phase"))
    role, event = data.draw(st.sampled_from(ROLES), label="role"), data.draw(st.sampled_from(EVENTS), label="event")
    send_and_check(room, db_factory, role, event, None, no_payload=True)


def test_messages_in_every_phase_with_the_host_moving_at_random(app, host, db_factory):
    """A state machine: the host's moves at random (with their arguments), valid and fuzzed messages from every
    role in between, so that every message meets every phase."""

    class Session(RuleBasedStateMachine):
        def __init__(self):
            super().__init__()
            self.room = Room(app, host, db_factory)

        def _snapshot(self) -> dict[str, Any]:
            return self.room.roles["host"].fresh_snapshot()

        @rule(
            action=st.sampled_from(
                HOST_ACTIONS
                + (
                    "start_round",
                    "show_question",
                    "open_answering",
                    "close_answering",
                    "reveal",
                    "open_vote",
                    "close_vote",
                    "show_tally",
                    "reveal_identities",
                )
            ),
            data=st.data(),
        )
        def host_moves(self, action, data):
            snapshot = self._snapshot()
            players = [p["id"] for p in snapshot["players"]]
            args: dict[str, Any] = {}
            if action == "set_participants":
                args = {
                    "round": data.draw(st.integers(1, 3)),
                    "players": data.draw(st.one_of(st.none(), st.lists(st.sampled_from(players), max_size=3))),
                }
            elif action in ("extend", "open_answering", "open_vote") and data.draw(st.booleans()):
                args = {"seconds": 3000}
            elif action == "play_clip" and data.draw(st.booleans()):
                args = {"duration": 3000.0}
            elif action == "edit_answer":
                args = {
                    "player": data.draw(st.sampled_from(players)),
                    **data.draw(st.sampled_from([{"text": "edited"}, {"redact": True}])),
                }
            elif action == "enter_answer":
                args = {
                    "player": data.draw(st.sampled_from(players)),
                    **data.draw(st.sampled_from([{"text": "typed"}, {"choice": 1}])),
                }
            elif action == "set_open_join":
                args = {"open": data.draw(st.booleans())}
            elif action == "finish":
                args = {"force": data.draw(st.booleans())}
            elif action in ("new_link", "remove_juror"):
                return  # they disconnect a person on purpose; the fuzz tests send them
            send_and_check(self.room, db_factory, "host", "host", {"id": client_id("h"), "action": action, **args})

        @rule(data=st.data())
        def someone_acts(self, data):
            snapshot = self._snapshot()
            question = (snapshot.get("question") or {}).get("id", 1)
            number = snapshot["status"]["round"] or 1
            role = data.draw(st.sampled_from(["player", "ai", "juror", "juror"]))
            if role == "juror":
                event = data.draw(st.sampled_from(["vote", "sheet"]))
                alias = data.draw(st.sampled_from(["A", "B", "C", None]))
                payload = (
                    {"id": client_id(), "round": number, "alias": alias, "confidence": 3}
                    if event == "vote"
                    else {
                        "id": client_id(),
                        "question": question,
                        "alias": alias or "A",
                        "note": "hm",
                        "human_likeness": 4,
                        "looks_like_ai": True,
                    }
                )
            else:
                event = "answer"
                payload = {
                    "id": client_id(),
                    "question": question,
                    **data.draw(st.sampled_from([{"choice": 1}, {"text": "she is sad"}])),
                }
            send_and_check(self.room, db_factory, role, event, payload)

        @rule(data=st.data())
        def fuzzed_message(self, data):
            event = data.draw(st.sampled_from(EVENTS))
            role = data.draw(st.sampled_from(ROLES))
            payload = data.draw(st.one_of(mutated(event, self.room.ctx), JSON))
            send_and_check(self.room, db_factory, role, event, dont_wait(event, payload))

        @invariant()
        def everyone_is_connected(self):
            if not self.room.broken:
                assert all(role.connected for role in self.room.roles.values())

    run_state_machine_as_test(Session, settings=settings(FUZZ, max_examples=12, stateful_step_count=25))
