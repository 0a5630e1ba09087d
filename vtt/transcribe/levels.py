"""How sure a suggestion is, as the level the host's card names: what a backend's figure has been measured to mean.

A backend's confidence is its own figure, not a probability of being right: pocketsphinx gave 1.0 to "gervais" for
a beep and to "it" for silence, and its figure of 0.7 or more still had half the words wrong on espeak-ng's speech.
The level says what ``bench/bench_transcribe.py`` measured for suggestions of that backend at that figure (the
calibration, docs/benchmarks.md):

``sure``
    word for word right in 9 of 10 suggestions or more at that figure;
``likely``
    most of the words right (word accuracy of half or more) at that figure;
``unsure``
    below that: the host listens and types;
``none``
    no speech heard (silence, a tone, noise: :mod:`vtt.transcribe.speech`), or the backend heard no word;
``unknown``
    the backend gave no figure.

A backend that was not measured (an ``http:`` server: the project ships no Whisper model to measure) is never
``sure``: its figure can make a suggestion ``likely`` at most, on the backend's own word.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..protocol.vocabulary import TRANSCRIPT_LEVELS as LEVELS


@dataclass(frozen=True)
class Scale:
    """The backend's confidence at which a suggestion is shown as likely and as sure (None: never)."""

    likely: float | None
    sure: float | None


# pocketsphinx 5.1.1 with its bundled model, measured on 120 sentences said by espeak-ng (bench/bench_transcribe.py,
# docs/benchmarks.md, 2026-11-28): 1 of 120 was right word for word (at 0.4-0.6); at 0.8 or more, 0 of 4 and 11 %
# of the words; no figure above which most words were right (at 0.6 or more, 38 %).  Its figure says nothing a host
# can act on: every suggestion of it is unsure.
POCKETSPHINX = Scale(likely=None, sure=None)
# an http: server (a Whisper-class model): its exp(avg_logprob), not measured here
UNMEASURED = Scale(likely=0.8, sure=None)


def scale_of(backend: str) -> Scale:
    """The measured scale of the backend named ``backend`` (as :attr:`Transcript.backend` names it)."""
    return POCKETSPHINX if backend.startswith("pocketsphinx") else UNMEASURED


def level_of(text: str, confidence: float | None, backend: str) -> str:
    """The level of a suggestion: one of LEVELS."""
    if not text.strip():
        return "none"
    if confidence is None:
        return "unknown"
    scale = scale_of(backend)
    if scale.sure is not None and confidence >= scale.sure:
        return "sure"
    if scale.likely is not None and confidence >= scale.likely:
        return "likely"
    return "unsure"


__all__ = ["LEVELS", "POCKETSPHINX", "UNMEASURED", "Scale", "level_of", "scale_of"]
