"""domain model: banks, questions, sessions, players, jurors, answers, grades, sheets, votes, event log

Revision ID: 0001
Revises:
Create Date: 2026-11-22 05:52:20.154845
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# The event log is append-only in the database itself, not only through the ORM.
APPEND_ONLY_MESSAGE = "the event log is append-only"
SQLITE_TRIGGERS = [
    f"CREATE TRIGGER event_append_only_{action.lower()} BEFORE {action} ON event "
    f"BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY_MESSAGE}'); END"
    for action in ("UPDATE", "DELETE")
]
POSTGRESQL_TRIGGER = [
    "CREATE FUNCTION event_append_only() RETURNS trigger LANGUAGE plpgsql AS "
    f"$$ BEGIN RAISE EXCEPTION '{APPEND_ONLY_MESSAGE}'; END $$",
    "CREATE TRIGGER event_append_only BEFORE UPDATE OR DELETE ON event "
    "FOR EACH ROW EXECUTE FUNCTION event_append_only()",
]


def _append_only_event_log() -> None:
    dialect = op.get_bind().dialect.name
    for statement in {"sqlite": SQLITE_TRIGGERS, "postgresql": POSTGRESQL_TRIGGER}.get(dialect, []):
        op.execute(statement)


def _drop_append_only_event_log() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS event_append_only ON event")
        op.execute("DROP FUNCTION IF EXISTS event_append_only()")
    elif dialect == "sqlite":
        for action in ("update", "delete"):
            op.execute(f"DROP TRIGGER IF EXISTS event_append_only_{action}")


def upgrade() -> None:
    op.create_table(
        "event",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.Integer(), nullable=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("kind", sa.String(length=60), nullable=False),
        sa.Column("actor", sa.String(length=120), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_event")),
    )
    with op.batch_alter_table("event", schema=None) as batch_op:
        batch_op.create_index("ix_event_session_at", ["session_id", "id"], unique=False)

    op.create_table(
        "question_bank",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("source_format", sa.String(length=24), nullable=False),
        sa.Column("source_file", sa.String(length=500), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_question_bank")),
        sa.UniqueConstraint("name", name=op.f("uq_question_bank_name")),
    )
    op.create_table(
        "question",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("bank_id", sa.Integer(), nullable=False),
        sa.Column("qid", sa.String(length=100), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column(
            "type",
            sa.Enum("mcq", "open", name="question_type", native_enum=False, create_constraint=True, length=24),
            nullable=False,
        ),
        sa.Column("choices", sa.JSON(), nullable=False),
        sa.Column("answer_index", sa.Integer(), nullable=True),
        sa.Column("reference_answer", sa.Text(), nullable=False),
        sa.Column("clip_source", sa.String(length=1000), nullable=True),
        sa.Column("clip_start", sa.Float(), nullable=True),
        sa.Column("clip_end", sa.Float(), nullable=True),
        sa.Column(
            "clip_kind",
            sa.Enum("shot", "scene", name="clip_kind", native_enum=False, create_constraint=True, length=24),
            nullable=True,
        ),
        sa.Column("category", sa.String(length=200), nullable=True),
        sa.Column("suggested_round", sa.Integer(), nullable=True),
        sa.Column("source", sa.JSON(), nullable=False),
        sa.CheckConstraint("type <> 'mcq' OR answer_index IS NOT NULL", name=op.f("ck_question_mcq_has_key")),
        sa.CheckConstraint(
            "clip_end IS NULL OR clip_start IS NULL OR clip_end > clip_start",
            name=op.f("ck_question_clip_end_after_start"),
        ),
        sa.CheckConstraint("clip_start IS NULL OR clip_start >= 0", name=op.f("ck_question_clip_start_positive")),
        sa.CheckConstraint("suggested_round IS NULL OR suggested_round >= 1", name=op.f("ck_question_round_positive")),
        sa.ForeignKeyConstraint(
            ["bank_id"], ["question_bank.id"], name=op.f("fk_question_bank_id_question_bank"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_question")),
        sa.UniqueConstraint("bank_id", "qid", name=op.f("uq_question_bank_id_qid")),
    )
    with op.batch_alter_table("question", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_question_bank_id"), ["bank_id"], unique=False)

    op.create_table(
        "vtt_session",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("bank_id", sa.Integer(), nullable=True),
        sa.Column("join_code", sa.String(length=16), nullable=False),
        sa.Column(
            "status",
            sa.Enum(
                "draft",
                "lobby",
                "running",
                "finished",
                name="session_status",
                native_enum=False,
                create_constraint=True,
                length=24,
            ),
            nullable=False,
        ),
        sa.Column("rounds", sa.Integer(), nullable=False),
        sa.Column("questions_per_round", sa.Integer(), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("answer_seconds", sa.Integer(), nullable=True),
        sa.Column("vote_seconds", sa.Integer(), nullable=True),
        sa.Column(
            "reveal_policy",
            sa.Enum("per-round", "end", name="reveal_policy", native_enum=False, create_constraint=True, length=24),
            nullable=False,
        ),
        sa.Column(
            "pass_rule",
            sa.Enum(
                "human-tie",
                "chance",
                "threshold",
                name="pass_rule",
                native_enum=False,
                create_constraint=True,
                length=24,
            ),
            nullable=False,
        ),
        sa.Column("pass_alpha", sa.Double(), nullable=False),
        sa.Column("pass_threshold_pct", sa.Double(), nullable=False),
        sa.Column("ai_votes_per_juror", sa.Integer(), nullable=False),
        sa.Column(
            "scoring_method",
            sa.Enum(
                "uniform",
                "cogsci2024",
                "frontiers2022",
                name="scoring_method",
                native_enum=False,
                create_constraint=True,
                length=24,
            ),
            nullable=False,
        ),
        sa.Column("current_round", sa.Integer(), nullable=True),
        sa.Column("current_position", sa.Integer(), nullable=True),
        sa.Column("state_version", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("ai_votes_per_juror >= 1", name=op.f("ck_vtt_session_ai_votes_positive")),
        sa.CheckConstraint(
            "answer_seconds IS NULL OR answer_seconds > 0", name=op.f("ck_vtt_session_answer_seconds_positive")
        ),
        sa.CheckConstraint("pass_alpha > 0 AND pass_alpha < 1", name=op.f("ck_vtt_session_alpha_in_range")),
        sa.CheckConstraint(
            "pass_threshold_pct >= 0 AND pass_threshold_pct <= 100", name=op.f("ck_vtt_session_threshold_in_range")
        ),
        sa.CheckConstraint("questions_per_round >= 1", name=op.f("ck_vtt_session_questions_per_round_positive")),
        sa.CheckConstraint("rounds >= 1", name=op.f("ck_vtt_session_rounds_positive")),
        sa.CheckConstraint(
            "vote_seconds IS NULL OR vote_seconds > 0", name=op.f("ck_vtt_session_vote_seconds_positive")
        ),
        sa.ForeignKeyConstraint(
            ["bank_id"], ["question_bank.id"], name=op.f("fk_vtt_session_bank_id_question_bank"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_vtt_session")),
        sa.UniqueConstraint("join_code", name=op.f("uq_vtt_session_join_code")),
        sa.UniqueConstraint("name", name=op.f("uq_vtt_session_name")),
    )
    with op.batch_alter_table("vtt_session", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_vtt_session_bank_id"), ["bank_id"], unique=False)

    op.create_table(
        "juror",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.Integer(), nullable=False),
        sa.Column("label", sa.String(length=40), nullable=False),
        sa.Column("token", sa.String(length=64), nullable=False),
        sa.Column("age_band", sa.String(length=24), nullable=True),
        sa.Column("sex", sa.String(length=24), nullable=True),
        sa.Column("expert", sa.Boolean(), nullable=True),
        sa.Column("joined_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"], ["vtt_session.id"], name=op.f("fk_juror_session_id_vtt_session"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_juror")),
        sa.UniqueConstraint("session_id", "id", name=op.f("uq_juror_session_id_id")),
        sa.UniqueConstraint("session_id", "label", name=op.f("uq_juror_session_id_label")),
        sa.UniqueConstraint("token", name=op.f("uq_juror_token")),
    )
    op.create_table(
        "player",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=120), nullable=False),
        sa.Column(
            "kind",
            sa.Enum("human", "ai", name="player_kind", native_enum=False, create_constraint=True, length=24),
            nullable=False,
        ),
        sa.Column("age", sa.Integer(), nullable=True),
        sa.Column("stage", sa.String(length=120), nullable=True),
        sa.Column("backends", sa.JSON(), nullable=False),
        sa.Column("details", sa.JSON(), nullable=False),
        sa.Column("token", sa.String(length=64), nullable=False),
        sa.CheckConstraint("age IS NULL OR (age >= 0 AND age < 150)", name=op.f("ck_player_age_plausible")),
        sa.ForeignKeyConstraint(
            ["session_id"], ["vtt_session.id"], name=op.f("fk_player_session_id_vtt_session"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_player")),
        sa.UniqueConstraint("session_id", "id", name=op.f("uq_player_session_id_id")),
        sa.UniqueConstraint("session_id", "name", name=op.f("uq_player_session_id_name")),
        sa.UniqueConstraint("token", name=op.f("uq_player_token")),
    )
    op.create_table(
        "question_tag",
        sa.Column("question_id", sa.Integer(), nullable=False),
        sa.Column("module", sa.String(length=16), nullable=False),
        sa.Column("element", sa.String(length=40), nullable=False),
        sa.Column("is_key", sa.Boolean(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.CheckConstraint("NOT is_key OR module = 'target'", name=op.f("ck_question_tag_key_is_target")),
        sa.CheckConstraint("module IN ('target', 'content', 'thinking')", name=op.f("ck_question_tag_module_known")),
        sa.ForeignKeyConstraint(
            ["question_id"], ["question.id"], name=op.f("fk_question_tag_question_id_question"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("question_id", "module", "element", name=op.f("pk_question_tag")),
    )
    with op.batch_alter_table("question_tag", schema=None) as batch_op:
        batch_op.create_index(
            "uq_question_tag_one_key",
            ["question_id"],
            unique=True,
            sqlite_where=sa.text("is_key"),
            postgresql_where=sa.text("is_key"),
        )

    op.create_table(
        "session_question",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.Integer(), nullable=False),
        sa.Column("question_id", sa.Integer(), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("shown_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("answers_closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revealed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("reveal_order", sa.JSON(), nullable=True),
        sa.CheckConstraint("round >= 1 AND position >= 1", name=op.f("ck_session_question_place_positive")),
        sa.ForeignKeyConstraint(
            ["question_id"], ["question.id"], name=op.f("fk_session_question_question_id_question"), ondelete="RESTRICT"
        ),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["vtt_session.id"],
            name=op.f("fk_session_question_session_id_vtt_session"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_session_question")),
        sa.UniqueConstraint("session_id", "question_id", name=op.f("uq_session_question_session_id_question_id")),
        sa.UniqueConstraint(
            "session_id", "round", "position", name=op.f("uq_session_question_session_id_round_position")
        ),
    )
    with op.batch_alter_table("session_question", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_session_question_question_id"), ["question_id"], unique=False)

    op.create_table(
        "session_round",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("theme", sa.String(length=200), nullable=True),
        sa.Column(
            "status",
            sa.Enum(
                "pending",
                "asking",
                "voting",
                "closed",
                name="round_status",
                native_enum=False,
                create_constraint=True,
                length=24,
            ),
            nullable=False,
        ),
        sa.Column("vote_opened_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("vote_closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revealed_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("number >= 1", name=op.f("ck_session_round_number_positive")),
        sa.ForeignKeyConstraint(
            ["session_id"], ["vtt_session.id"], name=op.f("fk_session_round_session_id_vtt_session"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_session_round")),
        sa.UniqueConstraint("session_id", "number", name=op.f("uq_session_round_session_id_number")),
    )
    op.create_table(
        "answer",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_question_id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("choice_index", sa.Integer(), nullable=True),
        sa.Column("submitted_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("latency_ms", sa.Integer(), nullable=True),
        sa.Column("late", sa.Boolean(), nullable=False),
        sa.Column("client_key", sa.String(length=64), nullable=True),
        sa.CheckConstraint("choice_index IS NULL OR choice_index >= 0", name=op.f("ck_answer_choice_index_positive")),
        sa.CheckConstraint("latency_ms IS NULL OR latency_ms >= 0", name=op.f("ck_answer_latency_positive")),
        sa.ForeignKeyConstraint(
            ["player_id"], ["player.id"], name=op.f("fk_answer_player_id_player"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["session_question_id"],
            ["session_question.id"],
            name=op.f("fk_answer_session_question_id_session_question"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_answer")),
        sa.UniqueConstraint("session_question_id", "player_id", name=op.f("uq_answer_session_question_id_player_id")),
    )
    with op.batch_alter_table("answer", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_answer_player_id"), ["player_id"], unique=False)

    op.create_table(
        "round_alias",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.Integer(), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("alias", sa.String(length=8), nullable=False),
        sa.CheckConstraint("alias <> ''", name=op.f("ck_round_alias_alias_not_empty")),
        sa.CheckConstraint("round >= 1", name=op.f("ck_round_alias_round_positive")),
        sa.ForeignKeyConstraint(
            ["session_id", "player_id"],
            ["player.session_id", "player.id"],
            name="fk_round_alias_session_player",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["session_id"], ["vtt_session.id"], name=op.f("fk_round_alias_session_id_vtt_session"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_round_alias")),
        sa.UniqueConstraint("session_id", "round", "alias", name=op.f("uq_round_alias_session_id_round_alias")),
        sa.UniqueConstraint("session_id", "round", "player_id", name=op.f("uq_round_alias_session_id_round_player_id")),
    )
    with op.batch_alter_table("round_alias", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_round_alias_player_id"), ["player_id"], unique=False)

    op.create_table(
        "sheet_entry",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("juror_id", sa.Integer(), nullable=False),
        sa.Column("session_question_id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("alias", sa.String(length=8), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("human_likeness", sa.Integer(), nullable=True),
        sa.Column("looks_like_ai", sa.Boolean(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("client_key", sa.String(length=64), nullable=True),
        sa.CheckConstraint(
            "human_likeness IS NULL OR (human_likeness >= 1 AND human_likeness <= 5)",
            name=op.f("ck_sheet_entry_human_likeness_1_to_5"),
        ),
        sa.ForeignKeyConstraint(
            ["juror_id"], ["juror.id"], name=op.f("fk_sheet_entry_juror_id_juror"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["player_id"], ["player.id"], name=op.f("fk_sheet_entry_player_id_player"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["session_question_id"],
            ["session_question.id"],
            name=op.f("fk_sheet_entry_session_question_id_session_question"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sheet_entry")),
        sa.UniqueConstraint(
            "juror_id",
            "session_question_id",
            "player_id",
            name=op.f("uq_sheet_entry_juror_id_session_question_id_player_id"),
        ),
    )
    with op.batch_alter_table("sheet_entry", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_sheet_entry_session_question_id"), ["session_question_id"], unique=False)

    op.create_table(
        "vote",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.Integer(), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("juror_id", sa.Integer(), nullable=False),
        sa.Column("slot", sa.Integer(), nullable=False),
        sa.Column("alias", sa.String(length=8), nullable=True),
        sa.Column("player_id", sa.Integer(), nullable=True),
        sa.Column("confidence", sa.Integer(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("cast_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("client_key", sa.String(length=64), nullable=True),
        sa.CheckConstraint("(player_id IS NULL) = (alias IS NULL)", name=op.f("ck_vote_alias_iff_player")),
        sa.CheckConstraint(
            "confidence IS NULL OR (confidence >= 1 AND confidence <= 5)", name=op.f("ck_vote_confidence_1_to_5")
        ),
        sa.CheckConstraint("round >= 1", name=op.f("ck_vote_round_positive")),
        sa.CheckConstraint("slot >= 1", name=op.f("ck_vote_slot_positive")),
        sa.ForeignKeyConstraint(
            ["session_id", "juror_id"],
            ["juror.session_id", "juror.id"],
            name="fk_vote_session_juror",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["session_id", "player_id"],
            ["player.session_id", "player.id"],
            name="fk_vote_session_player",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["session_id"], ["vtt_session.id"], name=op.f("fk_vote_session_id_vtt_session"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_vote")),
        sa.UniqueConstraint(
            "session_id", "round", "juror_id", "player_id", name=op.f("uq_vote_session_id_round_juror_id_player_id")
        ),
        sa.UniqueConstraint(
            "session_id", "round", "juror_id", "slot", name=op.f("uq_vote_session_id_round_juror_id_slot")
        ),
    )
    with op.batch_alter_table("vote", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_vote_juror_id"), ["juror_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_vote_player_id"), ["player_id"], unique=False)

    op.create_table(
        "grade",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("answer_id", sa.Integer(), nullable=False),
        sa.Column("correct", sa.Boolean(), nullable=False),
        sa.Column("automatic", sa.Boolean(), nullable=False),
        sa.Column("grader", sa.String(length=120), nullable=True),
        sa.Column("graded_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("accuracy", sa.Integer(), nullable=True),
        sa.Column("comprehensiveness", sa.Integer(), nullable=True),
        sa.Column("depth", sa.Integer(), nullable=True),
        sa.Column("evidence", sa.Integer(), nullable=True),
        sa.Column("coherence", sa.Integer(), nullable=True),
        sa.CheckConstraint(
            "accuracy IS NULL OR (accuracy >= 0 AND accuracy <= 5)", name=op.f("ck_grade_accuracy_0_to_5")
        ),
        sa.CheckConstraint(
            "coherence IS NULL OR (coherence >= 0 AND coherence <= 5)", name=op.f("ck_grade_coherence_0_to_5")
        ),
        sa.CheckConstraint(
            "comprehensiveness IS NULL OR (comprehensiveness >= 0 AND comprehensiveness <= 5)",
            name=op.f("ck_grade_comprehensiveness_0_to_5"),
        ),
        sa.CheckConstraint("depth IS NULL OR (depth >= 0 AND depth <= 5)", name=op.f("ck_grade_depth_0_to_5")),
        sa.CheckConstraint(
            "evidence IS NULL OR (evidence >= 0 AND evidence <= 5)", name=op.f("ck_grade_evidence_0_to_5")
        ),
        sa.ForeignKeyConstraint(
            ["answer_id"], ["answer.id"], name=op.f("fk_grade_answer_id_answer"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_grade")),
        sa.UniqueConstraint("answer_id", name=op.f("uq_grade_answer_id")),
    )

    _append_only_event_log()


def downgrade() -> None:
    _drop_append_only_event_log()
    op.drop_table("grade")
    with op.batch_alter_table("vote", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_vote_player_id"))
        batch_op.drop_index(batch_op.f("ix_vote_juror_id"))

    op.drop_table("vote")
    with op.batch_alter_table("sheet_entry", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sheet_entry_session_question_id"))

    op.drop_table("sheet_entry")
    with op.batch_alter_table("round_alias", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_round_alias_player_id"))

    op.drop_table("round_alias")
    with op.batch_alter_table("answer", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_answer_player_id"))

    op.drop_table("answer")
    op.drop_table("session_round")
    with op.batch_alter_table("session_question", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_session_question_question_id"))

    op.drop_table("session_question")
    with op.batch_alter_table("question_tag", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_question_tag_one_key", sqlite_where=sa.text("is_key"), postgresql_where=sa.text("is_key")
        )

    op.drop_table("question_tag")
    op.drop_table("player")
    op.drop_table("juror")
    with op.batch_alter_table("vtt_session", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_vtt_session_bank_id"))

    op.drop_table("vtt_session")
    with op.batch_alter_table("question", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_question_bank_id"))

    op.drop_table("question")
    op.drop_table("question_bank")
    with op.batch_alter_table("event", schema=None) as batch_op:
        batch_op.drop_index("ix_event_session_at")

    op.drop_table("event")
