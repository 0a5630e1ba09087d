"""``python -m vtt.jobs.worker``: one job worker, started by ``vtt serve`` (:mod:`vtt.jobs.workers`).

A worker runs jobs only while it holds one of the instance's ``VTT_JOBS`` slot locks (``instance/jobs/slot-N.lock``),
so however many server processes share an instance folder, at most that many jobs run at once on the machine; the
others wait for a slot.  It imports the heavy libraries once, then claims queued jobs from the database and runs
each in a forked child (started in milliseconds, and killed when the host cancels the job).  Between jobs it marks
dead the jobs of this machine whose process is gone, and removes download files past their time.  It stops when the
server that started it is gone.
"""

from __future__ import annotations

import fcntl
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from ..config import Settings
from ..db import make_db_factory, make_engine
from .model import CANCELLED, CANCELLING, RUNNING, Job
from .runner import preload, run_job
from .scratch import remove_expired
from .store import claim, fail, job_process_alive, moved, now, sweep_dead, this_host

POLL_SECONDS = 0.2  # a queued job waits at most this long for an idle worker
SWEEP_SECONDS = 5.0
SLOT_RETRY_SECONDS = 2.0


def take_slot(folder: Path, slots: int, parent: int):
    """An open, locked slot file (held until this process ends); waits while all ``slots`` are held."""
    folder.mkdir(parents=True, exist_ok=True)
    while parent_alive(parent):
        for number in range(slots):
            handle = (folder / f"slot-{number}.lock").open("a")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                continue
            return handle
        time.sleep(SLOT_RETRY_SECONDS)
    return None


def run_forked(factory: sessionmaker[Session], engine, job_id: int, tend: Callable[[], None]) -> None:
    """Run the claimed job in a forked child; kill it if the host cancels; record a child that died.  ``tend`` goes
    on meanwhile (an hour's model run must not stop the sweeps)."""
    child = os.fork()
    if child == 0:  # the child: its own connections, never the parent's
        engine.dispose(close=False)
        status = 0
        try:
            run_job(factory, job_id)
        except BaseException:
            status = 1
        finally:
            os._exit(status)
    with factory() as db:
        moved(db, job_id, (RUNNING, CANCELLING), pid=child)
    while True:
        done, status = os.waitpid(child, os.WNOHANG)
        if done:
            break
        with factory() as db:
            state = db.get(Job, job_id).state
            if state == CANCELLING:
                os.kill(child, signal.SIGKILL)
                os.waitpid(child, 0)
                moved(db, job_id, (CANCELLING,), state=CANCELLED, ended_at=now())
                return
        tend()
        time.sleep(POLL_SECONDS)
    with factory() as db:
        if os.WIFSIGNALED(status):
            name = signal.Signals(os.WTERMSIG(status)).name
            fail(db, job_id, f"its process was killed ({name}) before it finished", state="dead")
        elif os.WEXITSTATUS(status) != 0:
            fail(db, job_id, f"its process ended with status {os.WEXITSTATUS(status)}", state="dead")
        moved(db, job_id, (CANCELLING,), state=CANCELLED, ended_at=now())


def parent_alive(parent: int) -> bool:
    """Whether the server that started this worker (its pid passed in ``VTT_JOBS_SERVER_PID``) still runs; a killed
    one not yet reaped is a zombie: gone."""
    try:
        with open(f"/proc/{parent}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return os.path.isdir("/proc") is False


def end_with_parent() -> None:
    """Linux: the kernel ends this worker when the server that started it dies, however it dies (a forked job's
    child is not bound by it: it finishes its job and writes its result)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # elsewhere: the loop's getppid() check ends it instead


def main() -> None:
    end_with_parent()
    settings = Settings.from_env()
    parent = int(os.environ.get("VTT_JOBS_SERVER_PID") or os.getppid())
    slot = take_slot(settings.instance_path / "jobs", settings.jobs, parent)
    if slot is None:
        return
    preload()
    engine = make_engine(settings.database_url)
    factory = make_db_factory(engine)
    exports = settings.instance_path / "exports"
    host, swept = this_host(), [0.0]

    def tend() -> None:
        """Every few seconds: this machine's jobs whose process is gone are dead; old download files go."""
        if time.monotonic() - swept[0] > SWEEP_SECONDS:
            with factory() as db:
                sweep_dead(db, host, lambda pid: pid == os.getpid() or job_process_alive(pid))
                remove_expired(db, exports, settings.download_keep_seconds)
            swept[0] = time.monotonic()

    print(f"job worker {os.getpid()} holds {slot.name}", file=sys.stderr, flush=True)
    while parent_alive(parent):
        tend()
        with factory() as db:
            job = claim(db, host, os.getpid())
        if job is None:
            time.sleep(POLL_SECONDS)
            continue
        run_forked(factory, engine, job.id, tend)


if __name__ == "__main__":
    main()
