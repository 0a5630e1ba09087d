"""The job workers of a ``vtt serve`` process: ``VTT_JOBS`` processes of ``python -m vtt.jobs.worker``, started with
the server (``make run`` and the deploy's ``vtt serve`` start them, no other command) and started again if one ends.
Several server processes on one instance folder each start theirs; the slot locks let only ``VTT_JOBS`` of them
run jobs (:mod:`vtt.jobs.worker`)."""

from __future__ import annotations

import os
import subprocess
import sys

CHECK_SECONDS = 5.0


class Workers:
    def __init__(self, database_url: str, instance_path: str, count: int) -> None:
        self.env = {
            **os.environ,
            "DATABASE_URL": database_url,
            "VTT_INSTANCE_PATH": instance_path,
            "VTT_JOBS_SERVER_PID": str(os.getpid()),
        }
        self.count = count
        self.processes: list[subprocess.Popen] = []
        self.stopped = False

    def start(self) -> None:
        self.processes = [self._spawn() for _ in range(self.count)]

    def _spawn(self) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "vtt.jobs.worker"], env=self.env, close_fds=True)

    def keep_running(self) -> None:
        """Start again a worker that ended (killed, out of memory), every few seconds, until :meth:`stop`."""
        import gevent

        while not self.stopped:
            gevent.sleep(CHECK_SECONDS)
            if not self.stopped:
                self.processes = [self._spawn() if p.poll() is not None else p for p in self.processes]

    def stop(self) -> None:
        self.stopped = True
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
