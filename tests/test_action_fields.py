"""A field of an action is checked once, by the schema of the client message that carries it: at the socket
(``parse_action``) and for the server's own callers (``read_args``: the paper sheets, the predictions import, the
host's HTTP forms) alike, with the same refusal.

Found: the engine checked the same fields again by hand (a vote's confidence and reason, a sheet line's fields,
the host's seconds and duration, a device check's values...), so one bad value had two refusals, ``invalid`` at
the socket and ``bad_field``, ``too_long`` or ``bad_seconds`` with other words through the server's paths."""

from __future__ import annotations

import pytest

from vtt.engine import rules  # noqa: F401 - loads every declaration
from vtt.engine.actions import ACTIONS, Refusal, read_args
from vtt.protocol.messages import HostIn, Invalid, parse_action
from vtt.protocol.vocabulary import MAX_SHEET_LINES, MAX_TEXT

DEVICE_CHECK = {"sound": "heard", "clock_offset_ms": 0, "round_trip_ms": 30, "transport": "websocket"}
DEVICE_CHECK["rendition"] = "main"
LINE = {"question": 11, "alias": "A"}

OUT_OF_BOUNDS = [
    ("vote", {"round": 1, "alias": "A", "confidence": 9}),
    ("vote", {"round": 1, "alias": "A", "confidence": True}),
    ("vote", {"round": 1, "alias": "A", "reason": "r" * (MAX_TEXT + 1)}),
    ("vote", {"round": 1, "alias": "A", "slot": 0}),
    ("vote", {"alias": "A"}),
    ("sheet", {**LINE, "human_likeness": 6}),
    ("sheet", {**LINE, "looks_like_ai": "yes"}),
    ("sheet", {**LINE, "note": "n" * (MAX_TEXT + 1)}),
    ("sheet", {"lines": []}),
    ("sheet", {"lines": [LINE] * (MAX_SHEET_LINES + 1)}),
    ("attention", {"value": 6}),
    ("answer", {"question": 11, "choice": -1}),
    ("answer", {"question": 11, "text": 42}),
    ("agent", {"status": "sleeping"}),
    ("notice", {"notice": "no_voice", "language": "k o"}),
    ("device_check", {**DEVICE_CHECK, "sound": "loud"}),
    ("device_check", {**DEVICE_CHECK, "duration_ms": 1.5}),
    ("open_answering", {"seconds": 0}),
    ("extend", {"seconds": True}),
    ("play_clip", {"duration": 0}),
    ("set_open_join", {"open": "yes"}),
    ("set_participants", {"round": 1, "players": [1, True]}),
    ("enter_answer", {"player": 1, "text": "x", "source": "dream"}),
    ("confirm_spoken", {"player": 1, "file": "f.webm", "text": "x", "transcribed_by": "x" * 201}),
]


def at_the_socket(name: str, args: dict) -> dict[str, str]:
    event = "host" if ACTIONS[name].schema is HostIn else name
    data = {**args, "id": "k1", **({"action": name} if event == "host" else {})}
    with pytest.raises(Invalid) as refused:
        parse_action(event, data)
    return refused.value.as_error()


def through_the_server(name: str, args: dict) -> dict[str, str]:
    with pytest.raises(Refusal) as refused:
        read_args(name, args, "k1")
    return refused.value.as_error()


@pytest.mark.parametrize(
    ("name", "args"), OUT_OF_BOUNDS, ids=[f"{name}-{i}" for i, (name, _) in enumerate(OUT_OF_BOUNDS)]
)
def test_a_bad_field_has_one_refusal_whichever_way_it_comes(name, args):
    refusal = through_the_server(name, args)
    assert refusal == at_the_socket(name, args)
    assert refusal["code"] == "invalid" and "field '" in refusal["message"]


def test_the_server_s_callers_get_the_fields_a_client_message_would_give():
    """What the engine reads is the same dict at both doors: the schema's defaults filled in, the id left out."""
    args = {"round": 1, "alias": "A"}
    assert read_args("vote", args, "k1") == parse_action("vote", {**args, "id": "k1"})[1]
    assert read_args("vote", args, "k1") == {"round": 1, "slot": 1, "alias": "A", "confidence": None, "reason": None}
    host = read_args("extend", {"seconds": 30})
    assert host["seconds"] == 30 and "action" not in host and "id" not in host
    # the server's own actions (an upload, a transcription, an open join) have no client message: as given
    assert read_args("join", {"nickname": "Ann"}) == {"nickname": "Ann"}
