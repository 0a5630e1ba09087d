"""A question's clip for a video-language model: where it is, fetched once, and N frames of its span.

A clip's ``src`` is resolved as the player page resolves it: an ``http(s)://`` URL as given, a
path starting with ``/`` on the server, anything else under the server's ``/media/``.  The file is
downloaded once per run (clips are shared by questions); :func:`sample_frames` decodes it with PyAV
(which bundles FFmpeg) and returns ``count`` frames evenly spread over the start-end span: the
middle of each of ``count`` equal parts, so 3 frames of 0-3 s are those at 0.5, 1.5 and 2.5 s.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import quote, urljoin

FRAME_FORMATS = {"jpeg": "image/jpeg", "png": "image/png"}


class ClipError(RuntimeError):
    """A clip that could not be fetched or decoded; the message says which and why."""


def clip_url(server: str, clip: dict[str, Any] | None) -> str | None:
    """Where the clip of a question is, as an absolute URL (None without a clip)."""
    src = (clip or {}).get("src")
    if not src:
        return None
    if src.startswith(("http://", "https://")):
        return src
    if src.startswith("//"):
        return f"{server.split('//', 1)[0]}{src}"
    if src.startswith("/"):
        return urljoin(server.rstrip("/") + "/", src)
    return f"{server.rstrip('/')}/media/{quote(src)}"


class Clips:
    """Downloads clips on first use into a folder of this run (removed by :meth:`close`)."""

    def __init__(self, http) -> None:  # http: an aiohttp.ClientSession
        self.http = http
        self._folder = tempfile.TemporaryDirectory(prefix="vtt-agent-clips-")
        self._files: dict[str, Path] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def local(self, url: str, timeout: float) -> Path:
        async with self._locks.setdefault(url, asyncio.Lock()):
            if url not in self._files:
                self._files[url] = await self._download(url, timeout)
            return self._files[url]

    async def _download(self, url: str, timeout: float) -> Path:
        import aiohttp

        name = hashlib.sha256(url.encode()).hexdigest()[:16] + Path(url.split("?")[0]).suffix[:8]
        path = Path(self._folder.name) / name
        try:
            async with self.http.get(url, timeout=aiohttp.ClientTimeout(total=timeout)) as response:
                if response.status != 200:
                    raise ClipError(f"cannot fetch the clip {url}: HTTP {response.status}")
                with path.open("wb") as handle:
                    async for chunk in response.content.iter_chunked(1 << 16):
                        handle.write(chunk)
        except (aiohttp.ClientError, TimeoutError) as failure:
            raise ClipError(f"cannot fetch the clip {url}: {type(failure).__name__} {failure}".strip()) from None
        return path

    def close(self) -> None:
        self._folder.cleanup()


def sample_frames(
    path: Path, count: int, start: float | None, end: float | None, *, size: int = 768, fmt: str = "jpeg"
) -> list[tuple[str, bytes]]:
    """``count`` frames evenly spread over ``start``-``end`` seconds of the video at ``path``, each scaled to
    fit ``size`` x ``size`` and encoded (``jpeg`` or ``png``): a list of (MIME type, bytes)."""
    import av

    try:
        container = av.open(str(path))
    except (av.error.FFmpegError, OSError) as failure:
        raise ClipError(f"cannot open the clip {path.name} as a video: {failure}") from None
    with container:
        if not container.streams.video:
            raise ClipError(f"the clip {path.name} has no video stream")
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        length = _duration(container, stream)
        first = max(float(start or 0.0), 0.0)
        last = float(end) if end is not None else length
        if length is not None and last is not None:
            last = min(last, length)
        if last is None or last <= first:  # no usable span: the frames around the start
            last = first + 1.0
        step = (last - first) / count
        targets = [first + (index + 0.5) * step for index in range(count)]
        frames: list[tuple[str, bytes]] = []
        latest = None
        try:
            container.seek(int(first * av.time_base), backward=True, any_frame=False)
            for frame in container.decode(stream):
                if frame.time is None:
                    continue
                latest = frame
                while targets and frame.time + 1e-6 >= targets[0]:
                    targets.pop(0)
                    frames.append(_encode(frame, size, fmt))
                if not targets:
                    break
        except av.error.FFmpegError as failure:
            raise ClipError(f"cannot decode the clip {path.name}: {failure}") from None
        if latest is None:
            raise ClipError(f"the clip {path.name} has no frames from {first:g} s on")
        while len(frames) < count:  # the span runs past the video's end: its last frame stands in
            frames.append(_encode(latest, size, fmt))
    return frames


def _duration(container, stream) -> float | None:
    if stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    if container.duration is not None:
        import av

        return container.duration / av.time_base
    return None


def _encode(frame, size: int, fmt: str) -> tuple[str, bytes]:
    image = frame.to_image()
    image.thumbnail((size, size))
    buffer = io.BytesIO()
    if fmt == "png":
        image.save(buffer, format="PNG")
    else:
        image.convert("RGB").save(buffer, format="JPEG", quality=85)
    return FRAME_FORMATS[fmt], buffer.getvalue()


def data_url(mime: str, data: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
