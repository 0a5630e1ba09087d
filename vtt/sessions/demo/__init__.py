"""The demo: a tagged question bank about one drama episode and a session configured on it (16 jurors, open join);
its clips are made by :mod:`vtt.sessions.demo.clips`; its AI player's answers ship with it (``ai_answers.csv``), so
``vtt agent --backend replay:...`` plays it offline."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from ...banks import bank_by_name, import_bank, read_bank
from ...models import VttSession
from ..create import SessionConfig, create_session

DEMO_DIR = Path(__file__).resolve().parent
BANK_FILE = DEMO_DIR / "bank.csv"
SESSION_FILE = DEMO_DIR / "session.json"
AI_ANSWERS_FILE = DEMO_DIR / "ai_answers.csv"  # a predictions file for every question of the bank (qid, prediction)


def ensure_demo_bank(db: Session) -> str:
    """Import the demo bank unless it is there; says which it was."""
    name = SessionConfig.from_file(SESSION_FILE).bank
    if bank_by_name(db, name) is not None:
        return f"demo bank {name!r}: already there"
    result = read_bank(BANK_FILE)
    import_bank(db, result, name, description="Demo: 30 CogME-tagged questions on one drama episode")
    return f"demo bank {name!r}: {len(result.records)} questions imported"


def load_demo(db: Session) -> list[str]:
    """Create the demo bank and session unless they exist; returns what it did, line by line."""
    config = SessionConfig.from_file(SESSION_FILE)
    lines = [ensure_demo_bank(db)]
    existing = db.scalar(select(VttSession).where(VttSession.name == config.name))
    if existing is None:
        session = create_session(db, config, actor="demo")
        lines.append(
            f"demo session {config.name!r}: created, join code {session.join_code}, "
            f"{len(session.players)} players, {len(session.live_jurors)} jurors "
            f"(`vtt session show {session.join_code}` prints their links)"
        )
    else:
        lines.append(f"demo session {config.name!r}: already there, join code {existing.join_code}")
    return lines


def demo_ai_answers(bank_name: str | None) -> Path | None:
    """The predictions file an AI player replays on a session of ``bank_name``: the demo's own, for the demo bank."""
    return AI_ANSWERS_FILE if bank_name == SessionConfig.from_file(SESSION_FILE).bank else None
