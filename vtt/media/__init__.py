"""Clips: where they live, whether browsers can play them (check), and building them from what the
benchmarks publish (prepare).  PyAV does the decoding and encoding; nothing here runs on the event loop
(the web calls it through :func:`vtt.offloop.off_loop`).

A clip ``clips/q01.mp4`` may have a light rendition for phones beside it, ``clips/q01.phone.mp4``:
``/media/clips/q01.mp4?rendition=phone`` serves it when it is there (and the clip itself when not).
"""

from __future__ import annotations

from pathlib import PurePosixPath

PHONE_SUFFIX = ".phone"  # clips/q01.mp4 -> clips/q01.phone.mp4


def phone_rendition(source: str) -> str:
    """The path of a clip's phone rendition (it may not exist): ``clips/q01.mp4`` -> ``clips/q01.phone.mp4``."""
    path = PurePosixPath(source)
    return str(path.with_name(f"{path.stem}{PHONE_SUFFIX}{path.suffix}"))
