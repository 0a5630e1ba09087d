"""A study's report at scale: 20 sessions x 1,000 jurors, pooled and written (PDF and CSVs), timed.

    python bench/bench_study.py [--sessions 20] [--jurors 1000] [--sheet-jurors 100] [--runs 3]

The sessions are made on a fresh SQLite database the way `vtt session create` makes them (the demo bank, 5 rounds x 6
questions, 4 humans of different stages and one AI), then filled directly with rows as a finished session holds
them: every player's answer to every question (open answers graded), every juror's vote in every round (a share of
them naming the AI), the judgment sheets of --sheet-jurors jurors per session, juror facets (expert, age band,
group). Then ``vtt study report`` runs --runs times in a process of its own (as the study page's download runs it):
the median wall time, and its parts (reading the sessions, the tables, the PDF) from one run in this process.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import insert, select

from vtt.db import make_db_factory, make_engine, upgrade
from vtt.models import (
    Answer,
    Grade,
    Juror,
    Phase,
    Player,
    PlayerKind,
    QuestionType,
    RoundAlias,
    SessionQuestion,
    SessionStatus,
    SheetEntry,
    Vote,
    VttSession,
)
from vtt.sessions.create import SessionConfig, create_session, numbered_jurors
from vtt.sessions.demo import ensure_demo_bank
from vtt.studies import create_study

PLAYERS = [
    {"name": "Mina", "kind": "human", "age": 4, "stage": "pre-operational"},
    {"name": "Joon", "kind": "human", "age": 9, "stage": "concrete operational"},
    {"name": "Seo", "kind": "human", "age": 15, "stage": "formal operational"},
    {"name": "Grace", "kind": "human", "age": 31, "stage": "adult"},
    {"name": "Agent", "kind": "ai"},
]
AGE_BANDS = ("20s", "30s", "40s", "50s")


def fill(db, session: VttSession, rng: random.Random, sheet_jurors: int) -> None:
    """A finished session's rows: answers with grades, aliases, votes, sheets."""
    now = datetime.now(UTC)
    players = db.scalars(select(Player).where(Player.session_id == session.id).order_by(Player.id)).all()
    placed = db.scalars(select(SessionQuestion).where(SessionQuestion.session_id == session.id)).all()
    jurors = db.scalars(select(Juror).where(Juror.session_id == session.id).order_by(Juror.id)).all()
    for number, juror in enumerate(jurors):
        juror.expert, juror.age_band = number % 3 == 0, AGE_BANDS[number % 4]
        juror.juror_group = "paper" if number % 10 == 0 else "phone"
    ai = next(p for p in players if p.kind is PlayerKind.AI)
    skill = {p.id: 0.4 + 0.1 * index for index, p in enumerate(players)}
    answer_rows = []
    for sq in placed:
        question = sq.question
        sq.shown_at = sq.answers_closed_at = sq.revealed_at = now
        for player in players:
            right = rng.random() < skill[player.id]
            if question.type is QuestionType.MCQ:
                choice = question.answer_index if right else (question.answer_index + 1) % len(question.choices)
                text = ""
            else:
                choice, text = None, "an answer" if right else "another answer"
            answer_rows.append(
                {
                    "session_id": session.id,
                    "session_question_id": sq.id,
                    "player_id": player.id,
                    "text": text,
                    "choice_index": choice,
                    "submitted_at": now,
                    "latency_ms": rng.randint(2000, 30000),
                    "client_key": f"a{sq.id}-{player.id}",
                    "_right": right,
                    "_open": question.type is not QuestionType.MCQ,
                }
            )
    db.execute(insert(Answer), [{k: v for k, v in row.items() if not k.startswith("_")} for row in answer_rows])
    ids = {
        (a.session_question_id, a.player_id): a.id
        for a in db.scalars(select(Answer).where(Answer.session_id == session.id))
    }
    grades = [
        {"answer_id": ids[(row["session_question_id"], row["player_id"])], "correct": row["_right"], "grader": "bench"}
        for row in answer_rows
        if row["_open"]
    ]
    db.execute(insert(Grade), grades)
    letters = "ABCDE"
    votes, aliases, sheets = [], [], []
    for round_ in range(1, session.rounds + 1):
        order = rng.sample(players, len(players))
        alias_of = {p.id: letters[i] for i, p in enumerate(order)}
        aliases += [
            {"session_id": session.id, "round": round_, "player_id": pid, "alias": a} for pid, a in alias_of.items()
        ]
        detection = rng.uniform(0.3, 0.7)
        humans = [p for p in players if p.kind is PlayerKind.HUMAN]
        for juror in jurors:
            named = ai if rng.random() < detection else rng.choice(humans)
            votes.append(
                {
                    "session_id": session.id,
                    "round": round_,
                    "juror_id": juror.id,
                    "slot": 1,
                    "alias": alias_of[named.id],
                    "player_id": named.id,
                    "confidence": rng.randint(1, 5),
                    "reason": "",
                    "cast_at": now,
                    "client_key": f"v{round_}-{juror.id}",
                }
            )
        for juror in jurors[:sheet_jurors]:
            for sq in (sq for sq in placed if sq.round == round_):
                for player in players:
                    sheets.append(
                        {
                            "session_id": session.id,
                            "juror_id": juror.id,
                            "session_question_id": sq.id,
                            "player_id": player.id,
                            "alias": alias_of[player.id],
                            "note": "",
                            "human_likeness": rng.randint(1, 5),
                            "looks_like_ai": rng.random() < (0.5 if player is ai else 0.15),
                            "updated_at": now,
                            "client_key": f"s{juror.id}-{sq.id}",
                        }
                    )
    db.execute(insert(RoundAlias), aliases)
    db.execute(insert(Vote), votes)
    if sheets:
        db.execute(insert(SheetEntry), sheets)
    session.phase, session.status = Phase.FINISHED, SessionStatus.FINISHED


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--jurors", type=int, default=1000)
    parser.add_argument("--sheet-jurors", type=int, default=100, help="jurors per session who fill the sheets")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(1)
    with tempfile.TemporaryDirectory(prefix="bench-study-") as folder:
        url = f"sqlite:///{Path(folder) / 'vtt.db'}"
        upgrade(url)
        factory = make_db_factory(make_engine(url))
        started = time.perf_counter()
        codes = []
        with factory() as db:
            ensure_demo_bank(db)
            for number in range(args.sessions):
                config = SessionConfig.from_dict(
                    {
                        "name": f"School {number + 1}",
                        "bank": "Demo drama bank",
                        "rounds": 5,
                        "questions_per_round": 6,
                        "seed": number,
                        "pass_rule": ("human-tie", "chance", "threshold")[number % 3],
                        "players": PLAYERS,
                        "jurors": numbered_jurors(args.jurors),
                    }
                )
                session = create_session(db, config, actor="bench")
                db.flush()
                fill(db, session, rng, args.sheet_jurors)
                codes.append(session.join_code)
            create_study(db, "Bench study", codes)
            db.commit()
        made = time.perf_counter() - started
        env = {**os.environ, "DATABASE_URL": url}
        walls = []
        for run in range(args.runs):
            out = Path(folder) / f"report-{run}"
            started = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "vtt.cli", "study", "report", "Bench study", "--out", str(out)],
                env=env,
                check=True,
                capture_output=True,
            )
            walls.append(time.perf_counter() - started)
        pdf = (out / "study_report.pdf").stat().st_size / 1024
        files = len(list(out.iterdir()))
        parts = profile(factory, out)
    votes = args.sessions * args.jurors * 5
    print(f"{args.sessions} sessions x {args.jurors:,} jurors ({votes:,} votes, {args.sessions * 150:,} answers, ")
    print(f"  {args.sessions * min(args.sheet_jurors, args.jurors) * 150:,} sheet lines): made in {made:.1f} s")
    print(
        f"vtt study report: median {statistics.median(walls):.2f} s of {args.runs} "
        f"({', '.join(f'{w:.2f}' for w in walls)} s); {files} files, study_report.pdf {pdf:.0f} KB"
    )
    print("  in this process: " + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in parts))


def profile(factory, out: Path) -> list[tuple[str, float]]:
    """The report's parts, timed once in this process (imports already paid)."""
    from analysis.study import study_tables
    from analysis.study_report import write_study_report
    from vtt.studies import study_by_name
    from vtt.studies.data import read_study

    parts = []
    with factory() as db:
        study = study_by_name(db, "Bench study")
        started = time.perf_counter()
        data, _exports = read_study(db, study)
        parts.append(("reading the sessions (frames and export)", time.perf_counter() - started))
        started = time.perf_counter()
        study_tables(data)
        parts.append(("the tables", time.perf_counter() - started))
        started = time.perf_counter()
        write_study_report(data, out / "again")
        parts.append(("tables, CSVs and PDF", time.perf_counter() - started))
    return parts


if __name__ == "__main__":
    main()
