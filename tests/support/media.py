"""Clips made by the tests with PyAV: small, in the codecs and containers a venue meets (no downloads)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

# suffix and container format -> (video encoder, audio encoder or None)
KINDS = {
    "h264": ("mp4", "libx264", "aac"),
    "vp9": ("webm", "libvpx-vp9", "libopus"),
    "mpeg4_avi": ("avi", "mpeg4", None),
}


def make_clip(
    path: Path, kind: str = "h264", seconds: float = 3.0, fps: int = 10, size=(64, 36), faststart: bool = True
) -> Path:
    """``seconds`` of frames that change colour every second (and a quiet tone, when the kind has audio)."""
    import av

    container, video_codec, audio_codec = KINDS[kind]
    path.parent.mkdir(parents=True, exist_ok=True)
    options = {"movflags": "+faststart"} if container == "mp4" and faststart else {}
    width, height = size
    with av.open(str(path), "w", format=container, options=options) as out:
        video = out.add_stream(video_codec, rate=fps)
        video.width, video.height, video.pix_fmt = width, height, "yuv420p"
        audio = out.add_stream(audio_codec, rate=48_000, layout="mono") if audio_codec else None
        for index in range(round(seconds * fps)):
            image = np.full((height, width, 3), (index // fps * 60) % 256, np.uint8)
            frame = av.VideoFrame.from_ndarray(image, format="rgb24")
            frame.pts = index
            for packet in video.encode(frame):
                out.mux(packet)
        for packet in video.encode():
            out.mux(packet)
        if audio is not None:
            size_ = audio.codec_context.frame_size or 960
            for start in range(0, round(seconds * 48_000), size_):
                frame = av.AudioFrame.from_ndarray(np.zeros((1, size_), np.float32), format="fltp", layout="mono")
                frame.sample_rate, frame.pts = 48_000, start
                for packet in audio.encode(frame):
                    out.mux(packet)
            for packet in audio.encode():
                out.mux(packet)
    return path
