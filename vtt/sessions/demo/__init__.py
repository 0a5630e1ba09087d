"""The demo: a tagged question bank about one drama episode and a session configured on it (16 jurors, open join);
its clips are made by :mod:`vtt.sessions.demo.clips`."""

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
            f"{len(session.players)} players, {len(session.jurors)} jurors "
            f"(`vtt session show {session.join_code}` prints their links)"
        )
    else:
        lines.append(f"demo session {config.name!r}: already there, join code {existing.join_code}")
    return lines
