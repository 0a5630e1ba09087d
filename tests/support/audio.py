"""Speech and sound for the tests of spoken answers: a phrase said by Debian's espeak-ng (required when CI=true),
and audio encoded with PyAV as a browser's MediaRecorder writes it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import av
import numpy as np

from tests.support.machine import require_programs

PHRASE = "i like to play with my dog"  # of the phrases tried, the one pocketsphinx hears best from espeak-ng

# (container, codec, file name): what browsers record, and what else is accepted
FORMATS = {
    "webm": ("webm", "libopus", "answer.webm"),  # Chrome, Firefox: audio/webm;codecs=opus
    "mp4": ("mp4", "aac", "answer.mp4"),  # Safari: audio/mp4 (AAC)
    "ogg": ("ogg", "libopus", "answer.ogg"),
    "wav": ("wav", "pcm_s16le", "answer.wav"),
}


def encode(frames, path: Path, container: str, codec: str, rate: int = 48000) -> Path:
    """The audio frames encoded into a file, as MediaRecorder would write it (48 kHz mono)."""
    with av.open(str(path), "w", format=container) as out:
        stream = out.add_stream(codec, rate=rate)
        stream.layout = "mono"
        resampler = av.AudioResampler(format=stream.format.name, layout="mono", rate=rate)
        for frame in [*frames, None]:
            for resampled in resampler.resample(frame):
                for packet in stream.encode(resampled):
                    out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    return path


def decoded(path: Path):
    with av.open(str(path)) as source:
        yield from source.decode(audio=0)


def tone(seconds: float = 1.0, hz: float = 440.0, rate: int = 48000, amplitude: float = 0.5):
    samples = (amplitude * np.sin(2 * np.pi * hz * np.arange(int(seconds * rate)) / rate)).astype(np.float32)
    frames = []
    for start in range(0, len(samples), 960):
        frame = av.AudioFrame.from_ndarray(samples[None, start : start + 960], format="flt", layout="mono")
        frame.sample_rate = rate
        frames.append(frame)
    return frames


def webm(tmp_path: Path, seconds: float = 1.0) -> bytes:
    """A take of ``seconds`` of tone, Opus in WebM as Chrome records it."""
    return encode(tone(seconds), tmp_path / "take.webm", "webm", "libopus").read_bytes()


def said_wav(folder: Path, phrase: str | None = None) -> Path:
    """``phrase`` (default PHRASE) spoken by espeak-ng into ``folder/phrase.wav``."""
    require_programs("espeak-ng", install="no speech to transcribe: install espeak-ng (scripts/system-deps.sh)")
    wav = folder / "phrase.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "130", "-w", str(wav), phrase or PHRASE], check=True, timeout=60)
    return wav


def said_webm(folder: Path) -> Path:
    """PHRASE spoken by espeak-ng, as a browser would send it: Opus in WebM."""
    return encode(list(decoded(said_wav(folder))), folder / "answer.webm", "webm", "libopus")
