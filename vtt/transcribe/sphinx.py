"""``pocketsphinx``: offline recognition with the US English model that the pocketsphinx package ships.

Loading the model takes a quarter of a second, so decoders are kept for the next recording; a decoder
serves one call at a time.  The idle ones wait in a list (its ``pop`` and ``append`` are atomic): no lock,
which under gevent would be a greenlet's lock even in a native thread; calls at once get a decoder each.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from .audio import RATE, pcm16k
from .errors import TranscriptionError

_idle: list[Any] = []


@cache
def describe() -> str:
    """``pocketsphinx VERSION``: what :attr:`Transcript.backend` says."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"pocketsphinx {version('pocketsphinx')}"
    except PackageNotFoundError:
        raise TranscriptionError("pocketsphinx is not installed (pip install pocketsphinx): use http:URL") from None


def refuse(language: str) -> None:
    """TranscriptionError unless ``language`` (a primary subtag) is English."""
    if language != "en":
        raise TranscriptionError(f"pocketsphinx ships an English model only: use http:URL for {language}")


def recognise(path: Path) -> str:
    """What pocketsphinx hears in the recording (an empty text when it hears no word)."""
    describe()  # installed?
    audio = pcm16k(path)
    try:
        decoder = _idle.pop()
    except IndexError:
        decoder = None
    try:
        if decoder is None:
            from pocketsphinx import Decoder

            decoder = Decoder(samprate=RATE, loglevel="FATAL")  # the model inside the package
        decoder.start_utt()
        decoder.process_raw(audio, full_utt=True)
        decoder.end_utt()
        said = decoder.hyp()
    except (RuntimeError, ValueError) as error:  # that decoder is not kept
        raise TranscriptionError(f"pocketsphinx failed on {path.name}: {error}") from None
    _idle.append(decoder)
    return said.hypstr if said is not None else ""
