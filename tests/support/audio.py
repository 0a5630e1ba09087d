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


def frames_of(samples: np.ndarray, rate: int = 48000):
    """Samples (-1..1) as PyAV frames of 20 ms, as MediaRecorder hands them to its encoder."""
    samples = samples.astype(np.float32)
    frames = []
    for start in range(0, len(samples), rate // 50):
        frame = av.AudioFrame.from_ndarray(samples[None, start : start + rate // 50], format="flt", layout="mono")
        frame.sample_rate = rate
        frames.append(frame)
    return frames


# Sounds without speech, 3 s at MediaRecorder's 48 kHz: each must be no transcript (tests/test_transcribe.py,
# bench/bench_transcribe.py).
RATE = 48000
SECONDS = 3.0


def _time(seconds: float = SECONDS) -> np.ndarray:
    return np.arange(int(seconds * RATE)) / RATE


def _sine(hz: float, amplitude: float = 0.5) -> np.ndarray:
    return amplitude * np.sin(2 * np.pi * hz * _time())


def _noise(colour: float, amplitude: float, seed: int) -> np.ndarray:
    """Noise whose power falls as 1/f**colour (0 white, 1 pink, 2 brown), its peak at ``amplitude``."""
    spectrum = np.fft.rfft(np.random.default_rng(seed).standard_normal(int(SECONDS * RATE)))
    frequency = np.maximum(np.arange(len(spectrum)), 1)
    shaped = np.fft.irfft(spectrum / frequency ** (colour / 2), int(SECONDS * RATE))
    return amplitude * shaped / np.abs(shaped).max()


def _chromium_like() -> np.ndarray:
    """Chromium's fake microphone as recorded: a 400 Hz beep of about 30 ms twice a second, fading out after."""
    signal = np.zeros(int(SECONDS * RATE))
    for start in range(int(0.5 * RATE), len(signal), RATE // 2):
        part = _time(0.4)[: len(signal) - start]
        fade = np.where(part < 0.03, 1.0, np.exp(-(part - 0.03) / 0.04))
        signal[start : start + len(part)] = 0.6 * np.sin(2 * np.pi * 400 * part) * fade
    return signal


def _sawtooth(hz: float, amplitude: float = 0.4) -> np.ndarray:
    return amplitude * (2 * ((_time() * hz) % 1) - 1)


# name: the sound, as MediaRecorder's 48 kHz samples (-1..1)
SOUNDS = {
    "silence": lambda: np.zeros(int(SECONDS * RATE)),
    "room hiss (-60 dBFS)": lambda: _noise(0, 0.003, 1),
    **{f"tone {hz} Hz": (lambda hz=hz: _sine(hz)) for hz in (100, 200, 440, 1000, 3000)},
    "quiet tone 440 Hz": lambda: _sine(440, 0.02),
    "square wave 400 Hz": lambda: 0.4 * np.sign(_sine(400)),
    "buzz (sawtooth 120 Hz)": lambda: _sawtooth(120),
    "mains hum 50 Hz": lambda: _sine(50, 0.3) + _sine(150, 0.1),
    **{f"white noise #{seed}": (lambda seed=seed: _noise(0, 0.5, seed)) for seed in (1, 2)},
    **{f"pink noise #{seed}": (lambda seed=seed: _noise(1, 0.5, seed)) for seed in (1, 2)},
    **{f"brown noise #{seed}": (lambda seed=seed: _noise(2, 0.5, seed)) for seed in (1, 2)},
    "Chromium-like fake microphone": _chromium_like,
}


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
