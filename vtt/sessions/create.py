"""Creating a session from a configuration: validation, question placement, players, jurors, rounds.

The configuration is the session's *design*: the JSON document is stored with the session as given
(plus the jurors when they came from elsewhere) and hashed, so reports can name the frozen,
pre-registered design they come from.
"""

from __future__ import annotations

import csv
import difflib
import hashlib
import json
import random
import re
import secrets
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..banks import InputError, Problem, bank_by_name, bank_records, records_table
from ..db import added_unless_taken
from ..models import (
    DEFAULT_ANSWER_MODES,
    AnswerMode,
    ClipPlayback,
    Event,
    Juror,
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
from ..problems import load_json
from ..protocol.vocabulary import LANGUAGE_TAG, MAX_LANGUAGE_TAG, MAX_SQL_INTEGER

JOIN_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read aloud from a projector
JOIN_CODE_LENGTH = 6
MAX_TIMER_SECONDS = 3600
CONFIG_KEYS = {
    "name",
    "bank",
    "rounds",
    "questions_per_round",
    "seed",
    "answer_seconds",
    "vote_seconds",
    "reveal_policy",
    "pass_rule",
    "pass_alpha",
    "pass_threshold_pct",
    "ai_votes_per_juror",
    "scoring_method",
    "round_themes",
    "players",
    "jurors",
    "open_join",
    "clip_playback",
    "language",
}
PLAYER_KEYS = {"name", "kind", "age", "stage", "backends", "answer_modes"}
ANSWER_MODES = tuple(mode.value for mode in AnswerMode)  # text, spoken, read_aloud
ANSWERING_MODES = (AnswerMode.TEXT.value, AnswerMode.SPOKEN.value)  # how a player answers; read_aloud only reads
JUROR_KEYS = {"label", "age_band", "sex", "expert", "group"}
# Database column widths (vtt.models), checked here so a design is refused whole, with every problem named.
MAX_SESSION_NAME = 200
MAX_PLAYER_TEXT = 120
MAX_JUROR_LABEL = 40
MAX_JUROR_TEXT = 24  # age band, sex
MAX_JUROR_GROUP = 40
MAX_LISTED_JURORS = 1000  # jurors made with the session, a link each (a design's list, a CSV, --jurors N)
EXPERT_WORDS = {"yes": True, "true": True, "1": True, "no": False, "false": False, "0": False, "": None}


@dataclass
class PlayerConfig:
    name: str
    kind: PlayerKind
    age: int | None = None
    stage: str | None = None
    backends: dict[str, str] = field(default_factory=dict)
    answer_modes: list[str] = field(default_factory=lambda: list(DEFAULT_ANSWER_MODES))

    def as_design(self) -> dict[str, Any]:
        """The player as a design entry; ``answer_modes`` only when not the default (absent means ["text"])."""
        entry = {key: value for key, value in asdict(self).items() if key != "answer_modes"}
        if self.answer_modes != list(DEFAULT_ANSWER_MODES):
            entry["answer_modes"] = list(self.answer_modes)
        return entry


@dataclass
class JurorConfig:
    label: str
    age_band: str | None = None
    sex: str | None = None
    expert: bool | None = None  # AI expert; None: not asked
    group: str | None = None  # stored as Juror.juror_group

    def as_design(self) -> dict[str, Any]:
        """The juror as a design entry: its label and the fields that are set."""
        return {
            "label": self.label,
            **{key: value for key, value in asdict(self).items() if key != "label" and value is not None},
        }


@dataclass
class SessionConfig:
    name: str
    bank: str
    rounds: int = 5
    questions_per_round: int = 6
    seed: int | None = None  # None: drawn at random when the session is created (and recorded)
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
    jurors: list[JurorConfig] = field(default_factory=list)
    open_join: bool = False  # jurors may also join with the join code and a nickname
    clip_playback: ClipPlayback = ClipPlayback.HOST  # host: the host starts each clip for everyone at once
    # The questions' language (a BCP 47 tag such as ko or en-GB): the players' pages read aloud in it and are shown in
    # it (unless a link asks otherwise), and spoken answers are transcribed in it.  None: each page's own language.
    language: str | None = None
    design: dict[str, Any] = field(default_factory=dict)  # the document validated, stored and hashed as given

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
            seed=check.integer(data, "seed", None, minimum=0),
            answer_seconds=check.integer(data, "answer_seconds", None, minimum=1, maximum=MAX_TIMER_SECONDS),
            vote_seconds=check.integer(data, "vote_seconds", None, minimum=1, maximum=MAX_TIMER_SECONDS),
            reveal_policy=check.choice(data, "reveal_policy", RevealPolicy, RevealPolicy.END),
            pass_rule=check.choice(data, "pass_rule", PassRule, PassRule.HUMAN_TIE),
            pass_alpha=check.number(data, "pass_alpha", 0.05, low=0, high=1, open_interval=True),
            pass_threshold_pct=check.number(data, "pass_threshold_pct", 70.0, low=0, high=100),
            ai_votes_per_juror=check.integer(data, "ai_votes_per_juror", 1, minimum=1),
            scoring_method=check.choice(data, "scoring_method", ScoringMethod, ScoringMethod.COGSCI2024),
            open_join=check.flag(data, "open_join", False),
            clip_playback=check.choice(data, "clip_playback", ClipPlayback, ClipPlayback.HOST),
            language=check.language(data),
        )
        if len(config.name) > MAX_SESSION_NAME:
            check.problem("name", f"is {len(config.name)} characters long; at most {MAX_SESSION_NAME}")
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
            check.problem("players", 'needs at least one AI player (kind "ai")')
        if config.players and ai_count == len(config.players):
            check.problem("players", 'needs at least one human player (kind "human")')
        if players and len(config.players) < 2:
            check.problem("players", "needs at least two players")
        if ai_count and config.ai_votes_per_juror > ai_count:
            check.problem(
                "ai_votes_per_juror", f"is {config.ai_votes_per_juror} but the session has {ai_count} AI player(s)"
            )
        config.jurors = check.jurors(data.get("jurors"))
        try:  # a plain copy, detached from the caller's; NaN and Infinity are not JSON (PostgreSQL refuses them)
            config.design = json.loads(json.dumps(data, ensure_ascii=False, allow_nan=False))
        except ValueError:
            check.problem("", "contains NaN or Infinity, which JSON does not allow")
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

    def language(self, data: dict) -> str | None:
        value = data.get("language")
        if value is None or value == "":
            return None
        if not (isinstance(value, str) and len(value) <= MAX_LANGUAGE_TAG and re.fullmatch(LANGUAGE_TAG, value)):
            self.problem("language", f"must be a language tag such as ko or en-GB, not {value!r}")
            return None
        return value

    def unknown_keys(self, data: dict, known: set[str], prefix: str) -> None:
        for key in data:
            if key not in known:
                hint = difflib.get_close_matches(str(key), known, n=1)
                self.problem(
                    f"{prefix}{key}", "is not a known setting" + (f" (did you mean {hint[0]!r}?)" if hint else "")
                )

    def integer(
        self, data: dict, name: str, default: int | None, *, minimum: int, maximum: int = MAX_SQL_INTEGER
    ) -> int | None:
        value = data.get(name, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
            self.problem(name, f"must be a whole number from {minimum} to {maximum}, not {value!r}")
            return default
        return value

    def number(
        self, data: dict, name: str, default: float, *, low: float, high: float, open_interval: bool = False
    ) -> float:
        value = data.get(name, default)
        inside = (
            isinstance(value, (int, float))
            and not isinstance(value, bool)
            and (low < value < high if open_interval else low <= value <= high)
        )
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

    def flag(self, data: dict, name: str, default: bool) -> bool:
        value = data.get(name, default)
        if not isinstance(value, bool):
            self.problem(name, f"must be true or false, not {value!r}")
            return default
        return value

    def jurors(self, items: Any) -> list[JurorConfig]:
        if items is None:
            return []
        if not isinstance(items, list):
            self.problem("jurors", "must be a list of jurors (objects with a label)")
            return []
        if len(items) > MAX_LISTED_JURORS:
            self.problem("jurors", f"has {len(items)} jurors; at most {MAX_LISTED_JURORS}")
        jurors: list[JurorConfig] = []
        labels: set[str] = set()
        for index, item in enumerate(items):
            where = f"jurors[{index}]"
            if not isinstance(item, dict):
                self.problem(where, "must be an object with a label (and optionally age_band, sex, expert, group)")
                continue
            self.unknown_keys(item, JUROR_KEYS, f"{where}.")

            def problem(name: str, message: str, where: str = where) -> None:
                self.problem(f"{where}.{name}", message)

            juror = juror_config(item, problem, labels)
            if juror is not None:
                jurors.append(juror)
        return jurors

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
        elif len(name) > MAX_PLAYER_TEXT:
            self.problem(f"{where}.name", f"is {len(name)} characters long; at most {MAX_PLAYER_TEXT}")
        if item.get("stage") and len(str(item["stage"])) > MAX_PLAYER_TEXT:
            self.problem(f"{where}.stage", f"is {len(str(item['stage']))} characters long; at most {MAX_PLAYER_TEXT}")
        kind = item.get("kind")
        if kind not in ("human", "ai"):
            self.problem(f"{where}.kind", f'must be "human" or "ai", not {kind!r}')
        age = item.get("age")
        if age is not None and (isinstance(age, bool) or not isinstance(age, int) or not 0 <= age < 150):
            self.problem(f"{where}.age", f"must be a whole number of years, not {age!r}")
            age = None
        backends = item.get("backends") or {}
        if not isinstance(backends, dict) or any(k not in ("mcq", "open", "any") for k in backends):
            self.problem(f"{where}.backends", "must map question types (mcq, open) to program names")
            backends = {}
        modes = self.answer_modes(item.get("answer_modes", list(DEFAULT_ANSWER_MODES)), kind, f"{where}.answer_modes")
        if not name or kind not in ("human", "ai"):
            return None
        return PlayerConfig(
            name,
            PlayerKind(kind),
            age,
            (str(item["stage"]) if item.get("stage") else None),
            {k: str(v) for k, v in backends.items()},
            modes,
        )

    def answer_modes(self, value: Any, kind: Any, where: str) -> list[str]:
        """A player's ``answer_modes``: a list of text, spoken, read_aloud, no repeats, at least one of text and
        spoken (how the player answers; read_aloud only adds reading); an AI player's only ["text"]."""
        default = list(DEFAULT_ANSWER_MODES)
        names = ", ".join(f'"{mode}"' for mode in ANSWER_MODES)
        if not isinstance(value, list) or not all(isinstance(mode, str) for mode in value):
            self.problem(where, f"must be a list of answer modes ({names}), not {value!r}")
            return default
        unknown = [mode for mode in value if mode not in ANSWER_MODES]
        repeated = sorted({mode for mode in value if value.count(mode) > 1})
        if unknown:
            self.problem(where, f"has {', '.join(map(repr, unknown))}: the answer modes are {names}")
        if repeated:
            self.problem(where, f"names {', '.join(map(repr, repeated))} twice")
        if unknown or repeated:
            return default
        if kind == PlayerKind.AI.value and value != default:
            self.problem(where, f'must be ["text"] for an AI player (it answers in text), not {value!r}')
            return default
        if not any(mode in ANSWERING_MODES for mode in value):
            self.problem(
                where,
                f'needs "text" or "spoken" (how the player answers; "read_aloud" only reads aloud), not {value!r}',
            )
            return default
        return [mode for mode in ANSWER_MODES if mode in value]  # in one order, whatever order the design gave


def juror_config(item: dict[str, Any], report, labels: set[str]) -> JurorConfig | None:
    """Check one juror's fields, calling ``report(field, message)`` for each problem.

    ``labels`` holds the labels seen so far (a repeated one is a problem) and gains this one.
    The same rules serve the design's ``jurors`` list and a jurors CSV, so both name the same problems.
    """
    label = item.get("label")
    label = label.strip() if isinstance(label, str) else label
    ok = True
    if label is None or label == "":
        report("label", "is required")
        ok = False
    elif not isinstance(label, str):
        report("label", f"must be a text, not {label!r}")
        ok = False
    elif len(label) > MAX_JUROR_LABEL:
        report("label", f"is {len(label)} characters long; at most {MAX_JUROR_LABEL}")
        ok = False
    elif "\x00" in label:
        report("label", "contains a NUL character")
        ok = False
    elif label in labels:
        report("label", f"{label!r} appears twice")
        ok = False
    else:
        labels.add(label)
    texts: dict[str, str | None] = {}
    for name, limit in (("age_band", MAX_JUROR_TEXT), ("sex", MAX_JUROR_TEXT), ("group", MAX_JUROR_GROUP)):
        value = item.get(name)
        if value is None:
            texts[name] = None
        elif not isinstance(value, str):
            report(name, f"must be a text, not {value!r}")
            ok = False
        elif len(value.strip()) > limit:
            report(name, f"is {len(value.strip())} characters long; at most {limit}")
            ok = False
        elif "\x00" in value:
            report(name, "contains a NUL character")
            ok = False
        else:
            texts[name] = value.strip() or None
    expert = item.get("expert")
    if expert is not None and not isinstance(expert, bool):
        report("expert", f"must be true, false or null, not {expert!r}")
        ok = False
    if not ok:
        return None
    return JurorConfig(label, texts["age_band"], texts["sex"], expert, texts["group"])


def numbered_jurors(count: int) -> list[dict[str, Any]]:
    """``count`` jurors labelled J01, J02, ... (at least two digits, more when ``count`` needs them)."""
    if not 0 <= count <= MAX_LISTED_JURORS:
        raise InputError([Problem("jurors", None, None, f"must be from 0 to {MAX_LISTED_JURORS}, not {count}")])
    width = max(2, len(str(count)))
    return [{"label": f"J{number:0{width}d}"} for number in range(1, count + 1)]


def read_jurors_csv(path: Path) -> list[dict[str, Any]]:
    """Jurors from a CSV ``label,age_band,sex,expert[,group]`` as design entries; all or nothing.

    ``expert`` is yes/no, true/false, 1/0 or empty (not asked). Problems name the file, the row
    (spreadsheet numbering: the header is row 1) and the field.
    """
    problems: list[Problem] = []
    known = ["label", "age_band", "sex", "expert", "group"]
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            rows = list(csv.reader(handle, strict=True))
    except csv.Error as error:
        raise InputError([Problem(path.name, None, None, f"not a valid CSV file: {error}")]) from None
    except UnicodeDecodeError:
        raise InputError([Problem(path.name, None, None, "not UTF-8 text")]) from None
    if not rows or not any(cell.strip() for cell in rows[0]):
        raise InputError([Problem(path.name, 1, None, f"needs a header row: {','.join(known)}")])
    header = [cell.strip().lower() for cell in rows[0]]
    for position, name in enumerate(header):
        if name not in known:
            hint = difflib.get_close_matches(name, known, n=1)
            problems.append(
                Problem(
                    path.name,
                    1,
                    name or f"column {position + 1}",
                    "is not a known column" + (f" (did you mean {hint[0]!r}?)" if hint else ""),
                )
            )
        elif header.index(name) != position:
            problems.append(Problem(path.name, 1, name, "appears twice"))
    if "label" not in header:
        problems.append(Problem(path.name, 1, "label", "column is missing"))
    if problems:
        raise InputError(problems)
    jurors: list[dict[str, Any]] = []
    labels: set[str] = set()
    for number, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) > len(header):
            problems.append(Problem(path.name, number, None, f"has {len(row)} cells for {len(header)} columns"))
            continue
        cells = {name: row[i].strip() if i < len(row) else "" for i, name in enumerate(header)}

        def report(name: str, message: str, row_number: int = number) -> None:
            problems.append(Problem(path.name, row_number, name, message))

        item: dict[str, Any] = {name: cells[name] or None for name in ("age_band", "sex", "group") if name in cells}
        item["label"] = cells["label"]
        word = cells.get("expert", "").lower()
        if word in EXPERT_WORDS:
            item["expert"] = EXPERT_WORDS[word]
        else:
            report("expert", f"must be yes, no, true, false, 1, 0 or empty, not {cells['expert']!r}")
        juror = juror_config(item, report, labels)
        if juror is not None and "expert" in item:
            jurors.append(juror.as_design())
    if len(jurors) > MAX_LISTED_JURORS:
        problems.append(Problem(path.name, None, None, f"has {len(jurors)} jurors; at most {MAX_LISTED_JURORS}"))
    if problems:
        raise InputError(problems)
    return jurors


def design_hash(design: dict[str, Any]) -> str:
    """The sha256 (hex) of a design's canonical JSON: sorted keys, UTF-8, no spaces."""
    canonical = json.dumps(design, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def create_session(db: Session, config: SessionConfig, *, actor: str = "host") -> VttSession:
    """Create a session with its questions dealt into rounds; raise :class:`InputError` when impossible.

    Questions come from the bank's own ``round`` column when it fills every round exactly;
    otherwise the set builder picks a balanced set and deals it (seeded by the session seed).
    A design without a seed gets one drawn at random, recorded with the session. The design is
    stored as given and its hash (:func:`design_hash`) with it.
    """
    bank = bank_by_name(db, config.bank)
    if bank is None:
        raise InputError([Problem("session", None, "bank", f"no question bank named {config.bank!r}")])
    name_taken = InputError([Problem("session", None, "name", f"a session named {config.name!r} exists already")])
    if _named(db, config.name):
        raise name_taken
    seed = config.seed if config.seed is not None else secrets.randbelow(MAX_SQL_INTEGER)
    placement = _place_questions(db, bank.id, bank_records(db, bank), config, seed)
    design = config.design or _design_of(config)
    digest = design_hash(design)
    session = VttSession(
        name=config.name,
        bank=bank,
        join_code=_new_join_code(db),
        rounds=config.rounds,
        questions_per_round=config.questions_per_round,
        seed=seed,
        answer_seconds=config.answer_seconds,
        vote_seconds=config.vote_seconds,
        reveal_policy=config.reveal_policy,
        pass_rule=config.pass_rule,
        pass_alpha=config.pass_alpha,
        pass_threshold_pct=config.pass_threshold_pct,
        ai_votes_per_juror=config.ai_votes_per_juror,
        scoring_method=config.scoring_method,
        open_join=config.open_join,
        design=design,
        design_hash=digest,
    )
    session.round_states = [
        SessionRound(number=n, theme=config.round_themes[n - 1] if n <= len(config.round_themes) else None)
        for n in range(1, config.rounds + 1)
    ]
    session.players = [
        Player(
            name=p.name,
            kind=p.kind,
            age=p.age,
            stage=p.stage,
            backends=p.backends,
            answer_modes=list(p.answer_modes),
            token=secrets.token_urlsafe(18),
        )
        for p in config.players
    ]
    session.jurors = [
        Juror(
            label=j.label,
            age_band=j.age_band,
            sex=j.sex,
            expert=j.expert,
            juror_group=j.group,
            token=secrets.token_urlsafe(18),
        )
        for j in config.jurors
    ]
    # the rounds first: a question's (session, round) must name one of them
    if not added_unless_taken(db, session, lambda: _named(db, config.name)):
        raise name_taken
    session.questions = [SessionQuestion(question_id=qid, round=r, position=pos) for qid, r, pos in placement]
    db.flush()
    db.add(
        Event(
            session_id=session.id,
            kind="session.created",
            actor=actor,
            payload={
                "name": config.name,
                "bank": config.bank,
                "seed": seed,
                "seed_drawn": config.seed is None,
                "design_hash": digest,
                "questions": len(placement),
                "players": len(config.players),
                "jurors": len(config.jurors),
                "open_join": config.open_join,
            },
        )
    )
    return session


def _named(db: Session, name: str) -> bool:
    return db.scalar(select(VttSession.id).where(VttSession.name == name)) is not None


def _design_of(config: SessionConfig) -> dict[str, Any]:
    """A design document for a configuration built in code rather than read from one."""
    fields = {key: value for key, value in asdict(config).items() if key not in ("design", "jurors", "players")}
    fields["players"] = [player.as_design() for player in config.players]
    fields["jurors"] = [juror.as_design() for juror in config.jurors]
    for optional in ("seed", "language"):  # absent, as a design without them is written
        if fields[optional] is None:
            del fields[optional]
    return json.loads(json.dumps(fields, ensure_ascii=False))


def _place_questions(
    db: Session, bank_id: int, records, config: SessionConfig, seed: int
) -> list[tuple[int, int, int]]:
    """``(question id, round, position)`` for every question of the session."""
    ids = dict(db.execute(select(Question.qid, Question.id).where(Question.bank_id == bank_id)).all())
    needed = config.rounds * config.questions_per_round
    by_round: dict[int, list[str]] = {}
    for record in records:
        if record.round is not None:
            by_round.setdefault(record.round, []).append(record.qid)
    preset = sorted(by_round) == list(range(1, config.rounds + 1)) and all(
        len(qids) == config.questions_per_round for qids in by_round.values()
    )
    if preset:
        # The bank fixes which questions make a round; the recorded seed still shuffles their order.
        rng = random.Random(seed)
        for qids in by_round.values():
            rng.shuffle(qids)
        return [(ids[qid], r, pos) for r, qids in sorted(by_round.items()) for pos, qid in enumerate(qids, 1)]
    if len(records) < needed:
        raise InputError(
            [
                Problem(
                    "session",
                    None,
                    "questions_per_round",
                    f"{config.rounds} x {config.questions_per_round} = {needed} questions needed, "
                    f"the bank has {len(records)}",
                )
            ]
        )
    from analysis.builder import build_set

    built = build_set(records_table(records), needed, config.rounds, seed=seed)
    return [(ids[row.qid], int(row.round), int(row.position)) for row in built.questions.itertuples()]


def _new_join_code(db: Session) -> str:
    while True:
        code = "".join(secrets.choice(JOIN_ALPHABET) for _ in range(JOIN_CODE_LENGTH))
        if db.scalar(select(VttSession.id).where(VttSession.join_code == code)) is None:
            return code
