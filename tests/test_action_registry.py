"""The one registry of actions (``vtt.engine.actions.ACTIONS``): every action a client message carries is declared
with that message, and what else names actions is read from it."""

from __future__ import annotations

import pytest

from vtt.engine.actions import ACTIONS, declare, declare_later
from vtt.engine.rules import FLOW_MOVES, RANKING, client_events
from vtt.protocol.messages import CLIENT_MESSAGES, HostIn, VoteIn, carried_by
from vtt.protocol.vocabulary import HOST_ACTIONS


def test_every_action_a_client_message_carries_is_declared_with_it():
    carried = {(name, model) for model in CLIENT_MESSAGES.values() for name in carried_by(model)}
    declared = {(name, each.schema) for name, each in ACTIONS.items() if each.schema is not None}
    assert declared == carried
    assert set(carried_by(HostIn)) == set(HOST_ACTIONS)
    assert client_events() == list(CLIENT_MESSAGES)


def test_every_action_has_a_handler_and_every_move_of_the_flow_is_ranked():
    assert all(each.handler is not None or each.later is not None for each in ACTIONS.values())
    assert list(FLOW_MOVES) == [name for name in RANKING if ACTIONS[name].fits is not None]
    assert set(FLOW_MOVES) == set(RANKING)
    assert {name for name, each in ACTIONS.items() if each.later} == {"sheet", "vote", "attention"}


def test_a_declaration_that_disagrees_with_the_wire_fails_and_registers_nothing():
    before = dict(ACTIONS)
    with pytest.raises(ValueError):
        declare("no_such_move", roles=("host",), schema=HostIn)(lambda *args: None)
    with pytest.raises(ValueError):
        declare("vote", roles=("juror",), schema=VoteIn)(lambda *args: None)  # declared already
    with pytest.raises(ValueError):
        declare_later("sheet", schema=VoteIn)(lambda *args: None)  # VoteIn carries vote, not sheet
    assert ACTIONS == before
