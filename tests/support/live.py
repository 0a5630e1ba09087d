"""Helpers for tests of the live session over Socket.IO: a small session, clients per role, a host driver."""

from __future__ import annotations

import itertools
import json
import secrets
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from tests.support.apps import login
from tests.support.paths import ROOT
from vtt.banks import import_bank, read_bank
from vtt.db import transaction
from vtt.engine.rules import FLOW_MOVES
from vtt.extensions import socketio
from vtt.models import Juror, Player, PlayerKind, VttSession
from vtt.sessions.create import SessionConfig, create_session

DEMO_BANK = ROOT / "vtt" / "sessions" / "demo" / "bank.csv"
_ids = itertools.count(1)


def client_id(prefix: str = "c") -> str:
    return f"{prefix}-{next(_ids)}-{secrets.token_hex(3)}"


@dataclass
class People:
    """A small session: its code, and the players' and jurors' tokens."""

    session_id: int
    code: str
    players: dict[str, str]  # name -> token
    player_ids: dict[str, int]
    ai_names: set[str]
    jurors: dict[str, str] = field(default_factory=dict)  # label -> token

    @property
    def stage_key(self) -> str:
        """The stage's key (the host console's stage link carries it): the join code alone opens no stage."""
        from vtt.access.admission import stage_key
        from vtt.config import Settings

        return stage_key(Settings.from_env().secret_key, self.session_id)

    @property
    def stage_auth(self) -> dict[str, str]:
        return {"code": self.code, "role": "stage", "key": self.stage_key}

    @property
    def stage_path(self) -> str:
        return f"/stage/{self.code}?key={self.stage_key}"


def make_session(
    factory,
    *,
    rounds: int = 2,
    per_round: int = 2,
    jurors: int = 4,
    reveal: str = "per-round",
    answer_seconds: int | None = None,
    ai_votes: int = 1,
    players=None,
    open_join: bool = False,
    name: str = "Live test",
    clip_playback: str = "host",
) -> People:
    """A session of ``rounds`` x ``per_round`` demo questions with 3 players (one AI) and ``jurors`` jurors."""
    players = players or [
        {"name": "Mina", "kind": "human", "age": 10, "stage": "concrete"},
        {"name": "Grace", "kind": "human", "age": 31},
        {"name": "Agent", "kind": "ai"},
    ]
    with transaction(factory) as db:
        from vtt.banks import bank_by_name

        if bank_by_name(db, "Demo drama bank") is None:
            import_bank(db, read_bank(DEMO_BANK), "Demo drama bank")
        config = SessionConfig.from_dict(
            {
                "name": name,
                "bank": "Demo drama bank",
                "rounds": rounds,
                "questions_per_round": per_round,
                "seed": 7,
                "reveal_policy": reveal,
                "answer_seconds": answer_seconds,
                "ai_votes_per_juror": ai_votes,
                "players": players,
                "open_join": open_join,
                "clip_playback": clip_playback,
            }
        )
        vtt_session = create_session(db, config)
        for number in range(1, jurors + 1):
            db.add(
                Juror(
                    session_id=vtt_session.id,
                    label=f"J{number}",
                    token=secrets.token_urlsafe(12),
                    expert=number % 2 == 0,
                    age_band="30s",
                )
            )
        db.flush()
        people = People(vtt_session.id, vtt_session.join_code, {}, {}, set())
        for player in db.scalars(select(Player).where(Player.session_id == vtt_session.id)):
            people.players[player.name] = player.token
            people.player_ids[player.name] = player.id
            if player.kind is PlayerKind.AI:
                people.ai_names.add(player.name)
        for juror in db.scalars(select(Juror).where(Juror.session_id == vtt_session.id)):
            people.jurors[juror.label] = juror.token
    return people


# The host's moves from a draft session to the reveal of round 1's first question.
TO_JUDGING = ("open_lobby", "start_round", "show_question", "open_answering", "close_answering", "reveal")


class Role:
    """A Flask-SocketIO test client with its role's received messages at hand."""

    def __init__(self, socketio, app, auth: dict[str, Any], flask_client=None):
        self.client = socketio.test_client(app, auth=auth, flask_test_client=flask_client)
        self.seen: list[dict[str, Any]] = []

    @property
    def connected(self) -> bool:
        return self.client.is_connected()

    def received(self) -> list[dict[str, Any]]:
        fresh = self.client.get_received()
        self.seen += fresh
        return fresh

    def last(self, event: str) -> dict[str, Any] | None:
        self.received()
        found = [m["args"][0] for m in self.seen if m["name"] == event]
        return found[-1] if found else None

    def send(self, event: str, payload: dict[str, Any]) -> dict[str, Any]:
        return self.client.emit(event, payload, callback=True)

    def fresh_snapshot(self) -> dict[str, Any]:
        reply = self.client.emit("snapshot", callback=True)
        assert reply["ok"], reply
        return reply["snapshot"]

    def moves(self) -> list[str]:
        """The host's moves as its latest status lists them (a status event's, else the snapshot's)."""
        self.received()
        for message in reversed(self.seen):
            if message["name"] == "status":
                return message["args"][0]["moves"]
            if message["name"] == "snapshot":
                return message["args"][0]["status"]["moves"]
        raise AssertionError("the host has no status yet")

    def host(self, action: str, **args: Any) -> dict[str, Any]:
        """A host action that must be accepted; a move of the flow must be one the host's status lists now."""
        if action in FLOW_MOVES and not args.get("force"):
            assert action in self.moves(), (action, self.moves())
        reply = self.send("host", {"id": client_id("h"), "action": action, **args})
        assert reply["ok"], (action, reply)
        return reply


def payload_text(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False, default=str)


IDENTITY_KEYS = {
    "name",
    "kind",
    "token",
    "latency_ms",
    "submitted_at",
    "player",
    "player_id",
    "players",
    "age",
    "stage",
    "is_ai",
    "id_player",
    # AI players: what produced an answer, who entered it, agents' reports, the bank's qid (players only)
    "provenance",
    "entered_by_host",
    "backend",
    "model",
    "settings",
    "agent",
    "agents",
    "qid",
    # how a player takes part (a page that reads aloud is a young child's), and a read-aloud page's voice notices
    "answer_modes",
    "notices",
    "notice",
    "speech",
    # a page's device check (a spoken player's microphone tells a child's page): the host's Readiness panel only
    "readiness",
    "device_check",
    "microphone",
    "problems",
}


def identity_leaks(payload: Any, people: People, *, allow_reveal: bool = False) -> list[str]:
    """What in a juror/stage payload could tell who a player is (empty when it is blind)."""
    leaks = []

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                revealing = allow_reveal or ".identities" in path
                if key in IDENTITY_KEYS and not (revealing and key in {"is_ai", "age", "stage"}):
                    leaks.append(f"{path}.{key}")
                walk(item, f"{path}.{key}")
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, f"{path}[{index}]")
        elif isinstance(value, str):
            for name, token in people.players.items():
                if name in value or token in value:
                    leaks.append(f"{path}: {value!r}")
            if "read_aloud" in value:
                leaks.append(f"{path}: an answer mode {value!r}")

    walk(payload, "")
    return leaks


def session_row(factory, session_id: int) -> VttSession:
    with factory() as db:
        return db.get(VttSession, session_id)


def published_schemas(doc) -> dict:
    """The JSON Schemas in ``doc``'s generated block (``<!-- generated by ... -->`` then a json fence)."""
    import json
    import re

    block = re.search(r"<!-- generated by .*? -->\n```json\n(.*?)\n```", doc.read_text(encoding="utf-8"), re.S)
    assert block, f"{doc.name} lost its generated schema block"
    return json.loads(block.group(1))


def connect_all(app, client, people):
    login(client)
    host = Role(socketio, app, {"code": people.code, "role": "host"}, flask_client=client)
    stage = Role(socketio, app, people.stage_auth)
    players = {name: Role(socketio, app, {"token": token}) for name, token in people.players.items()}
    jurors = {label: Role(socketio, app, {"token": token}) for label, token in people.jurors.items()}
    return host, stage, players, jurors
