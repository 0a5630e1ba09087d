"""Is there a voice in the recording at all?  Checked before any recogniser runs, so that silence, a tone or noise
is no transcript.

A recogniser always finds words: pocketsphinx heard "it" (posterior 1.0) in three seconds of silence and "gervais"
(1.0) in Chromium's fake microphone, a 400 Hz beep twice a second; Whisper-class models are known to answer silence
with a sentence.  Their own figures cannot tell, so the sound is looked at first, with plain signal measures on the
16 kHz PCM, 32 ms frames every 10 ms:

- loud enough: the frame's level is above ``QUIET_DBFS`` (a voice near a tablet's microphone is -40 to -10 dBFS);
- periodic: its autocorrelation peaks at a lag of a voice's pitch (70 to 500 Hz, a man's to a small child's) at
  ``PERIODIC`` or more, which noise (white, pink, brown, hiss) does not reach;
- not a single tone: the strongest spectral peak holds less than ``TONAL`` of the frame's power (a sine holds 0.97,
  a mains hum 0.8; a voice spreads over its harmonics and formants: 0.25 to 0.6);
- not noise-like: the spectral flatness over 100-4000 Hz is under ``FLAT`` (white noise 0.57, voiced speech 0.01-0.13).

Such frames count only in runs of ``MIN_RUN_FRAMES`` or more (a syllable's vowel lasts 80 ms and more; a beep or a
click lasts less), and a voice must hold ``MIN_VOICED_SECONDS`` of them.  Last, a voice's pitch moves: the spread of
the pitch over those frames must reach ``PITCH_SPREAD`` (a steady buzz or a sawtooth stays within 0.5 %; espeak-ng's
flattest sentence moved by 9 %).  The thresholds were set on the cases of bench/bench_transcribe.py and
tests/test_transcribe.py, with margin on both sides (docs/benchmarks.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .audio import RATE

FRAME = 512  # 32 ms
HOP = 160  # 10 ms
QUIET_DBFS = -50.0
PERIODIC = 0.5
TONAL = 0.75
FLAT = 0.3
MIN_RUN_FRAMES = 6  # 60 ms: longer than a beep or a click, shorter than a vowel
MIN_VOICED_SECONDS = 0.15  # "two" said by a high child-like voice holds 0.24 s
PITCH_SPREAD = 0.03  # standard deviation of the natural log of the pitch: about 3 %
LOWEST_PITCH, HIGHEST_PITCH = 70, 500  # Hz
BLOCK = 2000  # frames analysed at once: ten minutes of sound would take half a gigabyte in one go

_WINDOW = np.hanning(FRAME)
_SIZE = 2 * FRAME  # zero-padded: the autocorrelation is not circular
_FREQUENCIES = np.fft.rfftfreq(_SIZE, 1 / RATE)
_PEAKS_BAND = (_FREQUENCIES >= 60) & (_FREQUENCIES <= 5000)
_FLATNESS_BAND = (_FREQUENCIES >= 100) & (_FREQUENCIES <= 4000)
_SHORTEST_LAG, _LONGEST_LAG = RATE // HIGHEST_PITCH, RATE // LOWEST_PITCH
# the window's own autocorrelation: dividing by it makes a periodic frame's peak near 1 at any lag (Boersma, 1993)
_WINDOW_LAGS = np.fft.irfft(np.abs(np.fft.rfft(_WINDOW, _SIZE)) ** 2)[:FRAME]
_WINDOW_LAGS = np.maximum(_WINDOW_LAGS / _WINDOW_LAGS[0], 1e-3)


@dataclass(frozen=True)
class Hearing:
    """What the recording holds, before any recogniser: its length, its loudest frame and its voice."""

    seconds: float
    loudest_dbfs: float
    voiced_seconds: float  # in runs of MIN_RUN_FRAMES or more
    pitch_spread: float  # standard deviation of log pitch over those frames (0 when there are none)

    @property
    def speech(self) -> bool:
        return self.voiced_seconds >= MIN_VOICED_SECONDS and self.pitch_spread >= PITCH_SPREAD

    @property
    def reason(self) -> str:
        """Why the recording holds no speech (empty when it does): for the bench and the logs."""
        if self.loudest_dbfs < QUIET_DBFS:
            return "silent"
        if self.voiced_seconds < MIN_VOICED_SECONDS:
            return "no voice"
        if self.pitch_spread < PITCH_SPREAD:
            return "a steady pitch"
        return ""


def hear(pcm: bytes) -> Hearing:
    """The voice in 16 kHz mono signed 16-bit PCM (as :func:`vtt.transcribe.audio.pcm16k` gives it)."""
    samples = np.frombuffer(pcm[: len(pcm) // 2 * 2], dtype="<i2").astype(np.float32) / 32768.0
    seconds = len(samples) / RATE
    if len(samples) < FRAME:  # shorter than a frame (32 ms): no voice in it
        loudest = float(_dbfs(np.mean(samples.astype(np.float64) ** 2))) if len(samples) else -120.0
        return Hearing(seconds, loudest, 0.0, 0.0)
    count = 1 + (len(samples) - FRAME) // HOP
    levels, voiced, lags = [], [], []
    for start in range(0, count, BLOCK):
        level, is_voiced, lag = _frames(samples, start, min(count, start + BLOCK))
        levels.append(level)
        voiced.append(is_voiced)
        lags.append(lag)
    level, is_voiced, lag = np.concatenate(levels), np.concatenate(voiced), np.concatenate(lags)
    kept = _in_runs(is_voiced, MIN_RUN_FRAMES)
    spread = float(np.std(np.log(RATE / lag[kept]))) if kept.sum() > 1 else 0.0
    return Hearing(seconds, float(level.max()), float(kept.sum() * HOP / RATE), spread)


def _frames(samples: np.ndarray, first: int, last: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Frames ``first`` to ``last``: each one's level (dBFS), whether it sounds voiced, and its pitch's lag."""
    index = np.arange(FRAME)[None, :] + HOP * np.arange(first, last)[:, None]
    frames = samples[index].astype(np.float64)
    level = _dbfs(np.mean(frames**2, axis=1))
    windowed = (frames - frames.mean(axis=1, keepdims=True)) * _WINDOW
    power = np.abs(np.fft.rfft(windowed, _SIZE)) ** 2
    lags = np.fft.irfft(power, _SIZE)[:, :FRAME]
    lags = lags / np.maximum(lags[:, :1], 1e-12) / _WINDOW_LAGS
    pitch_lags = lags[:, _SHORTEST_LAG:_LONGEST_LAG]
    peak = pitch_lags.argmax(axis=1)
    # a peak at either end of the range is no pitch: the slow decay of low-pass noise (a rumble, brown noise)
    inside = (peak > 0) & (peak < pitch_lags.shape[1] - 1)
    periodicity = np.where(inside, pitch_lags.max(axis=1), 0.0)
    lag = _SHORTEST_LAG + peak
    band = power[:, _PEAKS_BAND]
    summed = np.cumsum(np.pad(band, ((0, 0), (5, 0))), axis=1)
    strongest = (summed[:, 5:] - summed[:, :-5]).max(axis=1)  # five bins: a windowed sine's main lobe
    tonal = strongest / np.maximum(band.sum(axis=1), 1e-12)
    flat_band = power[:, _FLATNESS_BAND] + 1e-12
    flatness = np.exp(np.log(flat_band).mean(axis=1)) / flat_band.mean(axis=1)
    voiced = (level > QUIET_DBFS) & (periodicity >= PERIODIC) & (tonal < TONAL) & (flatness < FLAT)
    return level, voiced, lag


def _in_runs(mask: np.ndarray, shortest: int) -> np.ndarray:
    """``mask`` with its runs of True shorter than ``shortest`` set to False."""
    edges = np.diff(np.concatenate(([0], mask.astype(np.int8), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    kept = np.zeros(len(mask), dtype=bool)
    for start, end in zip(starts, ends, strict=True):
        if end - start >= shortest:
            kept[start:end] = True
    return kept


def _dbfs(mean_square) -> np.ndarray | float:
    return 10 * np.log10(np.maximum(mean_square, 1e-12))
