"""Creating a session from a configuration: validation, question placement, players, rounds."""

from __future__ import annotations

import difflib
import random
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..banks import InputError, Problem, bank_by_name, bank_records, records_frame
from ..problems import load_json
from ..models import (
    Event,
    PassRule,
    Player,
    PlayerKind,
    Question,
    RevealPolicy,
    ScoringMethod,
    SessionQuestion,
    SessionRound,
    VttSession,
)

JOIN_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read aloud from a projector
JOIN_CODE_LENGTH = 6
MAX_INT = 2**31 - 1  # INTEGER columns on PostgreSQL
MAX_TIMER_SECONDS = 3600
CONFIG_KEYS = {"name", "bank", "rounds", "questions_per_round", "seed", "answer_seconds", "vote_seconds",
               "reveal_policy", "pass_rule", "pass_alpha", "pass_threshold_pct", "ai_votes_per_juror",
               "scoring_method", "round_themes", "players"}
PLAYER_KEYS = {"name", "kind", "age", "stage", "backends"}


@dataclass
class PlayerConfig:
    name: str
    kind: PlayerKind
    age: int | None = None
    stage: str | None = None
    backends: dict[str, str] = field(default_factory=dict)


@dataclass
class SessionConfig:
    name: str
    bank: str
    rounds: int = 5
    questions_per_round: int = 6
    seed: int = 0
    answer_seconds: int | None = None
    vote_seconds: int | None = None
    reveal_policy: RevealPolicy = RevealPolicy.END
    pass_rule: PassRule = PassRule.HUMAN_TIE
    pass_alpha: float = 0.05
    pass_threshold_pct: float = 70.0
    ai_votes_per_juror: int = 1
    scoring_method: ScoringMethod = ScoringMethod.COGSCI2024
    round_themes: list[str] = field(default_factory=list)
    players: list[PlayerConfig] = field(default_factory=list)

    @classmethod
    def from_file(cls, path: Path) -> SessionConfig:
        return cls.from_dict(load_json(path), source=path.name)

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "session") -> SessionConfig:
        """Validate a configuration mapping; raise :class:`InputError` naming every bad field."""
        check = _FieldCheck(source)
        if not isinstance(data, dict):
            raise InputError([Problem(source, None, None, "expected a JSON object")])
        check.unknown_keys(data, CONFIG_KEYS, "")
        config = cls(
            name=check.text(data, "name"),
            bank=check.text(data, "bank"),
            rounds=check.integer(data, "rounds", 5, minimum=1, maximum=100),
            questions_per_round=check.integer(data, "questions_per_round", 6, minimum=1, maximum=1000),
            seed=check.integer(data, "seed", 0, minimum=0),
            answer_seconds=check.integer(data, "answer_seconds", None, minimum=1, maximum=MAX_TIMER_SECONDS),
            vote_seconds=check.integer(data, "vote_seconds", None, minimum=1, maximum=MAX_TIMER_SECONDS),
            reveal_policy=check.choice(data, "reveal_policy", RevealPolicy, RevealPolicy.END),
            pass_rule=check.choice(data, "pass_rule", PassRule, PassRule.HUMAN_TIE),
            pass_alpha=check.number(data, "pass_alpha", 0.05, low=0, high=1, open_interval=True),
            pass_threshold_pct=check.number(data, "pass_threshold_pct", 70.0, low=0, high=100),
            ai_votes_per_juror=check.integer(data, "ai_votes_per_juror", 1, minimum=1),
            scoring_method=check.choice(data, "scoring_method", ScoringMethod, ScoringMethod.COGSCI2024),
        )
        config.round_themes = check.themes(data, config.rounds)
        players = data.get("players")
        if not isinstance(players, list) or not players:
            check.problem("players", "needs a list of players (humans and at least one AI)")
            players = []
        names: set[str] = set()
        for index, item in enumerate(players):
            player = check.player(item, f"players[{index}]")
            if player is None:
                continue
            if player.name in names:
                check.problem(f"players[{index}].name", f"{player.name!r} appears twice")
            names.add(player.name)
            config.players.append(player)
        ai_count = sum(p.kind is PlayerKind.AI for p in config.players)
        if players and not ai_count:
            check.problem("players", "needs at least one AI player (kind \"ai\")")
        if config.players and ai_count == len(config.players):
            check.problem("players", "needs at least one human player (kind \"human\")")
        if players and len(config.players) < 2:
            check.problem("players", "needs at least two players")
        if ai_count and config.ai_votes_per_juror > ai_count:
            check.problem("ai_votes_per_juror", f"is {config.ai_votes_per_juror} but the session has {ai_count} AI player(s)")
        check.raise_if_any()
        return config


class _FieldCheck:
    def __init__(self, source: str):
        self.source = source
        self.problems: list[Problem] = []

    def problem(self, name: str, message: str) -> None:
        self.problems.append(Problem(self.source, None, name, message))

    def raise_if_any(self) -> None:
        if self.problems:
            raise InputError(self.problems)

    def text(self, data: dict, name: str) -> str:
        value = str(data.get(name) or "").strip()
        if not value:
            self.problem(name, "is required")
        return value

    def unknown_keys(self, data: dict, known: set[str], prefix: str) -> None:
        for key in data:
            if key not in known:
                hint = difflib.get_close_matches(str(key), known, n=1)
                self.problem(f"{prefix}{key}", "is not a known setting" + (f" (did you mean {hint[0]!r}?)" if hint else ""))

    def integer(self, data: dict, name: str, default: int | None, *, minimum: int,
                maximum: int = MAX_INT) -> int | None:
        value = data.get(name, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
            self.problem(name, f"must be a whole number from {minimum} to {maximum}, not {value!r}")
            return default
        return value

    def number(self, data: dict, name: str, default: float, *, low: float, high: float,
               open_interval: bool = False) -> float:
        value = data.get(name, default)
        inside = isinstance(value, (int, float)) and not isinstance(value, bool) and (
            low < value < high if open_interval else low <= value <= high)
        if not inside:
            bounds = f"strictly between {low:g} and {high:g}" if open_interval else f"between {low:g} and {high:g}"
            self.problem(name, f"must be a number {bounds}, not {value!r}")
            return default
        return float(value)

    def themes(self, data: dict, rounds: int) -> list[str]:
        themes = data.get("round_themes", [])
        if not isinstance(themes, list) or not all(isinstance(t, str) for t in themes):
            self.problem("round_themes", "must be a list of texts, one per round")
            return []
        if len(themes) > rounds:
            self.problem("round_themes", f"has {len(themes)} themes for {rounds} rounds")
        return [t.strip() for t in themes]

    def choice(self, data: dict, name: str, enum_type, default):
        value = data.get(name, default.value)
        try:
            return enum_type(value)
        except ValueError:
            self.problem(name, f"must be one of {', '.join(m.value for m in enum_type)}, not {value!r}")
            return default

    def player(self, item: Any, where: str) -> PlayerConfig | None:
        if not isinstance(item, dict):
            self.problem(where, "must be an object with name and kind")
            return None
        self.unknown_keys(item, PLAYER_KEYS, f"{where}.")
        name = str(item.get("name") or "").strip()
        if not name:
            self.problem(f"{where}.name", "is required")
        kind = item.get("kind")
        if kind not in ("human", "ai"):
            self.problem(f"{where}.kind", f"must be \"human\" or \"ai\", not {kind!r}")
        age = item.get("age")
        if age is not None and (isinstance(age, bool) or not isinstance(age, int) or not 0 <= age < 150):
            self.problem(f"{where}.age", f"must be a whole number of years, not {age!r}")
            age = None
        backends = item.get("backends") or {}
        if not isinstance(backends, dict) or any(k not in ("mcq", "open", "any") for k in backends):
            self.problem(f"{where}.backends", "must map question types (mcq, open) to program names")
            backends = {}
        if not name or kind not in ("human", "ai"):
            return None
        return PlayerConfig(name, PlayerKind(kind), age, (str(item["stage"]) if item.get("stage") else None),
                            {k: str(v) for k, v in backends.items()})


def create_session(db: Session, config: SessionConfig, *, actor: str = "host") -> VttSession:
    """Create a session with its questions dealt into rounds; raise :class:`InputError` when impossible.

    Questions come from the bank's own ``round`` column when it fills every round exactly;
    otherwise the set builder picks a balanced set and deals it (seeded by the session seed).
    """
    bank = bank_by_name(db, config.bank)
    if bank is None:
        raise InputError([Problem("session", None, "bank", f"no question bank named {config.bank!r}")])
    if db.scalar(select(VttSession.id).where(VttSession.name == config.name)) is not None:
        raise InputError([Problem("session", None, "name", f"a session named {config.name!r} exists already")])
    placement = _place_questions(db, bank.id, bank_records(db, bank), config)
    session = VttSession(
        name=config.name, bank=bank, join_code=_new_join_code(db), rounds=config.rounds,
        questions_per_round=config.questions_per_round, seed=config.seed, answer_seconds=config.answer_seconds,
        vote_seconds=config.vote_seconds, reveal_policy=config.reveal_policy, pass_rule=config.pass_rule,
        pass_alpha=config.pass_alpha, pass_threshold_pct=config.pass_threshold_pct,
        ai_votes_per_juror=config.ai_votes_per_juror, scoring_method=config.scoring_method,
    )
    session.round_states = [
        SessionRound(number=n, theme=config.round_themes[n - 1] if n <= len(config.round_themes) else None)
        for n in range(1, config.rounds + 1)]
    session.players = [Player(name=p.name, kind=p.kind, age=p.age, stage=p.stage, backends=p.backends,
                              token=secrets.token_urlsafe(18)) for p in config.players]
    session.questions = [SessionQuestion(question_id=qid, round=r, position=pos) for qid, r, pos in placement]
    db.add(session)
    db.flush()
    db.add(Event(session_id=session.id, kind="session.created", actor=actor,
                 payload={"name": config.name, "bank": config.bank, "seed": config.seed,
                          "questions": len(placement), "players": len(config.players)}))
    return session


def _place_questions(db: Session, bank_id: int, records, config: SessionConfig) -> list[tuple[int, int, int]]:
    """``(question id, round, position)`` for every question of the session."""
    ids = dict(db.execute(select(Question.qid, Question.id).where(Question.bank_id == bank_id)).all())
    needed = config.rounds * config.questions_per_round
    by_round: dict[int, list[str]] = {}
    for record in records:
        if record.round is not None:
            by_round.setdefault(record.round, []).append(record.qid)
    preset = sorted(by_round) == list(range(1, config.rounds + 1)) and all(
        len(qids) == config.questions_per_round for qids in by_round.values())
    if preset:
        # The bank fixes which questions make a round; the recorded seed still shuffles their order.
        rng = random.Random(config.seed)
        for qids in by_round.values():
            rng.shuffle(qids)
        return [(ids[qid], r, pos) for r, qids in sorted(by_round.items()) for pos, qid in enumerate(qids, 1)]
    if len(records) < needed:
        raise InputError([Problem("session", None, "questions_per_round",
                                 f"{config.rounds} x {config.questions_per_round} = {needed} questions needed, "
                                 f"the bank has {len(records)}")])
    from analysis.builder import build_set

    built = build_set(records_frame(records), needed, config.rounds, seed=config.seed)
    return [(ids[row.qid], int(row.round), int(row.position)) for row in built.questions.itertuples()]


def _new_join_code(db: Session) -> str:
    while True:
        code = "".join(secrets.choice(JOIN_ALPHABET) for _ in range(JOIN_CODE_LENGTH))
        if db.scalar(select(VttSession.id).where(VttSession.join_code == code)) is None:
            return code
