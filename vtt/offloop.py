"""Heavy work started from the web (probing media, building reports) runs beside the event loop.

Under gevent a C call that takes 100 ms (PyAV opening a clip) holds every connection for those 100 ms.
:func:`off_loop` runs such a call in gevent's native thread pool and lets the loop go on meanwhile; outside gevent
(tests in threading mode, the CLI) it just calls it.  Work that is mostly Python for seconds (a report's pandas and
ReportLab, a large import) would still take the GIL from the loop every few milliseconds in a thread:
:func:`in_process` runs it as ``python -m MODULE ...`` in a process of its own.  A worker's file for the host to
download (an export, a report) is written whole under the instance's exports folder (:func:`scratch_path`,
:func:`written_whole`) and streamed from there, never held in the server's memory.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def gevent_serving() -> bool:
    """True in a ``vtt serve`` process, where gevent has patched the standard library."""
    monkey = sys.modules.get("gevent.monkey")
    return monkey is not None and monkey.is_module_patched("socket")


def off_loop(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``function(*args, **kwargs)`` in a native thread when serving under gevent; its result or its exception."""
    if not gevent_serving():
        return function(*args, **kwargs)
    import gevent

    return _answer(gevent.get_hub().threadpool.apply(_caught, (function, args, kwargs)))


_waiting_pool = None
WAITING_THREADS = 4


def off_loop_waiting(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """:func:`off_loop` in a small pool of its own, for work that may wait for a database lock.

    On SQLite the writer commits in the hub's pool while it holds the write lock: work waiting for that lock in the
    same pool could take every thread, and the commit that would free the lock would wait behind it (each upload's
    reservation of its place under the caps waited up to the busy timeout, then failed)."""
    if not gevent_serving():
        return function(*args, **kwargs)
    global _waiting_pool
    if _waiting_pool is None:
        from gevent.threadpool import ThreadPool

        _waiting_pool = ThreadPool(WAITING_THREADS)
    return _answer(_waiting_pool.apply(_caught, (function, args, kwargs)))


def _caught(function: Callable[..., T], args: tuple, kwargs: dict) -> tuple[bool, Any]:
    """The call's result, or its exception handed back: gevent prints a traceback for every exception raised in its
    pools, and an upload refused past a cap or as not audio is an answer, not an error."""
    try:
        return True, function(*args, **kwargs)
    except Exception as error:
        return False, error


def _answer(outcome: tuple[bool, Any]) -> Any:
    done, result = outcome
    if not done:
        raise result
    return result


def in_process(
    module: str, *args: str, database_url: str, timeout: float | None = 300
) -> subprocess.CompletedProcess[str]:
    """``python -m module args...`` on ``database_url``, in a process of its own; its output as text.

    Under gevent ``subprocess`` is patched: the wait yields, the loop goes on.  A run over ``timeout`` seconds is
    killed (``subprocess.TimeoutExpired``).
    """
    env = {**os.environ, "DATABASE_URL": database_url}
    return subprocess.run(
        [sys.executable, "-m", module, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def scratch_path(folder: Path, session_id: int, name: str) -> Path:
    """A fresh path in ``folder`` (the instance's exports folder) for a worker's file or folder of a session.  Its
    name begins with the session's id: deleting the session's recordings finds what a kill left of it, and so does
    the server's start (vtt.recordings.sweep_orphans)."""
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{session_id}-{secrets.token_hex(8)}-{name}"


@contextmanager
def written_whole(path: Path) -> Iterator[Path]:
    """A path beside ``path`` to write to, renamed to ``path`` when the block ends without an error (so nothing ever
    reads ``path`` half-written), removed otherwise."""
    partial = path.with_name(f".{path.name}.part")
    try:
        yield partial
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
