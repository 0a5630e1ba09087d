"""The domain model of a Video Turing Test, in plain SQLAlchemy 2 (no Flask).

The database is the truth: every answer, grade, sheet entry and vote is a row, rules that must
never break are constraints, and the event log is append-only.  Later parts add behaviour on
top of these tables, not new tables.
"""

from __future__ import annotations

import enum
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    CheckConstraint,
    Enum,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    event,
    false,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship

from analysis.taxonomy import Module

from .kinds import (  # noqa: F401 - re-exported: vtt.models is where the rest of vtt finds them
    DEFAULT_ANSWER_MODES,
    AnswerMode,
    ClipKind,
    ClipPlayback,
    Jury,
    PassRule,
    Phase,
    PlayerKind,
    QuestionType,
    RevealPolicy,
    RoundStatus,
    ScoringMethod,
    SessionStatus,
)
from .utctime import UTCDateTime

# Alembic autogenerate and batch mode on SQLite need named constraints.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {datetime: UTCDateTime(), dict[str, Any]: JSON, list[Any]: JSON}


def _enum(cls: type[enum.Enum], name: str) -> Enum:
    """Enums are stored by value in a VARCHAR with a CHECK, portable across SQLite and PostgreSQL."""
    return Enum(
        cls,
        name=name,
        native_enum=False,
        create_constraint=True,
        length=24,
        values_callable=lambda members: [m.value for m in members],
    )


# The enums live in vtt/kinds.py (pure Python, for the engine too); the columns below store them by value.


# --- question banks ---------------------------------------------------------------------------


class QuestionBank(Base):
    __tablename__ = "question_bank"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    description: Mapped[str] = mapped_column(Text, default="")
    source_format: Mapped[str] = mapped_column(String(24), default="csv")
    source_file: Mapped[str | None] = mapped_column(String(500))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    questions: Mapped[list[Question]] = relationship(
        back_populates="bank", cascade="all, delete-orphan", order_by="Question.id"
    )


class Question(Base):
    __tablename__ = "question"
    __table_args__ = (
        UniqueConstraint("bank_id", "qid"),
        CheckConstraint("clip_start IS NULL OR clip_start >= 0", name="clip_start_positive"),
        CheckConstraint("clip_end IS NULL OR clip_start IS NULL OR clip_end > clip_start", name="clip_end_after_start"),
        CheckConstraint("suggested_round IS NULL OR suggested_round >= 1", name="round_positive"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    bank_id: Mapped[int] = mapped_column(ForeignKey("question_bank.id", ondelete="CASCADE"), index=True)
    qid: Mapped[str] = mapped_column(String(100))
    text: Mapped[str] = mapped_column(Text)
    type: Mapped[QuestionType] = mapped_column(_enum(QuestionType, "question_type"))
    choices: Mapped[list[Any]] = mapped_column(default=list)
    answer_index: Mapped[int | None]  # the key of an mcq, 0-based; None: withheld (test split)
    reference_answer: Mapped[str] = mapped_column(Text, default="")  # open questions (or the key's text)
    clip_source: Mapped[str | None] = mapped_column(String(1000))  # file path or URL
    clip_start: Mapped[float | None] = mapped_column(Float)
    clip_end: Mapped[float | None] = mapped_column(Float)
    clip_kind: Mapped[ClipKind | None] = mapped_column(_enum(ClipKind, "clip_kind"))
    category: Mapped[str | None] = mapped_column(String(200))
    suggested_round: Mapped[int | None]
    source: Mapped[dict[str, Any]] = mapped_column(default=dict)  # fields of the original record kept as-is

    bank: Mapped[QuestionBank] = relationship(back_populates="questions")
    tags: Mapped[list[QuestionTag]] = relationship(
        back_populates="question", cascade="all, delete-orphan", order_by="QuestionTag.position"
    )

    @property
    def answer_text(self) -> str:
        if self.type is QuestionType.MCQ and self.answer_index is not None and self.answer_index < len(self.choices):
            return str(self.choices[self.answer_index])
        return self.reference_answer

    def tag_names(self, module: Module) -> list[str]:
        return [t.element for t in self.tags if t.module == module.value]

    @property
    def key_target(self) -> str | None:
        return next((t.element for t in self.tags if t.is_key), None)

    @property
    def thinking(self) -> str | None:
        names = self.tag_names(Module.THINKING)
        return names[0] if names else None


class QuestionTag(Base):
    """One CogME tag of a question; canonical element names only (see ``analysis.taxonomy``)."""

    __tablename__ = "question_tag"
    __table_args__ = (
        CheckConstraint("module IN ('target', 'content', 'thinking')", name="module_known"),
        CheckConstraint("NOT is_key OR module = 'target'", name="key_is_target"),
        # At most one key target per question (a partial unique index works on SQLite and PostgreSQL).
        Index(
            "uq_question_tag_one_key",
            "question_id",
            unique=True,
            sqlite_where=text("is_key"),
            postgresql_where=text("is_key"),
        ),
    )

    question_id: Mapped[int] = mapped_column(ForeignKey("question.id", ondelete="CASCADE"), primary_key=True)
    module: Mapped[str] = mapped_column(String(16), primary_key=True)
    element: Mapped[str] = mapped_column(String(40), primary_key=True)
    is_key: Mapped[bool] = mapped_column(default=False)
    position: Mapped[int] = mapped_column(default=0)

    question: Mapped[Question] = relationship(back_populates="tags")


# --- a session and what happens in it ---------------------------------------------------------


class VttSession(Base):
    """One live Video Turing Test: its configuration and where the flow stands."""

    __tablename__ = "vtt_session"
    __table_args__ = (
        CheckConstraint("rounds >= 1", name="rounds_positive"),
        CheckConstraint("questions_per_round >= 1", name="questions_per_round_positive"),
        CheckConstraint("answer_seconds IS NULL OR answer_seconds > 0", name="answer_seconds_positive"),
        CheckConstraint("vote_seconds IS NULL OR vote_seconds > 0", name="vote_seconds_positive"),
        CheckConstraint("ai_votes_per_juror >= 1", name="ai_votes_positive"),
        CheckConstraint("pass_alpha > 0 AND pass_alpha < 1", name="alpha_in_range"),
        CheckConstraint("pass_threshold_pct >= 0 AND pass_threshold_pct <= 100", name="threshold_in_range"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    bank_id: Mapped[int | None] = mapped_column(ForeignKey("question_bank.id", ondelete="SET NULL"), index=True)
    join_code: Mapped[str] = mapped_column(String(16), unique=True)  # what jurors type or scan
    status: Mapped[SessionStatus] = mapped_column(_enum(SessionStatus, "session_status"), default=SessionStatus.DRAFT)
    rounds: Mapped[int] = mapped_column(default=5)
    questions_per_round: Mapped[int] = mapped_column(default=6)
    seed: Mapped[int]  # drawn at random when the design gives none; recorded so every shuffle can be replayed
    answer_seconds: Mapped[int | None]  # None: no time limit
    vote_seconds: Mapped[int | None]
    reveal_policy: Mapped[RevealPolicy] = mapped_column(_enum(RevealPolicy, "reveal_policy"), default=RevealPolicy.END)
    pass_rule: Mapped[PassRule] = mapped_column(_enum(PassRule, "pass_rule"), default=PassRule.HUMAN_TIE)
    pass_alpha: Mapped[float] = mapped_column(default=0.05)
    pass_threshold_pct: Mapped[float] = mapped_column(default=70.0)
    ai_votes_per_juror: Mapped[int] = mapped_column(default=1)  # "who is the AI" picks per juror per round
    scoring_method: Mapped[ScoringMethod] = mapped_column(
        _enum(ScoringMethod, "scoring_method"), default=ScoringMethod.COGSCI2024
    )
    open_join: Mapped[bool] = mapped_column(default=False)  # jurors may join with the code and a nickname
    open_join_cap: Mapped[int | None]  # at most this many jurors join openly; None: no cap
    join_door: Mapped[bool] = mapped_column(default=False, server_default=false())  # open joins need the door code
    design: Mapped[dict[str, Any]] = mapped_column(default=dict)  # the frozen, pre-registered design
    design_hash: Mapped[str] = mapped_column(String(64), default="")  # sha256 of the canonical design JSON
    phase: Mapped[Phase] = mapped_column(_enum(Phase, "phase"), default=Phase.DRAFT)
    phase_deadline_at: Mapped[datetime | None]  # an expired deadline closes its phase by itself
    current_round: Mapped[int | None]
    current_position: Mapped[int | None]
    state_version: Mapped[int] = mapped_column(default=0)  # bumped on every accepted action; snapshots carry it
    # The state_version of the last message each audience (host, player, juror, stage) was sent:
    # a message carries it as prev_version, so a client that missed one sees the gap.
    audience_versions: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]

    bank: Mapped[QuestionBank | None] = relationship()
    # passive_deletes: deleting a session leaves its rows to the database's ON DELETE CASCADE, which
    # knows the order the composite keys need (the ORM would delete rounds before their questions).
    questions: Mapped[list[SessionQuestion]] = relationship(
        back_populates="session",
        cascade="all, delete-orphan",
        passive_deletes=True,
        order_by="(SessionQuestion.round, SessionQuestion.position)",
    )
    round_states: Mapped[list[SessionRound]] = relationship(
        back_populates="session", cascade="all, delete-orphan", passive_deletes=True, order_by="SessionRound.number"
    )
    players: Mapped[list[Player]] = relationship(
        back_populates="session", cascade="all, delete-orphan", passive_deletes=True, order_by="Player.id"
    )
    jurors: Mapped[list[Juror]] = relationship(
        back_populates="session", cascade="all, delete-orphan", passive_deletes=True, order_by="Juror.id"
    )

    @property
    def live_jurors(self) -> list[Juror]:
        """The jurors in the room: links, join cards, paper sheets and the host's jury are theirs (the displaced and
        AI juries judge later, by ``vtt jury``)."""
        return [juror for juror in self.jurors if juror.jury is Jury.LIVE]


def _session_keys(table: str, *targets: str) -> tuple[ForeignKeyConstraint, ...]:
    """Composite foreign keys ``(session_id, X_id) -> X(session_id, id)``: rows point at their own session's rows."""
    columns = {"player": "player_id", "juror": "juror_id", "session_question": "session_question_id"}
    return tuple(
        ForeignKeyConstraint(
            ["session_id", columns[target]],
            [f"{target}.session_id", f"{target}.id"],
            ondelete="CASCADE",
            name=f"fk_{table}_session_{target}",
        )
        for target in targets
    )


def _round_key(table: str) -> ForeignKeyConstraint:
    """``(session_id, round) -> session_round(session_id, number)``: only rounds the session has."""
    return ForeignKeyConstraint(
        ["session_id", "round"],
        ["session_round.session_id", "session_round.number"],
        ondelete="CASCADE",
        name=f"fk_{table}_session_round",
    )


class SessionRound(Base):
    __tablename__ = "session_round"
    __table_args__ = (UniqueConstraint("session_id", "number"), CheckConstraint("number >= 1", name="number_positive"))

    id: Mapped[int] = mapped_column(primary_key=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("vtt_session.id", ondelete="CASCADE"))
    number: Mapped[int]
    theme: Mapped[str | None] = mapped_column(String(200))
    status: Mapped[RoundStatus] = mapped_column(_enum(RoundStatus, "round_status"), default=RoundStatus.PENDING)
    participants: Mapped[list[Any] | None]  # player ids who play this round; None: everyone
    vote_opened_at: Mapped[datetime | None]
    vote_closed_at: Mapped[datetime | None]
    revealed_at: Mapped[datetime | None]
    tally: Mapped[dict[str, Any] | None]  # computed when the vote closes (analysis.votes' statistics)

    session: Mapped[VttSession] = relationship(back_populates="round_states")


class SessionQuestion(Base):
    """A bank question placed in a session at (round, position)."""

    __tablename__ = "session_question"
    __table_args__ = (
        UniqueConstraint("session_id", "round", "position"),
        UniqueConstraint("session_id", "question_id"),
        UniqueConstraint("session_id", "id"),  # target of (session_id, session_question_id) keys
        _round_key("session_question"),
        CheckConstraint("round >= 1 AND position >= 1", name="place_positive"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("vtt_session.id", ondelete="CASCADE"))
    question_id: Mapped[int] = mapped_column(ForeignKey("question.id", ondelete="RESTRICT"), index=True)
    round: Mapped[int]
    position: Mapped[int]
    shown_at: Mapped[datetime | None]
    clip_started_at: Mapped[datetime | None]  # clip_playback host: when the latest screening of its clip starts
    answers_closed_at: Mapped[datetime | None]
    revealed_at: Mapped[datetime | None]  # all answers go to the jury at this one moment
    reveal_order: Mapped[list[Any] | None]  # the shuffled alias order the jury saw

    session: Mapped[VttSession] = relationship(back_populates="questions")
    question: Mapped[Question] = relationship()
    answers: Mapped[list[Answer]] = relationship(
        back_populates="session_question",
        cascade="all, delete-orphan",
        passive_deletes=True,
        primaryjoin="and_(SessionQuestion.id == foreign(Answer.session_question_id), "
        "SessionQuestion.session_id == Answer.session_id)",
    )


class Player(Base):
    """Someone the jury judges: a human of some developmental stage, or an AI agent."""

    __tablename__ = "player"
    __table_args__ = (
        UniqueConstraint("session_id", "name"),
        UniqueConstraint("session_id", "id"),  # target of (session_id, player_id) keys: no cross-session rows
        CheckConstraint("age IS NULL OR (age >= 0 AND age < 150)", name="age_plausible"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("vtt_session.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(120))
    kind: Mapped[PlayerKind] = mapped_column(_enum(PlayerKind, "player_kind"))
    age: Mapped[int | None]
    stage: Mapped[str | None] = mapped_column(String(120))  # developmental stage, e.g. "formal operational"
    backends: Mapped[dict[str, Any]] = mapped_column(default=dict)  # AI: program per question type
    # How the player takes part: "text", "spoken", "read_aloud" (vtt.kinds.AnswerMode). Never sent to the jury or
    # the stage: reading aloud gives a young child away.
    answer_modes: Mapped[list[Any]] = mapped_column(
        default=lambda: list(DEFAULT_ANSWER_MODES), server_default=text("'[\"text\"]'")
    )
    details: Mapped[dict[str, Any]] = mapped_column(default=dict)  # any further metadata
    token: Mapped[str] = mapped_column(String(64), unique=True)  # the player's private login
    device_check: Mapped[dict[str, Any] | None]  # the page's latest device check (host side only: vtt.engine.readiness)

    session: Mapped[VttSession] = relationship(back_populates="players")


class RoundAlias(Base):
    """The alias (A, B, ...) a player wears in one round; reshuffled every round."""

    __tablename__ = "round_alias"
    __table_args__ = (
        UniqueConstraint("session_id", "round", "alias"),
        UniqueConstraint("session_id", "round", "player_id"),
        *_session_keys("round_alias", "player"),
        _round_key("round_alias"),
        CheckConstraint("round >= 1", name="round_positive"),
        CheckConstraint("alias <> ''", name="alias_not_empty"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("vtt_session.id", ondelete="CASCADE"))
    round: Mapped[int]
    player_id: Mapped[int] = mapped_column(index=True)
    alias: Mapped[str] = mapped_column(String(8))

    player: Mapped[Player] = relationship(
        primaryjoin="and_(Player.id == foreign(RoundAlias.player_id), Player.session_id == RoundAlias.session_id)"
    )


class Juror(Base):
    __tablename__ = "juror"
    __table_args__ = (
        UniqueConstraint("session_id", "label"),
        UniqueConstraint("session_id", "id"),
        # an open link's one juror per crowd participant, and per browser (its cookie): a second Start finds it
        UniqueConstraint("link_id", "participant_id"),
        UniqueConstraint("link_id", "browser_key"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("vtt_session.id", ondelete="CASCADE"))
    label: Mapped[str] = mapped_column(String(40))  # "J07": what reports call the juror
    token: Mapped[str] = mapped_column(String(64), unique=True)
    age_band: Mapped[str | None] = mapped_column(String(24))
    sex: Mapped[str | None] = mapped_column(String(24))
    expert: Mapped[bool | None]  # AI expert or not
    juror_group: Mapped[str | None] = mapped_column(String(40))  # e.g. "panel", or "open" for open joins
    # the one place a vote's or sheet line's jury is kept: they reach it through their juror
    jury: Mapped[Jury] = mapped_column(_enum(Jury, "jury"), default=Jury.LIVE, server_default=Jury.LIVE.value)
    rounds: Mapped[list[Any] | None]  # a displaced juror's rounds to judge (None: every round)
    model: Mapped[str | None] = mapped_column(String(200))  # an AI juror's model
    completion_code: Mapped[str | None] = mapped_column(String(24))  # a displaced juror's, shown once all is voted
    attention_passed: Mapped[bool | None]  # a displaced juror's instructed-response line (None: not asked/answered)
    link_id: Mapped[int | None] = mapped_column(ForeignKey("jury_link.id", ondelete="SET NULL"))  # the open link
    # the crowd platform's ids on the open link at arrival (vtt.juries.displaced.IdParams names the parameters)
    participant_id: Mapped[str | None] = mapped_column(String(64))
    platform_study_id: Mapped[str | None] = mapped_column(String(64))
    platform_session_id: Mapped[str | None] = mapped_column(String(64))
    browser_key: Mapped[str | None] = mapped_column(String(64))  # the open link's cookie in the juror's browser
    joined_at: Mapped[datetime] = mapped_column(default=utcnow)
    removed_at: Mapped[datetime | None]  # removed by the host: no link, no say, their votes left the tally
    device_check: Mapped[dict[str, Any] | None]  # the page's latest device check (host side only: vtt.engine.readiness)

    session: Mapped[VttSession] = relationship(back_populates="jurors")


class Answer(Base):
    __tablename__ = "answer"
    __table_args__ = (
        UniqueConstraint("session_question_id", "player_id"),
        UniqueConstraint("player_id", "client_key"),
        *_session_keys("answer", "session_question", "player"),
        CheckConstraint("latency_ms IS NULL OR latency_ms >= 0", name="latency_positive"),
        CheckConstraint("choice_index IS NULL OR choice_index >= 0", name="choice_index_positive"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("vtt_session.id", ondelete="CASCADE"), index=True)
    session_question_id: Mapped[int] = mapped_column(index=True)
    player_id: Mapped[int] = mapped_column(index=True)
    text: Mapped[str] = mapped_column(Text, default="")
    choice_index: Mapped[int | None]
    submitted_at: Mapped[datetime] = mapped_column(default=utcnow)
    latency_ms: Mapped[int | None]  # never leaves the host side: it would unblind the jury
    late: Mapped[bool] = mapped_column(default=False)
    redacted: Mapped[bool] = mapped_column(default=False)  # blanked by the host before the reveal
    edited_at: Mapped[datetime | None]  # the host edited it before the reveal (the original is in the event log)
    client_key: Mapped[str] = mapped_column(String(64))  # the latest write's client id: replays are recognised
    # AI players: {"backend", "model", "settings"} that produced the answer (host side only, never to the jury)
    provenance: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True))
    entered_by_host: Mapped[bool] = mapped_column(default=False)  # typed or imported by the host for an AI player

    session_question: Mapped[SessionQuestion] = relationship(
        back_populates="answers",
        primaryjoin="and_(SessionQuestion.id == foreign(Answer.session_question_id), "
        "SessionQuestion.session_id == Answer.session_id)",
    )
    player: Mapped[Player] = relationship(
        primaryjoin="and_(Player.id == foreign(Answer.player_id), Player.session_id == Answer.session_id)"
    )
    grade: Mapped[Grade | None] = relationship(back_populates="answer", cascade="all, delete-orphan")


class Recording(Base):
    """A spoken answer's recording, one row per take (a player may record again until answering closes; the
    latest is the one the host hears and confirms).  The audio lies in the recordings folder (VTT_RECORDINGS_DIR)
    under ``file``; it never reaches the jury or the stage.  ``deleted_at``: the audio was deleted (consent), the
    row stays so the record says a recording existed."""

    __tablename__ = "recording"
    __table_args__ = (
        UniqueConstraint("player_id", "client_key"),
        *_session_keys("recording", "session_question", "player"),
        CheckConstraint("size > 0", name="size_positive"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("vtt_session.id", ondelete="CASCADE"), index=True)
    session_question_id: Mapped[int] = mapped_column(index=True)
    player_id: Mapped[int]  # indexed by the unique key
    file: Mapped[str] = mapped_column(String(200), unique=True)  # its name in the recordings folder
    mime: Mapped[str] = mapped_column(String(40))
    size: Mapped[int]  # bytes
    duration_ms: Mapped[int | None]  # as the page measured it
    ended_at: Mapped[datetime]  # when the recording stopped (server time): a confirmed answer's time
    received_at: Mapped[datetime] = mapped_column(default=utcnow)
    client_key: Mapped[str] = mapped_column(String(64))  # the upload's action id: a resent upload is the same take
    transcript: Mapped[str | None] = mapped_column(Text)  # a transcription backend's suggestion, when asked
    transcribed_by: Mapped[str | None] = mapped_column(String(200))
    # how sure the backend was of its suggestion, 0 to 1 (None: it gave no figure)
    transcript_confidence: Mapped[float | None] = mapped_column(Float)
    deleted_at: Mapped[datetime | None]


RUBRIC_DIMENSIONS = ("accuracy", "comprehensiveness", "depth", "evidence", "coherence")  # MovieCORE, 0-5 each


class Grade(Base):
    """The final mark of an answer: what the reports read (each grader's own marks are :class:`GraderMark` rows)."""

    __tablename__ = "grade"
    __table_args__ = tuple(
        CheckConstraint(f"{d} IS NULL OR ({d} >= 0 AND {d} <= 5)", name=f"{d}_0_to_5") for d in RUBRIC_DIMENSIONS
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    answer_id: Mapped[int] = mapped_column(ForeignKey("answer.id", ondelete="CASCADE"), unique=True)
    correct: Mapped[bool]
    automatic: Mapped[bool] = mapped_column(default=False)  # mcq graded against the key
    grader: Mapped[str | None] = mapped_column(String(120))
    graded_at: Mapped[datetime] = mapped_column(default=utcnow)
    accuracy: Mapped[int | None]
    comprehensiveness: Mapped[int | None]
    depth: Mapped[int | None]
    evidence: Mapped[int | None]
    coherence: Mapped[int | None]

    answer: Mapped[Answer] = relationship(back_populates="grade")


class GraderMark(Base):
    """One grader's mark of an answer, kept apart from the other graders' (their agreement is measured on these)."""

    __tablename__ = "grader_mark"
    __table_args__ = (
        UniqueConstraint("answer_id", "grader"),
        CheckConstraint("grader <> ''", name="grader_named"),
        *(CheckConstraint(f"{d} IS NULL OR ({d} >= 0 AND {d} <= 5)", name=f"{d}_0_to_5") for d in RUBRIC_DIMENSIONS),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    answer_id: Mapped[int] = mapped_column(ForeignKey("answer.id", ondelete="CASCADE"))  # indexed by the unique key
    grader: Mapped[str] = mapped_column(String(120))
    correct: Mapped[bool]
    graded_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    accuracy: Mapped[int | None]
    comprehensiveness: Mapped[int | None]
    depth: Mapped[int | None]
    evidence: Mapped[int | None]
    coherence: Mapped[int | None]


class JudgeSuggestion(Base):
    """A judge model's suggested score of an answer on one dimension (``vtt.judge``): kept apart from the graders'
    marks and counted only when a grader takes it. ``score`` None: the reply held no score (``reply`` shows why);
    the next run asks again. One row per (answer, dimension, model, prompt): a new model or prompt adds rows."""

    __tablename__ = "judge_suggestion"
    __table_args__ = (
        UniqueConstraint("answer_id", "dimension", "model", "prompt_sha256"),
        CheckConstraint("score IS NULL OR (score >= 0 AND score <= 5)", name="score_0_to_5"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    answer_id: Mapped[int] = mapped_column(ForeignKey("answer.id", ondelete="CASCADE"))  # indexed by the unique key
    dimension: Mapped[str] = mapped_column(String(40))  # "verdict" (1 correct, 0 incorrect) or a rubric dimension
    score: Mapped[int | None]
    model: Mapped[str] = mapped_column(String(200))
    endpoint: Mapped[str] = mapped_column(String(500))  # without credentials
    prompt_sha256: Mapped[str] = mapped_column(String(64))
    temperature: Mapped[float | None] = mapped_column(Float)
    asked_at: Mapped[datetime] = mapped_column(default=utcnow)
    reply: Mapped[str] = mapped_column(Text, default="")  # the model's reply as it came (cut at 4,000 characters)


class JuryLink(Base):
    """An open link for a displaced jury: each arrival becomes a juror of its own, up to ``cap``."""

    __tablename__ = "jury_link"
    __table_args__ = (CheckConstraint("cap IS NULL OR cap >= 1", name="cap_positive"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("vtt_session.id", ondelete="CASCADE"), index=True)
    token: Mapped[str] = mapped_column(String(64), unique=True)
    cap: Mapped[int | None]  # None: no limit
    rounds: Mapped[list[Any] | None]  # each arrival's rounds (None: every round)
    attention_check: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    closed_at: Mapped[datetime | None]
    # the query parameters a crowd platform passes its ids in (None: not read; Prolific's by default)
    participant_param: Mapped[str | None] = mapped_column(String(40))
    study_param: Mapped[str | None] = mapped_column(String(40))
    session_param: Mapped[str | None] = mapped_column(String(40))
    complete_url: Mapped[str | None] = mapped_column(String(2000))  # where the task's end sends the juror: {code}


class JurorReply(Base):
    """An AI juror's reply about one round, read or not (``vtt.juries.ai``): the vote's provenance. A reply that
    names no alias of the round is ``unread`` and makes no vote; the next run asks again."""

    __tablename__ = "juror_reply"
    __table_args__ = (*_session_keys("juror_reply", "juror"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("vtt_session.id", ondelete="CASCADE"), index=True)
    juror_id: Mapped[int] = mapped_column(index=True)
    round: Mapped[int]
    model: Mapped[str] = mapped_column(String(200))
    endpoint: Mapped[str] = mapped_column(String(500))  # without credentials
    prompt_sha256: Mapped[str] = mapped_column(String(64))
    temperature: Mapped[float | None] = mapped_column(Float)
    frames: Mapped[int] = mapped_column(default=0)  # clip frames sent per question
    reply: Mapped[str] = mapped_column(Text, default="")  # as it came (cut at 4,000 characters)
    read: Mapped[bool] = mapped_column(default=False)  # it named an alias of the round: a vote was stored
    asked_at: Mapped[datetime] = mapped_column(default=utcnow)


class JurorClaim(Base):
    """A round an AI juror's run is asking now (``vtt.juries.ai``): one run at a time per juror and round. The run
    lets go once the reply is stored; a claim past ``expires_at`` (its run died) may be taken over."""

    __tablename__ = "juror_claim"
    __table_args__ = (UniqueConstraint("juror_id", "round"), *_session_keys("juror_claim", "juror"))

    id: Mapped[int] = mapped_column(primary_key=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("vtt_session.id", ondelete="CASCADE"), index=True)
    juror_id: Mapped[int]
    round: Mapped[int]
    run: Mapped[str] = mapped_column(String(32))  # the claiming run's random id
    claimed_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]


class TakeReservation(Base):
    """A spoken take's upload while its bytes arrive (``vtt.recordings.caps``): its place under the caps, taken before
    the first byte is written and let go when the upload ends; one older than RESERVATION_SECONDS (its process died)
    no longer counts."""

    __tablename__ = "take_reservation"
    __table_args__ = _session_keys("take_reservation", "player")

    id: Mapped[int] = mapped_column(primary_key=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("vtt_session.id", ondelete="CASCADE"), index=True)
    player_id: Mapped[int]
    client_key: Mapped[str] = mapped_column(String(64))  # the take's action id: a resend is the same take
    size: Mapped[int]  # bytes held: the upload's length (at most a take's), not yet what was written
    reserved_at: Mapped[datetime]


class SheetEntry(Base):
    """A juror's judgment-sheet line about one answer (the player is resolved from the alias)."""

    __tablename__ = "sheet_entry"
    __table_args__ = (
        UniqueConstraint("juror_id", "session_question_id", "player_id"),
        *_session_keys("sheet_entry", "juror", "session_question", "player"),
        CheckConstraint(
            "human_likeness IS NULL OR (human_likeness >= 1 AND human_likeness <= 5)", name="human_likeness_1_to_5"
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("vtt_session.id", ondelete="CASCADE"), index=True)
    juror_id: Mapped[int] = mapped_column(index=True)
    session_question_id: Mapped[int] = mapped_column(index=True)
    player_id: Mapped[int] = mapped_column(index=True)
    alias: Mapped[str] = mapped_column(String(8))  # as the juror saw it
    note: Mapped[str] = mapped_column(Text, default="")
    human_likeness: Mapped[int | None]
    looks_like_ai: Mapped[bool] = mapped_column(default=False)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    client_key: Mapped[str] = mapped_column(String(64))  # the latest write's client id (shared by a message's lines)

    juror: Mapped[Juror] = relationship(
        primaryjoin="and_(Juror.id == foreign(SheetEntry.juror_id), Juror.session_id == SheetEntry.session_id)"
    )
    session_question: Mapped[SessionQuestion] = relationship(
        primaryjoin="and_(SessionQuestion.id == foreign(SheetEntry.session_question_id), "
        "SessionQuestion.session_id == SheetEntry.session_id)"
    )
    player: Mapped[Player] = relationship(
        primaryjoin="and_(Player.id == foreign(SheetEntry.player_id), Player.session_id == SheetEntry.session_id)"
    )


class Vote(Base):
    """A juror's "who is the AI" pick in one round and slot; player NULL is an abstention."""

    __tablename__ = "vote"
    __table_args__ = (
        UniqueConstraint("session_id", "round", "juror_id", "slot"),
        UniqueConstraint("session_id", "round", "juror_id", "player_id"),  # nobody is named twice in a round
        UniqueConstraint("juror_id", "client_key"),
        *_session_keys("vote", "juror", "player"),
        _round_key("vote"),
        CheckConstraint("round >= 1", name="round_positive"),
        CheckConstraint("slot >= 1", name="slot_positive"),
        CheckConstraint("confidence IS NULL OR (confidence >= 1 AND confidence <= 5)", name="confidence_1_to_5"),
        CheckConstraint("(player_id IS NULL) = (alias IS NULL)", name="alias_iff_player"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("vtt_session.id", ondelete="CASCADE"))
    round: Mapped[int]
    juror_id: Mapped[int] = mapped_column(index=True)
    slot: Mapped[int] = mapped_column(default=1)
    alias: Mapped[str | None] = mapped_column(String(8))
    player_id: Mapped[int | None] = mapped_column(index=True)
    confidence: Mapped[int | None]
    reason: Mapped[str] = mapped_column(Text, default="")
    cast_at: Mapped[datetime] = mapped_column(default=utcnow)
    client_key: Mapped[str] = mapped_column(String(64))  # the latest write's client id

    # Both keys include session_id, so a juror of one session cannot vote for a player of another;
    # the relationships write only juror_id / player_id (session_id is the vote's own).
    juror: Mapped[Juror] = relationship(
        primaryjoin="and_(Juror.id == foreign(Vote.juror_id), Juror.session_id == Vote.session_id)"
    )
    player: Mapped[Player | None] = relationship(
        primaryjoin="and_(Player.id == foreign(Vote.player_id), Player.session_id == Vote.session_id)"
    )


class IdentityReveal(Base):
    """A player's identity revealed to the jury after a round (per the session's reveal policy)."""

    __tablename__ = "identity_reveal"
    __table_args__ = (
        UniqueConstraint("session_id", "round", "player_id"),
        *_session_keys("identity_reveal", "player"),
        _round_key("identity_reveal"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("vtt_session.id", ondelete="CASCADE"))
    round: Mapped[int]
    player_id: Mapped[int] = mapped_column(index=True)
    revealed_at: Mapped[datetime] = mapped_column(default=utcnow)


class Study(Base):
    """Sessions read together (a session per school, per AI program, per year): the unit a researcher reports.
    Each session keeps its own frozen design and hash; a session may belong to several studies."""

    __tablename__ = "study"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(120), unique=True)
    description: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    members: Mapped[list[StudySession]] = relationship(
        back_populates="study", cascade="all, delete-orphan", order_by="StudySession.added_at"
    )


class StudySession(Base):
    """A session in a study (deleting either removes the membership only)."""

    __tablename__ = "study_session"

    study_id: Mapped[int] = mapped_column(ForeignKey("study.id", ondelete="CASCADE"), primary_key=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("vtt_session.id", ondelete="CASCADE"), primary_key=True)
    added_at: Mapped[datetime] = mapped_column(default=utcnow)

    study: Mapped[Study] = relationship(back_populates="members")
    session: Mapped[VttSession] = relationship()


class Event(Base):
    """Append-only log of everything that happened (who did what, when); never updated or deleted.

    An accepted client action is logged with the client's id for it (``client_key``), unique per
    actor: the log is also what recognises a replayed action.
    """

    __tablename__ = "event"
    __table_args__ = (
        Index("ix_event_session_at", "session_id", "id"),
        UniqueConstraint("session_id", "actor", "client_key"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    session_id: Mapped[int | None]  # no foreign key: the history outlives a deleted session
    at: Mapped[datetime] = mapped_column(default=utcnow)
    kind: Mapped[str] = mapped_column(String(60))
    actor: Mapped[str] = mapped_column(String(120), default="system")
    payload: Mapped[dict[str, Any]] = mapped_column(default=dict)
    client_key: Mapped[str | None] = mapped_column(String(64))


class AppendOnlyError(RuntimeError):
    pass


@event.listens_for(Session, "before_flush")
def _keep_event_log_append_only(session: Session, _context, _instances) -> None:
    for obj in list(session.dirty) + list(session.deleted):
        if isinstance(obj, Event) and (obj in session.deleted or session.is_modified(obj)):
            raise AppendOnlyError("the event log is append-only")
