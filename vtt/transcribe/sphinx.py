"""``pocketsphinx``: offline recognition with the US English model that the pocketsphinx package ships.

Loading the model takes a quarter of a second, so decoders are kept for the next recording; a decoder
serves one call at a time.  The idle ones wait in a list (its ``pop`` and ``append`` are atomic): no lock,
which under gevent would be a greenlet's lock even in a native thread; calls at once get a decoder each.

The confidence is the geometric mean of the heard words' posterior probabilities (``Decoder.seg()``: each word's
share of the lattice's paths through it), silences and noises left out: 1 when every word was the only likely one,
near 0 when another word was about as likely at each place.  Whisper's ``exp(avg_logprob)`` is the same kind of mean
over its tokens, so the two backends' figures read alike (not equal: each model is sure in its own way).
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

from .audio import RATE
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


def recognise(audio: bytes, name: str) -> tuple[str, float | None]:
    """What pocketsphinx hears in ``audio`` (16 kHz mono 16-bit PCM of the recording ``name``; an empty text when it
    hears no word), and how sure it is (0 to 1; None when it heard no word)."""
    describe()  # installed?
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
        posteriors = [segment.prob for segment in decoder.seg() if _is_word(segment.word)]
    except (RuntimeError, ValueError) as error:  # that decoder is not kept
        raise TranscriptionError(f"pocketsphinx failed on {name}: {error}") from None
    _idle.append(decoder)
    return (said.hypstr if said is not None else ""), confidence(posteriors)


def confidence(posteriors: list[float]) -> float | None:
    """The geometric mean of word posteriors (each kept within 0..1: the log arithmetic rounds to 1.0001)."""
    if not posteriors:
        return None
    logs = [math.log(min(max(p, 1e-9), 1.0)) for p in posteriors]
    return math.exp(sum(logs) / len(logs))


def _is_word(name: str) -> bool:
    # <s>, </s>, <sil> and fillers such as [NOISE] or ++BREATH++ are not words the child said
    return bool(name) and name[0] not in "<[+"
