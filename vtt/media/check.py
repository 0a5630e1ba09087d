"""Whether a question's clip will play at the venue: it is there, decodes, is long enough for its span, and is in a
container and codecs that every browser plays (phones on a venue's Wi-Fi included).

Pure and thread-safe: PyAV opens each file on its own, and :func:`check_clips` spreads the files over a few
threads (PyAV releases the GIL while it demuxes and decodes).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from . import phone_rendition

# Browsers everywhere (Chrome, Firefox, Safari on iOS and macOS, Android) play these; anything else is named.
PLAYABLE = {
    ".mp4": ({"h264"}, {"aac", "mp3"}),
    ".m4v": ({"h264"}, {"aac", "mp3"}),
    ".webm": ({"vp9", "vp8", "av1"}, {"opus", "vorbis"}),
}
PLAYABLE_PIXELS = {"yuv420p", "yuvj420p"}  # 4:2:2, 4:4:4 and 10-bit H.264 do not decode on most phones
LARGE_BYTES = 200 * 1024 * 1024  # a phone on a venue's Wi-Fi fetches this slowly
HIGH_BITRATE = 4_000_000  # bits per second: above this, shared Wi-Fi stalls (a 720p H.264 clip needs ~2.5)
SPAN_SLACK_SECONDS = 0.1  # a span may end this much after the last frame (rounding of the benchmarks' timestamps)
FIX_REENCODE = "re-encode it to H.264/AAC MP4 (`vtt media prepare --format video`)"
CHECK_WORKERS = 4


@dataclass(frozen=True)
class ClipRef:
    """A question's clip as the bank stores it: a path relative to the media folder, or a URL."""

    qid: str
    source: str | None
    start: float | None = None
    end: float | None = None


@dataclass
class ClipVerdict:
    qid: str
    source: str | None
    verdict: str = "ok"  # ok | warning | problem | url (not checked offline) | none (no clip)
    problems: list[str] = field(default_factory=list)  # sentences naming what is wrong and the fix
    warnings: list[str] = field(default_factory=list)
    duration: float | None = None
    container: str | None = None
    video_codec: str | None = None
    audio_codec: str | None = None
    width: int | None = None
    height: int | None = None
    bitrate: int | None = None
    size: int | None = None
    phone: bool = False  # a phone rendition is beside the clip

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def is_url(source: str) -> bool:
    return source.startswith(("http://", "https://", "//"))


def clip_path(media_dir: Path, source: str) -> Path | None:
    """The file of a clip inside the media folder; None for a path that would leave it."""
    relative = PurePosixPath(source.replace("\\", "/"))
    if relative.is_absolute() or ".." in relative.parts or "\x00" in source:
        return None
    return media_dir / Path(*relative.parts)


def check_clips(media_dir: Path, refs: Sequence[ClipRef], workers: int | None = None) -> list[ClipVerdict]:
    """Every clip's verdict, in the order given."""
    if len(refs) < 2:
        return [check_clip(media_dir, ref) for ref in refs]
    with ThreadPoolExecutor(max_workers=workers or CHECK_WORKERS) as pool:
        return list(pool.map(lambda ref: check_clip(media_dir, ref), refs))


def check_clip(media_dir: Path, ref: ClipRef) -> ClipVerdict:
    result = ClipVerdict(ref.qid, ref.source)
    if not ref.source:
        result.verdict = "none"
        return result
    if is_url(ref.source):
        result.verdict = "url"
        result.warnings.append("an online clip is not checked offline: play it once on the venue's network")
        return result
    path = clip_path(media_dir, ref.source)
    if path is None:
        result.problems.append(
            "the path leaves the media folder (an absolute path or '..'): give the clip's path inside the media folder"
        )
    elif not path.is_file():
        result.problems.append(
            f"the file is not in the media folder ({media_dir}): copy it there, or build it with `vtt media prepare`"
        )
    else:
        _probe(path, ref, result)
        phone = path.with_name(PurePosixPath(phone_rendition(path.name)).name)
        if phone.is_file():
            result.phone = True
            rendition = ClipVerdict(ref.qid, ref.source)
            _probe(phone, ref, rendition)
            result.problems += [f"its phone rendition {phone.name}: {text}" for text in rendition.problems]
    result.verdict = "problem" if result.problems else "warning" if result.warnings else "ok"
    return result


def _probe(path: Path, ref: ClipRef, result: ClipVerdict) -> None:
    import av

    result.size = path.stat().st_size
    try:
        container = av.open(str(path))
    except (av.FFmpegError, OSError) as failure:
        result.problems.append(f"cannot be opened as a video ({_reason(failure)}): {FIX_REENCODE}")
        return
    with container:
        video = container.streams.video[0] if container.streams.video else None
        audio = container.streams.audio[0] if container.streams.audio else None
        result.container = container.format.name
        result.video_codec = video.codec_context.name if video else None
        result.audio_codec = audio.codec_context.name if audio else None
        if video is None:
            result.problems.append("has no video stream: " + FIX_REENCODE)
            return
        result.width, result.height = video.codec_context.width, video.codec_context.height
        result.duration = stream_seconds(container, video)
        _formats(path, video, audio, result)
        _decodes(container, video, ref, result)
    if result.duration:
        result.bitrate = int(result.size * 8 / result.duration)
        frame_seconds = 1 / float(video.average_rate) if video.average_rate else SPAN_SLACK_SECONDS
        if problem := span_problem(ref.start, ref.end, result.duration, frame_seconds):
            result.problems.append(problem)
        if result.bitrate > HIGH_BITRATE:
            result.warnings.append(
                f"{result.bitrate / 1e6:.1f} Mbit/s is heavy for phones on shared Wi-Fi (over "
                f"{HIGH_BITRATE / 1e6:g}): `vtt media prepare` makes a lighter clip"
            )
    if result.size > LARGE_BYTES:
        result.warnings.append(
            f"{result.size / 2**20:,.0f} MB is slow to fetch on a venue's Wi-Fi (over "
            f"{LARGE_BYTES / 2**20:,.0f} MB): cut it to its span with `vtt media prepare`"
        )


def stream_seconds(container, video) -> float | None:
    """How long a video stream lasts, from its own header or else the container's."""
    if video.duration is not None and video.time_base:
        return float(video.duration * video.time_base)
    if container.duration is not None:
        return container.duration / 1_000_000
    return None


def _formats(path: Path, video, audio, result: ClipVerdict) -> None:
    suffix = path.suffix.lower()
    codecs = PLAYABLE.get(suffix)
    video_codec, audio_codec = result.video_codec, result.audio_codec
    if codecs is None:
        result.problems.append(
            f"{_codec_name(video_codec)} video in a {suffix or 'suffix-less'} file "
            f"({result.container}) does not play in every browser: {FIX_REENCODE}"
        )
        return
    if video_codec not in codecs[0]:
        result.problems.append(
            f"{_codec_name(video_codec)} video in a {suffix} file does not play in every browser: {FIX_REENCODE}"
        )
    elif video.codec_context.pix_fmt not in PLAYABLE_PIXELS:
        result.problems.append(
            f"{video_codec} with pixel format {video.codec_context.pix_fmt} does not decode on "
            f"most phones (they need yuv420p): {FIX_REENCODE}"
        )
    if audio_codec is not None and audio_codec not in codecs[1]:
        result.problems.append(f"{audio_codec} audio in a {suffix} file does not play in every browser: {FIX_REENCODE}")
    if suffix in (".mp4", ".m4v") and not _index_first(path):
        result.warnings.append(
            "its index (moov) comes after the video data, so a phone downloads the whole file "
            "before it starts: `vtt media prepare` writes it first (faststart)"
        )


def _codec_name(codec: str | None) -> str:
    return {"mpeg4": "MPEG-4 Part 2", "hevc": "HEVC (H.265)", "mpeg2video": "MPEG-2"}.get(codec or "", codec or "?")


def _index_first(path: Path) -> bool:
    """Whether an MP4's ``moov`` box comes before its ``mdat`` (read from the top-level box headers)."""
    with path.open("rb") as handle:
        while header := handle.read(8):
            if len(header) < 8:
                return False
            size, kind = struct.unpack(">I4s", header)
            if kind == b"moov":
                return True
            if kind == b"mdat":
                return False
            if size == 1:
                size = struct.unpack(">Q", handle.read(8))[0] - 8
            elif size == 0:
                return False
            handle.seek(size - 8, os.SEEK_CUR)
    return False


def _decodes(container, video, ref: ClipRef, result: ClipVerdict) -> None:
    """The first frame decodes, and so does one near where the span (or the clip) ends."""
    import av

    try:
        first = next(container.decode(video), None)
        if first is None:
            result.problems.append("has no frame that decodes: " + FIX_REENCODE)
            return
        last = ref.end if ref.end is not None else result.duration
        if last and last > 1:
            target = max(0.0, min(last, result.duration or last) - 0.5)
            container.seek(int(target / video.time_base), stream=video, backward=True)
            if next(container.decode(video), None) is None:
                result.problems.append(f"no frame decodes near {target:.1f} s: " + FIX_REENCODE)
    except av.FFmpegError as failure:
        result.problems.append(f"does not decode ({_reason(failure)}): {FIX_REENCODE}")


def span_problem(start: float | None, end: float | None, duration: float, frame_seconds: float) -> str | None:
    """Why a clip of ``duration`` seconds cannot play the span, or None; the span may end a frame (or
    ``SPAN_SLACK_SECONDS``) after the last frame."""
    if start is not None and start >= duration:
        return f"the span starts at {start:g} s but the clip is only {duration:.2f} s long: check the span, or the file"
    if end is not None and end > duration + max(frame_seconds, SPAN_SLACK_SECONDS):
        return f"the span ends at {end:g} s but the clip is only {duration:.2f} s long: check the span, or the file"
    return None


def _reason(failure: Exception) -> str:
    return getattr(failure, "strerror", None) or str(failure)
