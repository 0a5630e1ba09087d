"""A mono tone written into a clip's audio stream: what the demo's clips and the device check's test clip sound like."""

from __future__ import annotations


def mux_tone(out, audio, tone, sample_rate: int) -> None:
    """Encode ``tone`` (float32 samples, mono) into ``audio``, a stream of the open container ``out``, and flush it."""
    import av

    size = audio.codec_context.frame_size or 1024
    for start in range(0, len(tone), size):
        frame = av.AudioFrame.from_ndarray(tone[start : start + size].reshape(1, -1), format="fltp", layout="mono")
        frame.sample_rate, frame.pts = sample_rate, start
        for packet in audio.encode(frame):
            out.mux(packet)
    for packet in audio.encode():
        out.mux(packet)
