"""Recordings as PyAV (which bundles FFmpeg) reads them: what kind of file, and its sound as 16 kHz mono PCM."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .errors import TranscriptionError

RATE = 16000  # what pocketsphinx's model (and Whisper) was trained on
MAX_SECONDS = 600  # a spoken answer lasts seconds: a longer file is not one, and would hold a worker for minutes

# FFmpeg's container names (``container.format.name``): the file name and type a server is told.
KINDS = (
    ("webm", "webm", "audio/webm"),  # "matroska,webm": MediaRecorder's Opus in WebM
    ("mp4", "mp4", "audio/mp4"),  # "mov,mp4,m4a,3gp,3g2,mj2": Safari's AAC in MP4
    ("ogg", "ogg", "audio/ogg"),
    ("wav", "wav", "audio/wav"),
    ("mp3", "mp3", "audio/mpeg"),
    ("flac", "flac", "audio/flac"),
)


@contextmanager
def opened(path: Path):
    """The file as a PyAV container with its first audio stream; TranscriptionError if it is not one."""
    import av

    if not path.is_file():
        raise TranscriptionError(f"no recording at {str(path)!r}")
    try:
        container = av.open(str(path))
    except PermissionError as error:
        raise TranscriptionError(f"cannot read the recording {path.name}: {error.strerror}") from None
    except (av.FFmpegError, OSError, ValueError) as error:
        raise TranscriptionError(f"cannot decode the recording {path.name}: {_reason(error)}") from None
    try:
        if not container.streams.audio:
            raise TranscriptionError(f"the recording {path.name} has no sound track")
        yield container
    finally:
        container.close()


def kind_of(path: Path) -> tuple[str, str]:
    """The recording's file extension and media type, by what is in it (not by its name)."""
    with opened(path) as container:
        names = container.format.name.split(",")
    for name, extension, mime in KINDS:
        if name in names:
            return extension, mime
    return names[0], "application/octet-stream"


def pcm16k(path: Path) -> bytes:
    """The recording's sound as 16 kHz mono signed 16-bit little-endian PCM."""
    import av

    parts: list[bytes] = []
    size = 0
    limit = MAX_SECONDS * RATE * 2
    with opened(path) as container:
        resampler = av.AudioResampler(format="s16", layout="mono", rate=RATE)
        try:
            for frame in container.decode(container.streams.audio[0]):
                for chunk in _resampled(resampler, frame):
                    parts.append(chunk)
                    size += len(chunk)
                if size > limit:
                    raise TranscriptionError(
                        f"the recording {path.name} lasts over {MAX_SECONDS:g} s: not a spoken answer"
                    )
            parts.extend(_resampled(resampler, None))
        except (av.FFmpegError, ValueError) as error:
            raise TranscriptionError(f"cannot decode the recording {path.name}: {_reason(error)}") from None
    data = b"".join(parts)
    if not data:
        raise TranscriptionError(f"the recording {path.name} holds no sound")
    return data


def _resampled(resampler: Any, frame: Any) -> list[bytes]:
    # packed s16 mono: one plane, its used bytes (a plane's buffer may be padded)
    return [bytes(out.planes[0])[: out.samples * 2] for out in resampler.resample(frame)]


def _reason(error: BaseException) -> str:
    return getattr(error, "strerror", None) or str(error) or type(error).__name__
