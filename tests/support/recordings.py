"""Many spoken takes laid on disk with their rows, cheaply: random bytes behind a WebM header (an export only copies
them), for tests and bench/bench_export.py."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import select

from vtt.models import Recording, SessionQuestion

WEBM_HEADER = b"\x1a\x45\xdf\xa3"


def lay_takes(db_factory, folder: Path, session_id: int, player_id: int, count: int, size: int) -> int:
    """``count`` takes of ``size`` bytes by ``player_id``, spread over the session's questions; their total bytes."""
    folder.mkdir(parents=True, exist_ok=True)
    block = os.urandom(1024 * 1024)
    now = datetime.now(UTC)
    with db_factory() as db:
        questions = db.scalars(select(SessionQuestion.id).where(SessionQuestion.session_id == session_id)).all()
        for number in range(count):
            question = questions[number % len(questions)]
            name = f"{session_id}-{question}-{player_id}-laid{number}.webm"
            with (folder / name).open("wb") as out:
                out.write(WEBM_HEADER + number.to_bytes(4, "big"))
                for start in range(0, size - 8, len(block)):
                    out.write(block[: min(len(block), size - 8 - start)])
            db.add(
                Recording(
                    session_id=session_id,
                    session_question_id=question,
                    player_id=player_id,
                    file=name,
                    mime="audio/webm",
                    size=size,
                    ended_at=now,
                    received_at=now,
                    client_key=f"laid{number}",
                )
            )
        db.commit()
    return count * size
