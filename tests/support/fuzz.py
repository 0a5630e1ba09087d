"""The fuzz tests' values, schema-shaped messages and small sessions: whatever arrives, the server answers with a
clear refusal (never a missing ack, never ``server_error``, never an HTTP 500), keeps the connection, and writes
nothing for what it refused.  Shared by ``tests/test_fuzz_*.py``."""

from __future__ import annotations

import string
from typing import Any

from hypothesis import HealthCheck, note, settings
from hypothesis import event as hypothesis_event
from hypothesis import strategies as st
from sqlalchemy import func, select

from tests.support.live import Role, client_id, make_session
from vtt.extensions import socketio
from vtt.models import Base, Event
from vtt.protocol.vocabulary import AGENT_STATUSES, HOST_ACTIONS

FUZZ = settings(
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)
EVENTS = ("answer", "sheet", "vote", "host", "agent", "snapshot", "clock", "door", "no_such_event")
ROLES = ("host", "stage", "player", "ai", "juror")

# --- values -----------------------------------------------------------------------------------------------

SURROGATES = st.sampled_from(["\ud800", "\udfff", "a\udc80b"])
WEIRD_TEXT = st.sampled_from(
    [
        "",
        " ",
        "\x00",
        "a\x00b",
        "\ud800",
        "x\udfffy",
        "\u200b",
        "\ufeff",
        "😀" * 5,
        "한국어",
        "A" * 8,
        "A" * 9,
        "x" * 64,
        "x" * 65,
        "x" * 1000,
        "x" * 1001,
        "x" * 4000,
        "x" * 4001,
        "x" * 20_000,
        "null",
        "0",
        "-1",
        "1e309",
        "<script>",
        "'; drop table--",
    ]
)
TEXT = st.one_of(
    st.text(max_size=30),
    WEIRD_TEXT,
    SURROGATES,
    st.text(st.characters(min_codepoint=0, max_codepoint=0x1F), max_size=5),
)
WEIRD_INTS = st.sampled_from(
    [
        0,
        -1,
        1,
        2,
        3,
        5,
        6,
        8,
        9,
        100,
        2**31,
        2**53 + 1,
        2**62,
        2**63,
        2**64,
        -(2**63) - 1,
        10**30,
        10**99,
        -(10**99),
        10**101,
    ]
)
INTS = st.one_of(st.integers(), WEIRD_INTS)
FLOATS = st.one_of(
    st.floats(), st.sampled_from([0.0, -0.0, 1.5, 1e308, float("inf"), float("nan"), 3600.0, 3600.0001, 1e-300])
)
SCALARS = st.one_of(st.none(), st.booleans(), INTS, FLOATS, TEXT)
FIELD_NAMES = (
    "id",
    "question",
    "choice",
    "text",
    "provenance",
    "status",
    "message",
    "alias",
    "note",
    "human_likeness",
    "looks_like_ai",
    "lines",
    "round",
    "slot",
    "confidence",
    "reason",
    "action",
    "players",
    "seconds",
    "duration",
    "player",
    "source",
    "file",
    "redact",
    "open",
    "cap",
    "door",
    "juror",
    "force",
    "backend",
    "model",
    "settings",
    "__proto__",
    "constructor",
    "extra",
)
KEYS = st.one_of(st.sampled_from(FIELD_NAMES), TEXT)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=5)),
    max_leaves=12,
)
WEIRD_VALUES = st.one_of(
    st.sampled_from(
        [
            None,
            True,
            False,
            0,
            -1,
            2**63,
            10**30,
            1.5,
            float("nan"),
            "",
            "\x00",
            "\ud800",
            "x" * 65,
            "x" * 4001,
            [],
            {},
            [None],
            {"a": 1},
        ]
    ),
    JSON,
)


# --- schema-shaped messages (vtt/protocol/messages.py), then one field mutated ----------------------------------


def ids() -> st.SearchStrategy[str]:
    return st.one_of(st.builds(client_id, st.just("f")), st.sampled_from(["x", "x" * 64]))


def shaped(event: str, ctx: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A message of ``event`` that fits its schema, with ids the session knows (mostly)."""
    questions = st.one_of(st.sampled_from(ctx["questions"]), INTS)
    aliases = st.one_of(st.sampled_from(["A", "B", "C"]), st.text(string.ascii_uppercase, min_size=1, max_size=8))
    score = st.one_of(st.none(), st.integers(1, 5))
    text = st.one_of(st.text(max_size=40), st.just("x" * 4000))
    if event == "answer":
        provenance = st.fixed_dictionaries(
            {"backend": st.text(min_size=1, max_size=60)},
            optional={
                "model": st.one_of(st.none(), st.text(max_size=20)),
                "settings": st.dictionaries(st.text(max_size=8), JSON, max_size=3),
            },
        )
        return st.fixed_dictionaries(
            {"id": ids(), "question": questions},
            optional={"choice": st.integers(0, 6), "text": text, "provenance": provenance},
        )
    if event == "agent":
        return st.fixed_dictionaries(
            {"id": ids(), "status": st.sampled_from(AGENT_STATUSES)}, optional={"message": st.text(max_size=1000)}
        )
    line = {"question": questions, "alias": aliases}
    line_optional = {"note": st.one_of(st.none(), text), "human_likeness": score, "looks_like_ai": st.booleans()}
    if event == "sheet":
        lines = st.lists(st.fixed_dictionaries(line, optional=line_optional), min_size=1, max_size=5)
        many = st.fixed_dictionaries({"id": ids(), "lines": lines})
        return st.one_of(st.fixed_dictionaries({"id": ids(), **line}, optional=line_optional), many)
    if event == "vote":
        return st.fixed_dictionaries(
            {
                "id": ids(),
                "round": st.one_of(st.integers(1, 3), st.integers(min_value=1)),
                "alias": st.one_of(st.none(), aliases),
            },
            optional={"slot": st.integers(1, 3), "confidence": score, "reason": st.one_of(st.none(), text)},
        )
    if event == "host":
        players = st.sampled_from(ctx["players"])
        return st.fixed_dictionaries(
            {"id": ids(), "action": st.sampled_from(HOST_ACTIONS)},
            optional={
                "round": st.integers(1, 3),
                "players": st.one_of(st.none(), st.lists(players, max_size=3)),
                "seconds": st.integers(1, 3600),
                "duration": st.floats(0.001, 3600),
                "player": players,
                "text": text,
                "choice": st.integers(0, 6),
                "question": questions,
                "source": st.sampled_from(["typed", "import"]),
                "file": st.text(max_size=200),
                "redact": st.booleans(),
                "open": st.booleans(),
                "cap": st.integers(0, 100_000),
                "door": st.booleans(),
                "juror": st.sampled_from(["J1", "J2", "J9"]),
                "force": st.booleans(),
            },
        )
    return st.fixed_dictionaries({}, optional={"id": ids()})  # snapshot, clock, door and the unknown event


@st.composite
def mutated(draw, event: str, ctx: dict[str, Any]) -> dict[str, Any]:
    message = draw(shaped(event, ctx))
    target = message
    if "lines" in message and draw(st.booleans()):
        target = message["lines"][draw(st.integers(0, len(message["lines"]) - 1))]
    for _ in range(draw(st.integers(0, 2))):
        key = draw(st.one_of(st.sampled_from(sorted(target) or ["id"]), KEYS))
        how = draw(st.sampled_from(["drop", "set", "set"]))
        if how == "drop":
            target.pop(key, None)
        else:
            target[key] = draw(WEIRD_VALUES)
    return message


# --- the database: what a refused message must leave as it was --------------------------------------------------


def table_counts(db_factory) -> dict[str, int]:
    """Rows per table; the event log without the deadline's own entries (a clip's timer may open answering)."""
    with db_factory() as db:
        counts = {
            table.name: db.scalar(select(func.count()).select_from(table))
            for table in Base.metadata.sorted_tables
            if table.name != "event"
        }
        counts["event (not system)"] = db.scalar(select(func.count()).select_from(Event).where(Event.actor != "system"))
        return counts


def check_reply(reply: Any, event: str) -> None:
    assert isinstance(reply, dict), f"no ack (or not an object) for {event}: {reply!r}"
    if reply.get("ok") is True:
        return
    assert reply.get("ok") is False, reply
    error = reply.get("error")
    assert isinstance(error, dict) and isinstance(error.get("code"), str) and isinstance(error.get("message"), str), (
        reply
    )
    assert error["code"] != "server_error", reply


# --- a few small sessions, each in its phase, with every role connected -------------------------------------------

PHASE_MOVES = {
    "draft": (),
    "lobby": ("open_lobby",),
    "clip": ("open_lobby", "start_round", "show_question"),
    "answering": ("open_lobby", "start_round", "show_question", "open_answering"),
    "answers_closed": ("open_lobby", "start_round", "show_question", "open_answering", "close_answering"),
    "judging": ("open_lobby", "start_round", "show_question", "open_answering", "close_answering", "reveal"),
    "voting": (
        "open_lobby",
        "start_round",
        "show_question",
        "open_answering",
        "close_answering",
        "reveal",
        "show_question",
        "open_answering",
        "close_answering",
        "reveal",
        "open_vote",
    ),
}


class Room:
    """A session driven to a phase, with a connection per role (``host``, ``stage``, ``player``: a human,
    ``ai``: the AI player, ``juror``) and what messages about it name (question and player ids)."""

    def __init__(self, app, host_client, db_factory, moves=()):
        self.people = make_session(db_factory, rounds=2, per_round=2, jurors=2, name=client_id("fuzz"))
        code = self.people.code
        auth = {
            "host": {"code": code, "role": "host"},
            "stage": self.people.stage_auth,
            "player": {"token": self.people.players["Mina"]},
            "ai": {"token": self.people.players["Agent"]},
            "juror": {"token": self.people.jurors["J1"]},
        }
        self.roles = {
            name: Role(socketio, app, given, flask_client=host_client if name == "host" else None)
            for name, given in auth.items()
        }
        assert all(role.connected for role in self.roles.values())
        for move in moves:
            self.roles["host"].host(move)
        self.uses = 0
        self.broken = False  # a host's accepted new_link / remove_juror disconnected someone on purpose
        self.ctx = {"questions": [1, 2, 3, 4, 0, 99], "players": sorted(self.people.player_ids.values()) + [0, 999]}


class Rooms:
    def __init__(self, app, host_client, db_factory):
        self.app, self.host_client, self.db_factory = app, host_client, db_factory
        self.rooms: dict[str, Room] = {}

    def get(self, phase: str) -> Room:
        room = self.rooms.get(phase)
        if room is None or room.broken or room.uses >= 40:  # a fuzzed host drifts its session; start afresh
            room = self.rooms[phase] = Room(self.app, self.host_client, self.db_factory, PHASE_MOVES[phase])
        room.uses += 1
        return room


def send_and_check(room: Room, db_factory, role: str, event: str, payload: Any, *, no_payload: bool = False):
    """Send one message; the reply must be clear, and a refusal must leave every table as it was."""
    sender = room.roles[role]
    before = table_counts(db_factory)
    reply = sender.client.emit(event, callback=True) if no_payload else sender.send(event, payload)
    note(f"{role} {event} {payload!r} -> {reply!r}")
    check_reply(reply, event)
    hypothesis_event(f"{event}: " + ("ok" if reply["ok"] else reply["error"]["code"]))
    if reply["ok"] is False:
        after = table_counts(db_factory)
        assert after == before, f"refused {event} from {role} changed {changed(before, after)}: {reply}"
    elif event == "host" and isinstance(payload, dict) and payload.get("action") in ("new_link", "remove_juror"):
        room.broken = True
    if not room.broken:
        for name, connection in room.roles.items():
            assert connection.connected, f"{name} was disconnected by {role}'s {event} {payload!r}"
    return reply


def changed(before: dict[str, int], after: dict[str, int]) -> dict[str, tuple[int, int]]:
    return {name: (before[name], after[name]) for name in before if before[name] != after[name]}


def dont_wait(event: str, payload: Any) -> Any:
    """Clip timers and deadlines a fuzzed host sets are pushed past the test (a timer firing mid-check would
    write between the before and after counts of another message)."""
    if event == "host" and isinstance(payload, dict):
        for key in ("seconds", "duration"):
            value = payload.get(key)
            if type(value) in (int, float) and 0 < value < 600:
                payload[key] = 3000 if type(value) is int else 3000.0
    return payload
