"""The device check's test clip: a few seconds of coloured cards and a clear tone, in both renditions.

Committed under ``static/media/`` (a few kilobytes each, so no page and no server needs PyAV to offer the check);
``python -m vtt.media.test_clip`` makes them again, with the same bytes for the same PyAV.  The phone rendition
sits beside the main one as a clip's does (:func:`vtt.media.phone_rendition`), and the pages pick it as they pick
a clip's.
"""

from __future__ import annotations

import math
from pathlib import Path

from . import phone_rendition
from .tone import mux_tone

STATIC = Path(__file__).resolve().parents[2] / "static"
MAIN = "media/check-tone.mp4"  # under static/
TEST_CLIPS = {"main": STATIC / MAIN, "phone": STATIC / phone_rendition(MAIN)}
SIZES = {"main": (640, 360), "phone": (320, 180)}
SECONDS = 2.5
FPS = 10
SAMPLE_RATE = 16_000
PITCH = 440.0  # A4: heard on every phone speaker (a lower tone vanishes in a small one)
LOUDNESS = 0.35  # about -9 dBFS: clear in a hall, well below clipping
FADE_SECONDS = 0.03  # no click at either end
# One colour per half second, so a muted or frozen video is seen at once.
COLOURS = ((200, 60, 60), (230, 160, 30), (60, 160, 80), (40, 110, 200), (140, 70, 180))


def make_test_clips() -> list[Path]:
    """Write both renditions into ``static/media/``; their paths."""
    for rendition, path in TEST_CLIPS.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        _encode(path, *SIZES[rendition])
    return list(TEST_CLIPS.values())


def _encode(path: Path, width: int, height: int) -> None:
    import av
    import numpy as np

    with av.open(str(path), "w", format="mp4", options={"movflags": "+faststart", "fflags": "+bitexact"}) as out:
        video = out.add_stream("libx264", rate=FPS, options={"crf": "30", "preset": "veryfast", "tune": "stillimage"})
        video.width, video.height, video.pix_fmt = width, height, "yuv420p"
        video.codec_context.thread_count = 1  # the same bytes every run
        video.codec_context.flags |= av.codec.context.Flags.bitexact
        audio = out.add_stream("aac", rate=SAMPLE_RATE, layout="mono")
        audio.codec_context.bit_rate = 24_000
        audio.codec_context.flags |= av.codec.context.Flags.bitexact
        frames = round(SECONDS * FPS)
        for index in range(frames):
            card = np.empty((height, width, 3), dtype=np.uint8)
            card[:] = COLOURS[int(index / FPS * 2) % len(COLOURS)]
            done = round(width * (index + 1) / frames)
            card[height - height // 10 :, :done] = 255  # a bar fills as the clip plays
            frame = av.VideoFrame.from_ndarray(card, format="rgb24")
            frame.pts = index
            for packet in video.encode(frame):
                out.mux(packet)
        for packet in video.encode():
            out.mux(packet)
        times = np.arange(round(SECONDS * SAMPLE_RATE)) / SAMPLE_RATE
        envelope = np.clip(np.minimum(times, SECONDS - times) / FADE_SECONDS, 0, 1)
        tone = (LOUDNESS * envelope * np.sin(2 * math.pi * PITCH * times)).astype(np.float32)
        mux_tone(out, audio, tone, SAMPLE_RATE)


if __name__ == "__main__":  # python -m vtt.media.test_clip
    for made in make_test_clips():
        print(f"{made} ({made.stat().st_size} bytes)")
