"""A spoken answer as text: a suggestion for the host, who confirms or corrects it.

:func:`transcribe` takes a recording as the browser sends it (MediaRecorder's Opus in WebM, or
MP4/AAC from Safari; WAV and Ogg too) and a backend SPEC, a setting:

``pocketsphinx``
    offline, English only: the ``pocketsphinx`` package ships its US English model, so nothing is
    downloaded.  The recording is decoded and resampled to 16 kHz mono 16-bit PCM with PyAV.
``http:URL``
    an OpenAI-compatible ``/v1/audio/transcriptions`` server (a local Whisper, ...): URL is the
    server's root, its ``/v1`` or the endpoint itself.  The recording is sent as it is.

Before any backend runs, the recording is looked at for a voice (:mod:`vtt.transcribe.speech`): silence, a tone or
noise is no transcript (an empty text), whatever a recogniser would have made of it.  Each backend says how sure it
is (:attr:`Transcript.confidence`, 0 to 1, its own figure), and :attr:`Transcript.level` says what that figure was
measured to mean (:mod:`vtt.transcribe.levels`), so the host knows when to listen again and retype.  The text is
cleaned and capped whatever the backend (:mod:`vtt.transcribe.text`).

It blocks (decoding, recognising, waiting for the server): call it from a worker or off the event
loop (:func:`vtt.offloop.off_loop`).  Nothing here imports Flask or Socket.IO.  Every failure is a
:class:`TranscriptionError` whose message names the problem, and never a URL's credentials.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from ..model_calls.endpoints import transcriptions_endpoint
from . import remote, speech, sphinx
from .audio import pcm16k
from .errors import TranscriptionError, without_credentials
from .levels import LEVELS, level_of
from .text import MAX_TRANSCRIPT, clean

DEFAULT_MODEL = "whisper-1"  # OpenAI's name; a local server may ignore it or want its own (``model=``)


@dataclass(frozen=True)
class Transcript:
    """What a backend heard: a suggestion, not an answer."""

    text: str  # cleaned: no control characters, one space between words, at most MAX_TRANSCRIPT characters
    confidence: float | None  # 0 (a guess) to 1 (sure), as the backend tells it; None when it does not
    backend: str  # "pocketsphinx 5.1.1", "http:http://127.0.0.1:8000/v1/audio/transcriptions model whisper-1"
    seconds: float  # taken, decoding included
    language: str  # the language asked for, as its primary subtag ("en", "ko")
    hearing: speech.Hearing | None = None  # the voice found in the recording before any backend ran

    @property
    def level(self) -> str:
        """How sure the suggestion is, as measured for its backend: one of LEVELS (``none``: no speech heard)."""
        return level_of(self.text, self.confidence, self.backend)


def language_code(language: str) -> str:
    """The primary subtag of a language tag, lower case: ``en-US`` and ``en_GB`` are ``en``."""
    code = (language or "").strip().replace("_", "-").split("-")[0].lower()
    if not code.isalpha() or not 2 <= len(code) <= 3:
        raise TranscriptionError(f"{language!r} is not a language code (give one such as en or ko)")
    return code


def check(spec: str, *, language: str = "en", model: str = DEFAULT_MODEL) -> str:
    """The backend ``spec`` would transcribe ``language``: its description (as :attr:`Transcript.backend` gives
    it); TranscriptionError otherwise.  For a setting's form: it reads no file and reaches no server."""
    kind, target = _parse(spec)
    code = language_code(language)
    if kind == "pocketsphinx":
        sphinx.refuse(code)
        return sphinx.describe()
    return remote.describe(transcriptions_endpoint(target), model)


def transcribe(
    path: Path | str,
    spec: str,
    *,
    language: str = "en",
    timeout: float = 60,
    api_key: str | None = None,
    model: str = DEFAULT_MODEL,
) -> Transcript:
    """The recording at ``path`` as text, by the backend ``spec`` (``pocketsphinx`` or ``http:URL``).

    ``timeout`` bounds an ``http:`` exchange as a whole; ``api_key`` is sent as a bearer token and ``model`` as
    the form's ``model`` field (``http:`` only)."""
    kind, target = _parse(spec)
    code = language_code(language)
    if not timeout or timeout <= 0:
        raise TranscriptionError(f"the timeout must be a positive number of seconds, not {timeout!r}")
    if kind == "pocketsphinx":
        sphinx.refuse(code)
    started = time.monotonic()
    path = Path(path)
    audio = pcm16k(path)
    hearing = speech.hear(audio)
    if not hearing.speech:  # no backend is asked: a recogniser finds words in anything
        backend = (
            sphinx.describe() if kind == "pocketsphinx" else remote.describe(transcriptions_endpoint(target), model)
        )
        return Transcript("", None, backend, time.monotonic() - started, code, hearing)
    if kind == "pocketsphinx":
        text, confidence = sphinx.recognise(audio, path.name)
        backend = sphinx.describe()
    else:
        text, confidence, backend = remote.transcription(path, target, code, timeout, api_key, model)
    heard = clean(text)
    return Transcript(heard, confidence if heard else None, backend, time.monotonic() - started, code, hearing)


def _parse(spec: str) -> tuple[str, str]:
    spec = (spec or "").strip()
    if spec == "pocketsphinx":
        return "pocketsphinx", ""
    kind, _, target = spec.partition(":")
    if kind == "http" and target:
        remote.check_url(target)
        return "http", target
    raise TranscriptionError(
        f"unknown transcription backend {without_credentials(spec)!r}: give pocketsphinx or http:URL"
    )


__all__ = [
    "DEFAULT_MODEL",
    "LEVELS",
    "MAX_TRANSCRIPT",
    "Transcript",
    "TranscriptionError",
    "check",
    "language_code",
    "transcribe",
]
