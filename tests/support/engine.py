"""The session engine's test helpers over plain data: a hand-built :class:`LiveState` (``make_state``),
a session driven through ``decide`` (``Run``) and the jury's blinding checks (``assert_blind``).

Shared by ``tests/test_engine_session.py``, ``tests/test_engine_stateful.py`` and other engine tests.
"""

from __future__ import annotations

import copy
import math
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from vtt.engine.actions import Action, Actor, Outcome, Refusal, read_args
from vtt.engine.flow import ALIASES
from vtt.engine.rules import decide
from vtt.engine.state import AUDIENCES, LiveState, LogEvent, PlayerInfo, QuestionInfo, RoundInfo
from vtt.models import ClipKind, Phase, PlayerKind, QuestionType, RevealPolicy
from vtt.persistence.tally import round_tally

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
HOST = Actor("host")
GUEST = Actor("guest")

# Player ids are chosen far from every other number a payload carries (question ids, rounds,
# positions, counts, versions), so "no player id anywhere" can be checked on every value.
H1, H2, AI = 9001, 9002, 9003
PLAYER_IDS = (H1, H2, AI)
JURORS = (701, 702, 703, 704)
J1, J2, J3, J4 = JURORS
Q11, Q12, Q21, Q22 = 11, 12, 21, 22  # round 1: mcq, open; round 2: open, mcq
READ_ALOUD = ["text", "read_aloud"]
CHOICES = ["a red umbrella", "a blue kettle", "a green bicycle", "a yellow hat", "a white cat"]


def make_players() -> dict[int, PlayerInfo]:
    return {
        # a young child's page reads aloud: that must never reach the jury either
        H1: PlayerInfo(
            H1, "Hildegard Brunnhuber", PlayerKind.HUMAN, age=10, stage="middle concrete", answer_modes=READ_ALOUD
        ),
        H2: PlayerInfo(H2, "Bartholomew Quince", PlayerKind.HUMAN, age=24, stage="formal"),
        AI: PlayerInfo(AI, "Skynet Mk7", PlayerKind.AI),
    }


def make_questions() -> dict[int, QuestionInfo]:
    def mcq(qid: int, round_: int, position: int) -> QuestionInfo:
        return QuestionInfo(
            qid,
            round_,
            position,
            f"q{qid}",
            "What does the man carry?",
            QuestionType.MCQ,
            list(CHOICES),
            answer_index=2,
            clip_source="clip.mp4",
            clip_start=1.0,
            clip_end=9.5,
            clip_kind=ClipKind.SHOT.value,
        )

    def open_(qid: int, round_: int, position: int) -> QuestionInfo:
        return QuestionInfo(
            qid,
            round_,
            position,
            f"q{qid}",
            "Why is the woman upset?",
            QuestionType.OPEN,
            [],
            reference_answer="Her brother forgot her birthday.",
            clip_source="scene.mp4",
            clip_kind=ClipKind.SCENE.value,
        )

    return {Q11: mcq(Q11, 1, 1), Q12: open_(Q12, 1, 2), Q21: open_(Q21, 2, 1), Q22: mcq(Q22, 2, 2)}


def make_state(
    *,
    seed: int = 1234,
    reveal_policy: RevealPolicy = RevealPolicy.PER_ROUND,
    ai_votes_per_juror: int = 1,
    open_join: bool = False,
    answer_seconds: int | None = None,
    vote_seconds: int | None = None,
) -> LiveState:
    return LiveState(
        session_id=1,
        code="ABC123",
        name="Engine test session",
        seed=seed,
        rounds=2,
        answer_seconds=answer_seconds,
        vote_seconds=vote_seconds,
        reveal_policy=reveal_policy,
        ai_votes_per_juror=ai_votes_per_juror,
        open_join=open_join,
        phase=Phase.DRAFT,
        deadline=None,
        round=None,
        position=None,
        state_version=0,
        audience_versions={a: 0 for a in AUDIENCES},
        players=make_players(),
        questions=make_questions(),
        round_info={1: RoundInfo(1, theme="emotion recognition"), 2: RoundInfo(2, theme="dialogue context")},
        juror_labels={"J1", "J2", "J3", "J4"},
    )


# --- blinding ----------------------------------------------------------------------------------

# Keys that would carry identity (or the answer time) to the jury.
FORBIDDEN_KEYS = {
    "kind",
    "name",
    "token",
    "latency_ms",
    "submitted_at",
    "player",
    "player_id",
    "age",
    "stage",
    "is_ai",
    "players",
    "participants",
    "qid",
    "answer_index",
    "reference_answer",
    "tells",
    "answer_modes",  # a page that reads aloud is a young child's
    "notices",
    "speech",
    # a spoken answer's recording: a child's voice tells her age; the jury reads the confirmed transcript only
    "recording",
    "recordings",
    "recorded",
    "file",
    "mime",
    "duration_ms",
    "provenance",
    "transcribed_by",
    # a page's device check (a spoken player's microphone tells a child's page): the host's Readiness panel only
    "readiness",
    "device_check",
    "microphone",
    "problems",
}
# Words that give a child away in a jury payload: an answer mode ("spoken" is a word), a recording's file or route
ANSWER_MODE_WORDS = ("read_aloud", ".webm", ".ogg", ".m4a", ".wav", "/recordings/")
IDENTITY_KEYS = {"is_ai", "age", "stage"}  # what the identities event may say, by alias
CLIP_KINDS = {kind.value for kind in ClipKind} | {None}


def assert_blind(
    audience: str, event: str, payload: Any, players: dict[int, PlayerInfo], *, snapshot: bool = False
) -> None:
    """A juror/stage payload carries no player name, no player id, no identity or timing key.

    Only the ``identities`` event may carry is_ai/age/stage (by alias); in a snapshot
    (``snapshot=True``) the same goes for its ``identities`` list, and the session's own ``name``
    may be there.  A clip's ``kind`` (shot/scene) is the one ``kind`` key allowed: it says nothing
    about a player.
    """
    names = [player.name.casefold() for player in players.values()]
    ids = {player.id for player in players.values()}
    id_words = re.compile(r"\b(" + "|".join(str(i) for i in ids) + r")\b") if ids else None
    where = f"{audience}/{event}"

    def text_ok(text: str, path: str) -> None:
        folded = text.casefold()
        assert not any(name in folded for name in names), f"{where}: a player's name in {path}: {text!r}"
        assert not (id_words and id_words.search(text)), f"{where}: a player's id in {path}: {text!r}"
        assert not any(word in folded for word in ANSWER_MODE_WORDS), (
            f"{where}: an answer mode or a recording in {path}: {text!r}"
        )

    def walk(value: Any, path: str, parent_key: str | None, identity_ok: bool) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                assert isinstance(key, str), f"{where}: a non-text key {key!r} at {path}"
                text_ok(key, path)
                if key == "kind" and parent_key == "clip":
                    assert item in CLIP_KINDS, f"{where}: clip kind {item!r} at {path}"
                elif key == "name" and parent_key == "session" and snapshot:
                    pass
                else:
                    allowed = key in IDENTITY_KEYS and identity_ok
                    assert key not in FORBIDDEN_KEYS or allowed, f"{where}: key {key!r} at {path}"
                walk(item, f"{path}.{key}", key, identity_ok or (snapshot and key == "identities"))
        elif isinstance(value, (list, tuple)):
            for index, item in enumerate(value):
                walk(item, f"{path}[{index}]", parent_key, identity_ok)
        elif isinstance(value, bool) or value is None:
            pass
        elif isinstance(value, (int, float)):
            assert value not in ids, f"{where}: a player's id {value!r} at {path}"
        elif isinstance(value, str):
            text_ok(value, path)
        else:  # anything but plain JSON (a dataclass, a datetime, an enum object...) has no place here
            raise AssertionError(f"{where}: a {type(value).__name__} at {path}: {value!r}")

    walk(payload, "payload", None, event == "identities")


def assert_identities_payload(payload: dict[str, Any], state: LiveState) -> None:
    """An identities event: by alias, exactly the round's revealed players."""
    assert set(payload) == {"round", "revealed"}
    info = state.round_info[payload["round"]]
    assert [row["alias"] for row in payload["revealed"]] == sorted(info.aliases[pid] for pid in info.revealed)
    for row in payload["revealed"]:
        assert set(row) == {"alias", "is_ai", "age", "stage"}
        player = state.players[info.player_of(row["alias"])]
        assert row["is_ai"] is (player.kind is PlayerKind.AI)
        assert (row["age"], row["stage"]) == ((None, None) if row["is_ai"] else (player.age, player.stage))


# --- driving the engine ------------------------------------------------------------------------


class Run:
    """One session driven through ``decide`` with a clock; keeps every message and effect."""

    def __init__(self, state: LiveState, now: datetime = T0):
        self.state, self.now = state, now
        self.outcomes: list[Outcome] = []

    def at(self, seconds: float) -> datetime:
        return T0 + timedelta(seconds=seconds)

    def do(
        self,
        actor: Actor,
        name: str,
        *,
        advance: float = 1,
        at: datetime | None = None,
        key: str | None = None,
        **args: Any,
    ) -> list[Outcome]:
        """An action that must be accepted: its outcomes (the clock's first, if any)."""
        self.now = at or self.now + timedelta(seconds=advance)
        version = self.state.state_version
        try:
            outcomes = decide(self.state, Action(actor, name, read_args(name, args, key), key), self.now, round_tally)
        except Refusal as refusal:
            raise AssertionError(f"{actor.label} {name} {args} refused: {refusal.code}: {refusal.message}") from None
        assert self.state.state_version == version + len(outcomes)
        assert [o.reply["state_version"] for o in outcomes] == list(range(version + 1, version + 1 + len(outcomes)))
        if name != "tick":
            assert outcomes and isinstance(outcomes[-1].effects[-1], LogEvent)
            assert outcomes[-1].effects[-1].kind == name
        self.outcomes += outcomes
        return outcomes

    def refuse(
        self, actor: Actor, name: str, code: str, *, advance: float = 1, at: datetime | None = None, **args: Any
    ) -> Refusal:
        """An action that must be refused with ``code``, changing nothing (no deadline runs out meanwhile)."""
        self.now = at or self.now + timedelta(seconds=advance)
        before = copy.deepcopy(self.state)
        with pytest.raises(Refusal) as caught:  # a field refused by the action's schema, or by the rules
            decide(self.state, Action(actor, name, read_args(name, args)), self.now, round_tally)
        refusal = caught.value
        assert refusal.code == code, f"{actor.label} {name} {args}: {refusal.code} ({refusal.message}), not {code}"
        assert refusal.message and refusal.as_error() == {"code": code, "message": refusal.message}
        assert refusal.before == []
        assert self.state.state_version == before.state_version
        assert self.state == before
        return refusal

    # --- reading what was sent ---

    def messages(self, audience: str | None = None, event: str | None = None):
        return [
            m
            for o in self.outcomes
            for m in o.messages
            if (audience is None or m.audience == audience) and (event is None or m.event == event)
        ]

    def effects(self, kind: type | None = None) -> list:
        return [e for o in self.outcomes for e in o.effects if kind is None or isinstance(e, kind)]

    def assert_all_blind(self) -> None:
        for message in self.messages():
            if message.audience in ("juror", "stage"):
                assert_blind(message.audience, message.event, message.payload, self.state.players)

    # --- bits of the flow ---

    def alias(self, player: int, round_: int | None = None) -> str:
        return self.state.round_info[round_ or self.state.round].aliases[player]

    def question(
        self, answers: dict[int, dict[str, Any]] | list[tuple[int, dict[str, Any]]], seconds: int | None = None
    ) -> dict[str, Any]:
        """show_question -> open_answering -> answers -> close_answering -> reveal; the jury's answers payload."""
        self.do(HOST, "show_question")
        item = self.state.current_question
        assert self.state.phase is Phase.CLIP and item.shown_at == self.now
        self.do(HOST, "open_answering", **({"seconds": seconds} if seconds else {}))
        assert self.state.phase is Phase.ANSWERING
        for player, args in answers.items() if isinstance(answers, dict) else answers:
            self.do(Actor("player", player), "answer", question=item.id, **args)
        self.do(HOST, "close_answering")
        assert self.state.phase is Phase.ANSWERS_CLOSED and item.answers_closed_at == self.now
        self.do(HOST, "reveal")
        assert self.state.phase is Phase.JUDGING and item.revealed_at == self.now
        shown = self.outcomes[-1].messages
        jury = [m for m in shown if m.audience == "juror" and m.event == "answers"]
        stage = [m for m in shown if m.audience == "stage" and m.event == "answers"]
        assert len(jury) == 1 and len(stage) == 1 and jury[0].payload == stage[0].payload
        return jury[0].payload

    def sheets(self, question: int) -> None:
        """Every juror fills the judgment sheet for every alias of the question."""
        aliases = sorted(self.state.round_info[self.state.round].aliases.values())
        for n, juror in enumerate(JURORS):
            for alias in aliases:
                self.do(
                    Actor("juror", juror),
                    "sheet",
                    question=question,
                    alias=alias,
                    note=f"note {n} on {alias}",
                    human_likeness=1 + (n + ord(alias)) % 5,
                    looks_like_ai=(n + ord(alias)) % 2 == 0,
                )

    def vote(self, juror: int, alias: str | None, **args: Any) -> None:
        self.do(Actor("juror", juror), "vote", round=self.state.round, alias=alias, **args)


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return 100 * (centre - half), 100 * (centre + half)


def assert_permutation(state: LiveState, number: int, players: list[int]) -> None:
    aliases = state.round_info[number].aliases
    assert sorted(aliases) == sorted(players)
    assert sorted(aliases.values()) == list(ALIASES[: len(players)])
