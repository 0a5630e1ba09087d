"""Writes static/media/silence.m4a and silence.webm: a quarter of a second of silence, which a page plays (and pauses)
on its clip's <video> inside the person's tap, so that WebKit (Safari, iOS) lets that element start with sound later
(docs/design.md, "Media rules per engine").  AAC in MP4 for Safari and Chromium, Opus in WebM for an engine without
AAC.  The files are committed; run `python scripts/make_silence.py` again only to change them (the same bytes come
out every run).
"""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np

MEDIA = Path(__file__).resolve().parent.parent / "static" / "media"
SECONDS = 0.25
FORMATS = {  # file: (container, codec, sample rate, container options)
    "silence.m4a": ("mp4", "aac", 22_050, {"movflags": "+faststart", "fflags": "+bitexact"}),
    "silence.webm": ("webm", "libopus", 48_000, {"fflags": "+bitexact"}),
}

SAMPLE_TYPES = {"fltp": np.float32, "flt": np.float32, "s16": np.int16, "s16p": np.int16}  # what each encoder takes


def write(path: Path, container: str, codec: str, rate: int, options: dict) -> None:
    with av.open(str(path), "w", format=container, options=options) as out:
        stream = out.add_stream(codec, rate=rate, layout="mono")
        stream.codec_context.bit_rate = 16_000
        stream.codec_context.flags |= av.codec.context.Flags.bitexact
        size = stream.codec_context.frame_size or 960
        samples = round(SECONDS * rate)
        for start in range(0, samples, size):
            quiet = np.zeros((1, min(size, samples - start)), dtype=SAMPLE_TYPES[stream.format.name])
            frame = av.AudioFrame.from_ndarray(quiet, format=stream.format.name, layout="mono")
            frame.sample_rate, frame.pts = rate, start
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)


def main(folder: Path = MEDIA) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, (container, codec, rate, options) in FORMATS.items():
        write(folder / name, container, codec, rate, options)
        print(f"{folder / name}: {(folder / name).stat().st_size} bytes")


if __name__ == "__main__":
    main()
