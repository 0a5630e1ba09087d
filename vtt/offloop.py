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

    return gevent.get_hub().threadpool.apply(function, args, kwargs)


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
