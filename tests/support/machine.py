"""What the tests need from the machine (programs, PostgreSQL, Redis, browsers): required when CI=true, where CI
installs all of it, so a missing one fails there; on a laptop without it the test is skipped, saying what to install.

Every test that needs something the Python packages do not bring asks through ``unavailable`` (or a ``require_``
function here): nothing is skipped when CI=true.
"""

from __future__ import annotations

import os
import shutil
from typing import NoReturn

import pytest

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
POSTGRES_ADMIN_URL = os.environ.get("VTT_TEST_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
# A database of its own on the machine's Redis: the tests flush it (rate-limit counts, presence left by a run).
REDIS_URL = "redis://127.0.0.1:6379/3"
# poppler-utils: the PDFs are read back as text, rendered to images, and their fonts and pages listed.
POPPLER = ("pdftotext", "pdftoppm", "pdfinfo", "pdffonts")


def unavailable(reason: str) -> NoReturn:
    """Stop the test for want of ``reason`` (what is missing and how to get it): a failure when CI=true, else a skip."""
    if IN_CI:
        pytest.fail(f"required when CI=true: {reason}")
    pytest.skip(reason)


def require_programs(*programs: str, install: str) -> None:
    """Each of ``programs`` on the PATH, or ``unavailable`` naming the missing ones and ``install``."""
    missing = [program for program in programs if shutil.which(program) is None]
    if missing:
        unavailable(f"no {', '.join(missing)}: {install}")


def require_poppler() -> None:
    """poppler-utils, which reads the PDFs back (``make test`` installs it)."""
    require_programs(*POPPLER, install="install poppler-utils (make test installs it)")
