"""Hypothesis fuzz of every client input: each Socket.IO event from each role, the connect auth, every HTTP
form and GET route.  Whatever arrives, the server answers with a clear refusal (never a missing ack, never
``server_error``, never an HTTP 500), keeps the connection, and writes nothing for what it refused."""

from __future__ import annotations

import io
import logging
import string
from typing import Any

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import event as hypothesis_event
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test
from sqlalchemy import func, select

from tests.support.apps import HOST_PASSWORD, threaded_app
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
        assert after == before, f"refused {event} from {role} changed {_changed(before, after)}: {reply}"
    elif event == "host" and isinstance(payload, dict) and payload.get("action") in ("new_link", "remove_juror"):
        room.broken = True
    if not room.broken:
        for name, connection in room.roles.items():
            assert connection.connected, f"{name} was disconnected by {role}'s {event} {payload!r}"
    return reply


def _changed(before: dict[str, int], after: dict[str, int]) -> dict[str, tuple[int, int]]:
    return {name: (before[name], after[name]) for name in before if before[name] != after[name]}


@pytest.fixture
def rooms(app, host, db_factory):
    return Rooms(app, host, db_factory)


def _dont_wait(event: str, payload: Any) -> Any:
    """Clip timers and deadlines a fuzzed host sets are pushed past the test (a timer firing mid-check would
    write between the before and after counts of another message)."""
    if event == "host" and isinstance(payload, dict):
        for key in ("seconds", "duration"):
            value = payload.get(key)
            if type(value) in (int, float) and 0 < value < 600:
                payload[key] = 3000 if type(value) is int else 3000.0
    return payload


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
    send_and_check(room, db_factory, role, event, _dont_wait(event, payload))


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
    send_and_check(room, db_factory, role, event, _dont_wait(event, payload))


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
            send_and_check(self.room, db_factory, role, event, _dont_wait(event, payload))

        @invariant()
        def everyone_is_connected(self):
            if not self.room.broken:
                assert all(role.connected for role in self.room.roles.values())

    run_state_machine_as_test(Session, settings=settings(FUZZ, max_examples=12, stateful_step_count=25))


# --- 3. the connect auth ---------------------------------------------------------------------------------------

SERVER_LOGGERS = ("vtt", "socketio", "engineio", "flask_socketio", "werkzeug")


def server_errors(caplog) -> list[str]:
    return [
        f"{record.name}: {record.getMessage()}"
        for record in caplog.records
        if record.levelno >= logging.ERROR and record.name.startswith(SERVER_LOGGERS)
    ]


@pytest.fixture
def open_session(db_factory):
    return make_session(db_factory, rounds=1, per_round=1, jurors=1, open_join=True, name=client_id("auth"))


@settings(FUZZ, max_examples=150)
@given(data=st.data())
def test_any_connect_auth_is_refused_or_lets_in_only_who_it_names(app, host, db_factory, open_session, caplog, data):
    caplog.set_level(logging.WARNING)
    people = open_session
    real = {
        "token": st.sampled_from([*people.players.values(), *people.jurors.values()]),
        "code": st.sampled_from([people.code, people.code.lower(), f" {people.code} "]),
        "role": st.sampled_from(["host", "stage", "juror", "player", "HOST", ""]),
        "nickname": st.sampled_from(["Kim", "K" * 30, "K" * 31, "", " ", "\x00", "K\ud800"]),
        "host_token": st.sampled_from(["x", "x" * 64, "x" * 65]),
        "door": st.sampled_from(["0000", "x" * 9]),
        "key": st.sampled_from(["x", "x" * 65]),
    }
    shaped_auth = st.fixed_dictionaries(
        {}, optional={key: st.one_of(value, WEIRD_VALUES) for key, value in real.items()}
    )
    auth = data.draw(st.one_of(st.none(), JSON, shaped_auth, st.dictionaries(KEYS, JSON, max_size=4)), label="auth")
    before = table_counts(db_factory)
    with_cookie = data.draw(st.booleans(), label="host cookie")
    caplog.clear()
    role = Role(socketio, app, auth, flask_client=host if with_cookie else None)
    note(f"auth {auth!r} -> connected {role.connected}")
    assert not server_errors(caplog), server_errors(caplog)
    if not role.connected:
        after = table_counts(db_factory)
        assert after == before, f"a refused connect wrote {_changed(before, after)}"
        return
    # let in: only a real token, or the real code with a role it may take
    assert isinstance(auth, dict)
    if "token" in auth:
        assert auth["token"] in (*people.players.values(), *people.jurors.values())
    else:
        assert auth.get("code", "").strip().upper() == people.code
        assert auth.get("role") in ("stage", "juror") or (auth.get("role") == "host" and with_cookie)
    snapshot = role.last("snapshot")
    assert isinstance(snapshot, dict) and snapshot.get("role") in ("player", "juror", "stage", "host"), snapshot
    role.client.disconnect()


# --- 2. HTTP forms and pages -----------------------------------------------------------------------------------

FORM_TEXT = st.one_of(
    st.text(st.characters(exclude_categories=("Cs",)), max_size=40),
    st.sampled_from(
        [
            "",
            " ",
            "\x00",
            "a\x00b",
            "0",
            "1",
            "2",
            "5",
            "6",
            "-1",
            "1.5",
            "1,5",
            "1e9",
            "nan",
            "inf",
            "²",
            "٣",
            "１２",
            "9" * 13,
            "9" * 40,
            "x" * 31,
            "x" * 41,
            "x" * 61,
            "x" * 65,
            "x" * 201,
            "x" * 5000,
            "on",
            "yes",
            "no",
            "true",
            "A",
            "B",
            "C",
            "abstain",
            "J1",
            "human",
            "ai",
            "mcq",
            "open",
            "list",
            "csv",
            "count",
            "auto",
            "leave",
            "<b>",
            "http://",
            "https://evil.example",
            "//evil",
            "/host/",
            "\r\n",
            "한국어",
            "😀",
        ]
    ),
)
# Numbers as a form may carry them: str.isdigit() holds for '²' (int() refuses it), '٣' and '１２' are digits too.
NUMBERISH = st.one_of(
    st.sampled_from(
        [
            "²",
            "³²",
            "٣",
            "１２",
            "⁵",
            "0",
            "-0",
            "+1",
            "01",
            " 1 ",
            "1_000",
            "9" * 19,
            "9" * 40,
            "-9" * 10,
            "1e3",
            "0x10",
            "½",
            "Ⅻ",
            "𝟙",
        ]
    ),
    st.integers(-(2**70), 2**70).map(str),
)
FORM_VALUE = st.one_of(FORM_TEXT, NUMBERISH)
UPLOAD = st.tuples(
    st.one_of(
        st.binary(max_size=300),
        st.sampled_from(
            [
                b"",
                b"\x00" * 50,
                b"\xff\xfe\x00",
                b'qid,question\n1,"x\n',
                b"PK\x03\x04" + b"\x00" * 40,
                b'{"a":',
                b"[1,2,3]",
                b"\xef\xbb\xbfqid,question,answer\nq1,x,y\n",
                "ä,ö\n\x00".encode("utf-16"),
                b"qid,question,choices,answer\nq1,What?,a|b,9\n",
            ]
        ),
    ),
    st.one_of(
        st.sampled_from(
            [
                "bank.csv",
                "bank.json",
                "bank.jsonl",
                "bank.xlsx",
                "bank.tsv",
                "x",
                ".csv",
                "../../etc/passwd.csv",
                "a\x00b.csv",
                "j.csv",
                "p.jsonl",
                "p.json",
                "",
                "x" * 300 + ".csv",
            ]
        ),
        st.text(st.characters(exclude_categories=("Cs",)), max_size=20),
    ),
)


@pytest.fixture
def site(database_url, db_factory):
    """An app with CSRF off, a signed-in host, and a session played to its first vote
    (answers to an open question, to grade; a vote open, for the paper form)."""
    app = threaded_app(database_url, WTF_CSRF_ENABLED=False)
    client = app.test_client()
    assert client.post("/host/login", data={"password": HOST_PASSWORD}).status_code == 302
    room = Room(app, client, db_factory)
    host_role, players = room.roles["host"], (room.roles["player"], room.roles["ai"])
    for move in ("open_lobby", "start_round"):
        host_role.host(move)
    for _ in range(2):
        host_role.host("show_question")
        host_role.host("open_answering")
        question = host_role.fresh_snapshot()["question"]
        for player in players:
            answer = {"choice": 1} if question["type"] == "mcq" else {"text": "she is jealous"}
            assert player.send("answer", {"id": client_id(), "question": question["id"], **answer})["ok"]
        host_role.host("close_answering")
        host_role.host("reveal")
    host_role.host("open_vote")
    yield app, client, room
    app.extensions["vtt.hub"].stop()


def _form_fields(draw, names: list[str]) -> dict[str, Any]:
    """Some of ``names`` (missing fields too), each arbitrary text, sometimes given twice."""
    fields: dict[str, Any] = {}
    for name in names:
        if draw(st.integers(0, 3)):
            fields[name] = draw(st.one_of(FORM_VALUE, st.lists(FORM_VALUE, min_size=2, max_size=3)))
    for name in draw(st.lists(st.one_of(FORM_TEXT, st.sampled_from(["players-99999-name", "jurors-1-x"])), max_size=2)):
        fields[name] = draw(FORM_TEXT)
    return fields


def _file(draw, field: str) -> dict[str, Any]:
    if not draw(st.booleans()):
        return {}
    content, name = draw(UPLOAD)
    return {field: (io.BytesIO(content), name)}


FORMS = (
    "login",
    "logout",
    "upload",
    "base_url",
    "participants",
    "new_link",
    "new_session",
    "join",
    "grader",
    "mark",
    "final",
    "settle",
    "paper",
    "agent_answer",
)


def form_request(draw, form: str, room: Room) -> tuple[str, dict[str, Any]]:
    sid = draw(st.one_of(st.just(room.people.session_id), st.sampled_from([0, 999_999, 2**31])))
    pid = draw(st.one_of(st.sampled_from(sorted(room.people.player_ids.values())), st.just(999_999)))
    lines = [f"line-{q}-{a}-{f}" for q in (1, 2) for a in "ABC" for f in ("note", "likeness", "ai")]
    match form:
        case "login":
            return f"/host/login?next={draw(FORM_TEXT)}", _form_fields(draw, ["password"])
        case "logout":
            return "/host/logout", {}
        case "upload":
            return "/host/banks/upload", {
                **_form_fields(draw, ["bank", "format", "strict", "allow_missing_keys"]),
                **_file(draw, "file"),
            }
        case "base_url":
            return "/host/join-base-url", _form_fields(draw, ["base_url", "next", "reset"])
        case "participants":
            number = draw(st.sampled_from([1, 2, 3, 0, 10**6]))
            fields = _form_fields(draw, ["players"])
            if draw(st.booleans()):
                fields["players"] = [
                    str(p) for p in draw(st.lists(st.sampled_from(sorted(room.people.player_ids.values())), max_size=3))
                ] + draw(st.lists(FORM_VALUE, max_size=2))
            return f"/host/sessions/{sid}/rounds/{number}/participants", fields
        case "new_link":
            fields = _form_fields(draw, ["player", "juror"])
            if draw(st.booleans()):
                fields = draw(st.sampled_from([{"player": str(pid)}, {"juror": "J2"}, {"juror": "nobody"}]))
            return f"/host/sessions/{sid}/new-link", fields
        case "new_session":
            names = [
                "name",
                "bank",
                "rounds",
                "questions_per_round",
                "seed",
                "answer_seconds",
                "vote_seconds",
                "ai_votes_per_juror",
                "pass_alpha",
                "pass_threshold_pct",
                "reveal_policy",
                "pass_rule",
                "scoring_method",
                "clip_playback",
                "jurors_source",
                "jurors_count",
                "round_themes",
                "open_join",
                *[f"players-{n}-{f}" for n in (0, 1, 9999) for f in ("name", "kind", "age", "stage", "mcq", "open")],
                *[f"jurors-{n}-{f}" for n in (0, 1) for f in ("label", "age_band", "sex", "expert", "paper")],
            ]
            fields = _form_fields(draw, names)
            if draw(st.booleans()):  # close to a form that is accepted, one field off
                base = {
                    "name": client_id("form"),
                    "bank": "Demo drama bank",
                    "rounds": "1",
                    "questions_per_round": "1",
                    "jurors_source": draw(st.sampled_from(["count", "list", "csv"])),
                    "jurors_count": "2",
                    "players-0-name": "Ann",
                    "players-0-kind": "human",
                    "players-1-name": "Bot",
                    "players-1-kind": "ai",
                    "jurors-0-label": "J1",
                    "reveal_policy": "end",
                    "pass_rule": "human_tie",
                    "scoring_method": "cogsci2024",
                    "clip_playback": "host",
                }
                fields = {**base, **dict(list(fields.items())[:1])}
                if draw(st.booleans()):
                    fields["jurors_count"] = draw(FORM_VALUE)
            return "/host/sessions/new", {**fields, **_file(draw, "jurors_csv")}
        case "join":
            code = draw(st.one_of(st.just(room.people.code), FORM_TEXT.filter(lambda t: t.strip("/") == t and t)))
            return f"/join/{_quote(code)}", _form_fields(draw, ["nickname", "door"])
        case "grader":
            return f"/host/sessions/{sid}/grading/grader", _form_fields(draw, ["grader", "action"])
        case "mark" | "final" | "settle":
            fields = _form_fields(
                draw,
                ["answer_id", "correct", "accuracy", "comprehensiveness", "depth", "evidence", "coherence", "show"],
            )
            if draw(st.booleans()):
                fields["answer_id"] = str(draw(st.integers(1, 8)))
            return f"/host/sessions/{sid}/grading/{form}", fields
        case "paper":
            fields = _form_fields(
                draw,
                [
                    "juror",
                    "round",
                    "entry",
                    *lines,
                    *[f"vote-{s}-{f}" for s in (1, 2) for f in ("alias", "confidence", "reason")],
                ],
            )
            return f"/host/sessions/{sid}/paper", fields
        case "agent_answer":
            return f"/host/sessions/{sid}/agents/{pid}/answer", {**_form_fields(draw, ["entry"]), **_file(draw, "file")}
    raise AssertionError(form)


def _quote(text: str) -> str:
    from urllib.parse import quote

    return quote(text, safe="")


# A refusal's status: nothing may have been written (409 of the paper form may follow a part that was saved).
REFUSALS = {400, 401, 403, 404, 405, 413, 422, 429}


def post_and_check(client, db_factory, path: str, fields: dict[str, Any], *, json_reply: bool = False):
    before = table_counts(db_factory)
    headers = {"Accept": "application/json"} if json_reply else {}
    response = client.post(path, data=fields, headers=headers, content_type="multipart/form-data")
    note(f"POST {path} {fields!r} -> {response.status_code}")
    assert response.status_code < 500, f"POST {path} {fields!r}: {response.status_code}"
    if response.status_code in REFUSALS:
        after = table_counts(db_factory)
        assert after == before, f"refused POST {path} ({response.status_code}) wrote {_changed(before, after)}"
    return response


@settings(FUZZ, max_examples=400)
@given(data=st.data())
def test_every_form_refuses_bad_input_clearly_and_writes_nothing(site, db_factory, data):
    app, client, room = site
    form = data.draw(st.sampled_from(FORMS), label="form")
    path, fields = form_request(data.draw, form, room)
    signed_in = form != "logout" and data.draw(st.integers(0, 9), label="signed in") > 0
    with client.session_transaction() as cookie:
        cookie.clear()
        if signed_in:
            cookie["host"] = True
        if form in ("mark", "final", "settle") and data.draw(st.booleans(), label="grader"):
            cookie["grader"] = data.draw(FORM_TEXT, label="grader name")
    post_and_check(client, db_factory, path, fields, json_reply=data.draw(st.booleans(), label="json"))


GET_ROUTES = (
    "/play/{t}",
    "/jury/{t}",
    "/join/{t}",
    "/stage/{t}",
    "/stage/{t}/join-qr.svg",
    "/host/banks/{n}",
    "/host/sessions/{n}",
    "/host/sessions/new",
    "/host/sessions/{n}/grading/",
    "/host/sessions/{n}/results/",
    "/host/sessions/{n}/results/files/{t}",
    "/host/sessions/{n}/results/export.zip",
    "/host/sessions/{n}/join-cards.pdf",
    "/host/sessions/{n}/paper-sheets.pdf",
    "/host/sessions/{n}/paper",
    "/host/sessions/{n}/live",
    "/host/sessions/{n}/clips",
    "/media/{t}",
    "/healthz",
    "/host/login",
    "/host/",
    "/{t}",
    "/host/{t}",
)
QUERY_KEYS = (
    "next",
    "bank",
    "element",
    "type",
    "clip",
    "q",
    "page",
    "show",
    "juror",
    "round",
    "lang",
    "key",
    "door",
    "rendition",
    "reset",
)


@settings(FUZZ, max_examples=200)
@given(data=st.data())
def test_every_page_with_any_path_and_query_is_not_a_server_error(site, data):
    from urllib.parse import urlencode

    app, client, room = site
    route = data.draw(st.sampled_from(GET_ROUTES), label="route")
    text = data.draw(
        st.one_of(
            FORM_TEXT.filter(bool),
            st.sampled_from(
                [
                    room.people.code,
                    room.people.players["Mina"],
                    room.people.jurors["J1"],
                    "report.pdf",
                    "tallies.pdf",
                    "report-csv.zip",
                    "clips/ep01_s003.mp4",
                    "../../etc/passwd",
                    "%00",
                    "..",
                    "a/../../b",
                ]
            ),
        ),
        label="text",
    )
    number = data.draw(
        st.one_of(st.just(room.people.session_id), st.sampled_from([0, 1, 2, 999_999, 2**63 - 1, 2**63, 10**30])),
        label="number",
    )
    path = route.format(
        t=_quote(text) if "media" not in route else text.replace("?", "%3F").replace("#", "%23"), n=number
    )
    query = data.draw(
        st.dictionaries(st.one_of(st.sampled_from(QUERY_KEYS), FORM_TEXT), FORM_TEXT, max_size=3), label="query"
    )
    if query.get("lang") is None and route.endswith("files/{t}"):
        query["lang"] = data.draw(st.sampled_from(["en", "ko", "xx", ""]), label="lang")
    with client.session_transaction() as cookie:
        cookie["host"] = data.draw(st.integers(0, 9), label="signed in") > 0
    response = client.get(f"{path}?{urlencode(query)}" if query else path)
    note(f"GET {path} {query!r} -> {response.status_code}")
    assert response.status_code < 500, f"GET {path}?{urlencode(query)}: {response.status_code}"


BEYOND_64_BITS = 2**63  # the bounded <int:...> of vtt.app.RowId: beyond it a route does not match


@pytest.mark.parametrize(
    "method, path",
    [
        ("GET", "/host/sessions/{n}/results/"),
        ("GET", "/host/sessions/{n}/live"),
        ("POST", "/host/sessions/1/agents/{n}/answer"),
    ],
)
def test_an_id_beyond_64_bits_is_not_found(site, method, path):
    _app, client, _room = site
    response = client.open(path.format(n=BEYOND_64_BITS), method=method)
    assert response.status_code == 404
