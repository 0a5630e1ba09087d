"""Heavy work started from the web (probing media, building reports) runs beside the event loop.

Under gevent a C call that takes 100 ms (PyAV opening a clip, ReportLab drawing a page) holds every
connection for those 100 ms.  :func:`off_loop` runs such a call in gevent's native thread pool and
lets the loop go on meanwhile; outside gevent (tests in threading mode, the CLI) it just calls it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
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
