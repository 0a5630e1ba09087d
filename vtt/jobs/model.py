"""The ``job`` table: one row per piece of background work (an export, a report, a model's run ...)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from ..models import Base, utcnow

# queued -> running -> done | failed | cancelled | dead; cancelling: asked to stop while it runs
QUEUED, RUNNING, CANCELLING, DONE, FAILED, CANCELLED, DEAD = (
    "queued",
    "running",
    "cancelling",
    "done",
    "failed",
    "cancelled",
    "dead",
)
ACTIVE = (QUEUED, RUNNING, CANCELLING)
ENDED = (DONE, FAILED, CANCELLED, DEAD)


class Job(Base):
    """A piece of background work and what became of it.  ``host`` and ``pid`` name the process running it (a job
    whose process is gone while it is ``running`` is found dead); ``output`` is the kind's result (a file to
    download, a run's figures)."""

    __tablename__ = "job"
    __table_args__ = (Index("ix_job_state_id", "state", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(40))
    session_id: Mapped[int | None] = mapped_column(ForeignKey("vtt_session.id", ondelete="CASCADE"), index=True)
    args: Mapped[dict[str, Any]] = mapped_column(default=dict)
    state: Mapped[str] = mapped_column(String(16), default=QUEUED)
    progress: Mapped[str] = mapped_column(String(200), default="")
    error: Mapped[str | None] = mapped_column(Text)
    output: Mapped[dict[str, Any] | None]
    host: Mapped[str | None] = mapped_column(String(255))
    pid: Mapped[int | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column()
    ended_at: Mapped[datetime | None] = mapped_column()
