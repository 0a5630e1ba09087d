"""Waiting for a condition instead of for a fixed time: poll it until it holds, up to a generous deadline.

A fixed sleep is either too short on a loaded machine (the test fails) or too long everywhere else;
a deadline is only reached when something is really wrong.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def _timed_out(timeout: float, message: str, condition: Callable) -> AssertionError:
    return AssertionError(f"timed out after {timeout:g} s waiting for {message or condition}")


def wait_until(condition: Callable[[], T], timeout: float = 10.0, interval: float = 0.05, message: str = "") -> T:
    """Call ``condition`` every ``interval`` seconds until it returns something truthy, and return that;
    fail (AssertionError naming ``message``) if it has not within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        found = condition()
        if found:
            return found
        if time.monotonic() >= deadline:
            raise _timed_out(timeout, message, condition)
        time.sleep(interval)


async def wait_until_async(
    condition: Callable[[], T], timeout: float = 10.0, interval: float = 0.05, message: str = ""
) -> T:
    """``wait_until`` inside an event loop: the loop keeps running between the calls of ``condition``."""
    deadline = time.monotonic() + timeout
    while True:
        found = condition()
        if found:
            return found
        if time.monotonic() >= deadline:
            raise _timed_out(timeout, message, condition)
        await asyncio.sleep(interval)
