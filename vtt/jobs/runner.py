"""Doing one job: its kind's worker module's ``main(*argv)``, its output or its error written to its row."""

from __future__ import annotations

import importlib
import inspect
import sys
import time
import traceback
from collections.abc import Callable

from sqlalchemy.orm import Session, sessionmaker

from .model import QUEUED, RUNNING, Job
from .store import KINDS, fail, finish, moved, now, set_progress, this_host

# the modules every kind's work needs, imported once by a worker before its first job (a job then starts in ms)
HEAVY = (
    "pandas",
    "vtt.results.export",
    "vtt.reports.session",
    "vtt.juries.ai",
    "vtt.judge.suggest",
    "vtt.transcribe",
    "analysis.study",
    "vtt.studies.data",
)


def preload() -> None:
    """Import every kind's modules and do once what each report's first drawing does (reading the fonts, ReportLab's
    first page): the forked children inherit it, so a report takes a third of a second, not a second."""
    import io

    from reportlab.lib.styles import ParagraphStyle
    from reportlab.platypus import Paragraph, SimpleDocTemplate

    from analysis.fonts import register_fonts

    for name in (*HEAVY, *KINDS.values()):
        importlib.import_module(name)
    regular, _bold = register_fonts()
    style = ParagraphStyle("warm", fontName=regular)
    SimpleDocTemplate(io.BytesIO()).build([Paragraph("<b>warm</b> 준비", style)])


def run_job(factory: sessionmaker[Session], job_id: int) -> None:
    """Run the (claimed, running) job in this process and record what came of it."""
    with factory() as db:
        job = db.get(Job, job_id)
        if job is None or job.state != RUNNING:
            return
        kind, argv = job.kind, list(job.args.get("argv", []))
    main = importlib.import_module(KINDS[kind]).main
    kwargs = {"report": progress_reporter(factory, job_id)} if "report" in inspect.signature(main).parameters else {}
    try:
        output = main(*argv, **kwargs)
    except Exception as error:  # the job's failure, told on the host's page; the worker goes on
        traceback.print_exc(file=sys.stderr)
        with factory() as db:
            fail(db, job_id, str(error) or type(error).__name__)
        return
    with factory() as db:
        finish(db, job_id, output if isinstance(output, dict) else {"result": output})


def progress_reporter(factory: sessionmaker[Session], job_id: int, every: float = 0.5) -> Callable[[str], None]:
    """A kind's ``report(text)``: the job's progress (``3/12``), written at most every ``every`` seconds (and always
    the last of a run, when ``text`` is its end)."""
    last = [0.0]

    def report(text: str, final: bool = False) -> None:
        if final or time.monotonic() - last[0] >= every:
            last[0] = time.monotonic()
            with factory() as db:
                set_progress(db, job_id, text)

    return report


def counted(report: Callable[..., None] | None) -> tuple[Callable[[int], None] | None, Callable[..., None] | None]:
    """``started(total)`` and ``progress(_said)`` callbacks of a run that report ``done/total`` through ``report``."""
    if report is None:
        return None, None
    count = {"done": 0, "total": 0}

    def started(total: int) -> None:
        count["total"] = total
        report(f"0/{total}", final=True)

    def progress(_said) -> None:
        count["done"] += 1
        report(f"{count['done']}/{count['total']}", final=count["done"] == count["total"])

    return started, progress


def run_here(factory: sessionmaker[Session], job_id: int, pid: int) -> None:
    """Claim this queued job and run it in this process."""
    with factory() as db:
        claimed = moved(db, job_id, (QUEUED,), state=RUNNING, host=this_host(), pid=pid, started_at=now())
    if claimed:
        run_job(factory, job_id)


if __name__ == "__main__":  # ``python -m vtt.jobs.runner JOB_ID``: one job, by an app served without workers
    import os

    from ..db import db_factory_from_env

    run_here(db_factory_from_env(), int(sys.argv[1]), os.getpid())
