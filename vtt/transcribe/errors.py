"""The one error of :mod:`vtt.transcribe` (a module of its own so that every part can raise it)."""

from __future__ import annotations

import re


class TranscriptionError(RuntimeError):
    """A recording that could not be transcribed; ``str(error)`` is the sentence for the host."""


def without_credentials(text: str) -> str:
    """``text`` with the ``user:password@`` of any URL in it left out."""
    return re.sub(r"(//)[^/@\s]*@", r"\1", text)
