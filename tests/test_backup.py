"""docs/deploy.md's PostgreSQL backup and restore, run as it shows them: a finished session's database dumped with
``pg_dump --format=custom``, restored with ``pg_restore`` into a new database, and ``vtt report`` on both gives the
same figures.

Required when CI=true (PostgreSQL and its client programs: pg_dump, pg_restore, createdb)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from tests.support.machine import POSTGRES_ADMIN_URL, require_programs
from tests.support.paths import ROOT
from tests.support.served import ServedApp
from vtt.db import upgrade

VTT = str(ROOT / ".venv" / "bin" / "vtt")
JURORS = 12


@pytest.fixture
def postgres_clients() -> None:
    require_programs("pg_dump", "pg_restore", "createdb", install="install postgresql-client")


def libpq_url(sqlalchemy_url: str) -> str:
    """The URL pg_dump and pg_restore take: SQLAlchemy's driver suffix dropped."""
    return sqlalchemy_url.replace("postgresql+psycopg://", "postgresql://", 1)


def run_command(args: list[str], **env: str) -> str:
    result = subprocess.run(args, capture_output=True, text=True, timeout=120, env={**os.environ, **env})
    assert result.returncode == 0, (args, result.stdout, result.stderr[-4000:])
    return result.stdout


def play_a_session(url: str) -> str:
    """A whole session played by ``vtt simulate --new --drive`` on a gevent server on ``url``; its join code."""
    with ServedApp({"DATABASE_URL": url}) as served:
        output = run_command(
            [VTT, "simulate", "--url", served.url, "--new", "--jurors", str(JURORS), "--drive"]
            + ["--pace", "0.1", "--seed", "7", "--timeout", "90", "--json"],
            DATABASE_URL=url,
        )
    assert "Traceback" not in served.output, served.output
    figures = json.loads(output.strip().splitlines()[-1])
    assert (figures["phase"], figures["errors"], figures["jurors"]) == ("finished", 0, JURORS), figures
    return figures["session"]


def report(url: str, code: str, folder: Path) -> dict[str, bytes]:
    """``vtt report CODE --out folder`` on the database at ``url``: each file written, by name."""
    run_command([VTT, "report", code, "--out", str(folder)], DATABASE_URL=url)
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def pdf_text(path: Path) -> str:
    return subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True, check=True).stdout


def pdf_pages(path: Path) -> int:
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True).stdout
    return int(next(line.split()[-1] for line in info.splitlines() if line.startswith("Pages:")))


@pytest.mark.postgres
@pytest.mark.slow
def test_a_finished_session_dumped_and_restored_reports_the_same_figures(postgres_url, postgres_clients, tmp_path):
    upgrade(postgres_url)
    code = play_a_session(postgres_url)
    original = report(postgres_url, code, tmp_path / "original")

    restored_name = postgres_url.rsplit("/", 1)[1] + "_restored"
    restored_url = postgres_url.rsplit("/", 1)[0] + f"/{restored_name}"
    server = libpq_url(POSTGRES_ADMIN_URL).rsplit("/", 1)[0]  # postgresql://postgres@127.0.0.1:5432
    dump = tmp_path / "vtt.dump"
    try:
        # docs/deploy.md's commands, with this machine's role (postgres) in place of vtt.
        run_command(["pg_dump", "--format=custom", f"--file={dump}", libpq_url(postgres_url)])
        run_command(["createdb", f"--maintenance-db={server}/postgres", "--owner", "postgres", restored_name])
        run_command(["pg_restore", "--no-owner", "--role=postgres", f"--dbname={libpq_url(restored_url)}", str(dump)])
        run_command([VTT, "db", "upgrade"], DATABASE_URL=restored_url)  # a no-op here: the same version
        restored = report(restored_url, code, tmp_path / "restored")
    finally:
        admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{restored_name}" WITH (FORCE)'))
        admin.dispose()

    assert set(restored) == set(original)
    csvs = sorted(name for name in original if name.endswith(".csv"))
    assert {"tally.csv", "rounds.csv", "session_info.csv"} <= set(csvs), csvs
    for name in csvs:
        assert restored[name] == original[name], name
    # A session's figures, not an empty table: every juror voted or abstained in each round.
    rounds = original["rounds.csv"].decode().splitlines()
    assert len(rounds) == 3 and rounds[0].startswith("round"), rounds
    # The PDFs embed their creation date, so their bytes differ; their pages and text do not.
    pdfs = sorted(name for name in original if name.endswith(".pdf"))
    assert {"profiles.pdf", "tallies.pdf", "report.pdf"} <= set(pdfs), pdfs
    for name in pdfs:
        before, after = tmp_path / "original" / name, tmp_path / "restored" / name
        assert pdf_pages(after) == pdf_pages(before) > 0, name
        assert pdf_text(after) == pdf_text(before), name
