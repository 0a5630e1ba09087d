"""How well the shipped transcriber hears a spoken answer, and what the level its card shows means.

    python bench/bench_transcribe.py [--voices en-us,en-gb,en-us+f3,child] [--speeds 120,160,200] [--spec pocketsphinx]
        [--show] [--rows rows.json]

Each of SENTENCES (short answers a child might give about a clip) is said by espeak-ng in each voice at each speed
(words per minute), encoded as a browser's MediaRecorder sends it (Opus in WebM, 48 kHz mono), then transcribed by
``vtt.transcribe.transcribe`` with the backend ``--spec`` (the app's path: PyAV decodes and resamples to 16 kHz,
the backend recognises).  The WER of a cell is its word edits over its words said (vtt.transcribe.accuracy).

Then SOUNDS, recordings without speech (silence, tones of several frequencies, a buzz, a hum, white, pink and brown
noise, a Chromium-like fake microphone's beep, and the recording Chromium's fake microphone made,
tests/data/chromium_fake_microphone.webm), go the same way: each should be no transcript (level ``none``).  With
pocketsphinx, what it would have heard without the speech check is shown beside.

The calibration tables ask whether the confidence tells a host when to retype: by the backend's figure, how many of
the suggestions were right word for word and their word accuracy (1 - WER); and by the level the card shows
(vtt.transcribe.levels), how often a suggestion shown at that level was right (for a sound without speech, right
is "no speech heard").  The thresholds of vtt.transcribe.levels are read from the first of these tables.

espeak-ng is not a child: its voices are cleaner than a four-year-old in a classroom, so these figures are a best
case for the backend, not what a host will see.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.audio import SOUNDS, decoded, encode, frames_of
from tests.support.paths import DATA
from vtt.transcribe import LEVELS, transcribe
from vtt.transcribe.accuracy import edit_distance, words
from vtt.transcribe.audio import pcm16k

SENTENCES = (
    "the man opened the red door",
    "i like to play with my dog",
    "she was looking for her mother",
    "the boy ran away because he was scared",
    "they ate cake at the party",
    "the dog jumped into the water",
    "he gave the little girl a blue ball",
    "i think the cat is hiding under the bed",
    "it was raining and they went home",
    "the teacher is happy",
)

# name: espeak-ng arguments.  "child": the US voice pitched high (-p 80 of 0-99; 50 is the default)
VOICES = {
    "en-us": ["-v", "en-us"],
    "en-gb": ["-v", "en-gb"],
    "en-us+f3": ["-v", "en-us+f3"],
    "child": ["-v", "en-us+f3", "-p", "80"],
}
FIGURES = (0.0, 0.2, 0.4, 0.6, 0.8, 0.9)  # the confidence bins' lower ends
CHROMIUM = DATA / "chromium_fake_microphone.webm"  # what Chromium's fake microphone recorded (Debian's, 2026)


def said(folder: Path, sentence: str, voice: list[str], speed: int) -> Path:
    wav = folder / "said.wav"
    subprocess.run(["espeak-ng", *voice, "-s", str(speed), "-w", str(wav), sentence], check=True, timeout=60)
    return encode(list(decoded(wav)), folder / "answer.webm", "webm", "libopus")


def sound(folder: Path, name: str) -> Path:
    return encode(frames_of(SOUNDS[name]()), folder / "sound.webm", "webm", "libopus")


def unchecked(path: Path, spec: str) -> str:
    """What pocketsphinx hears in the recording without the speech check (for an http: spec, nothing is asked)."""
    if spec != "pocketsphinx":
        return ""
    from vtt.transcribe import sphinx

    text, confidence = sphinx.recognise(pcm16k(path), path.name)
    return f"{text!r} ({confidence:.2f})" if text else "''"


def right(row: dict) -> bool:
    """A suggestion is right when it is what was said, word for word; for a sound without speech, when it is none."""
    return words(row["said"]) == words(row["heard"]) if row["said"] else row["level"] == "none"


def accuracy(rows: list[dict]) -> str:
    spoken = [row for row in rows if row["said"]]
    return f"{max(0.0, 1 - wer(spoken)):.0%}" if spoken else "-"


def wer(rows: list[dict]) -> float:
    said_words = sum(len(words(row["said"])) for row in rows)
    return sum(edit_distance(words(row["said"]), words(row["heard"])) for row in rows) / said_words


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--voices", default=",".join(VOICES))
    parser.add_argument("--speeds", default="120,160,200")
    parser.add_argument("--spec", default="pocketsphinx")
    parser.add_argument("--show", action="store_true", help="print every sentence heard")
    parser.add_argument("--rows", help="write every row (said, heard, confidence, level, ...) to this JSON file")
    args = parser.parse_args()
    if not shutil.which("espeak-ng"):
        sys.exit("espeak-ng is not installed (apt-get install espeak-ng)")
    voices, speeds = args.voices.split(","), [int(s) for s in args.speeds.split(",")]
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as folder:
        for voice in voices:
            for speed in speeds:
                for sentence in SENTENCES:
                    heard = transcribe(said(Path(folder), sentence, VOICES[voice], speed), args.spec)
                    rows.append(row_of(heard, sentence, voice=voice, speed=speed))
                    if args.show:
                        sure = "-" if heard.confidence is None else f"{heard.confidence:.2f}"
                        print(
                            f"{voice:9} {speed:3} {sure:>5} {heard.level:7} {sentence!r} -> {heard.text!r}", flush=True
                        )
        sounds = [(name, lambda name=name: sound(Path(folder), name)) for name in SOUNDS]
        if CHROMIUM.is_file():
            sounds.append(("Chromium's fake microphone (recorded)", lambda: CHROMIUM))
        for name, recorded in sounds:
            path = recorded()
            heard = transcribe(path, args.spec)
            rows.append(row_of(heard, "", sound=name, unchecked=unchecked(path, args.spec)))
            if args.show:
                print(f"{name:38} {heard.level:7} {heard.text!r} {heard.hearing}", flush=True)
    if args.rows:
        Path(args.rows).write_text(json.dumps(rows, indent=1))
    report(rows, voices, speeds)


def row_of(heard, said_text: str, **about) -> dict:
    hearing = heard.hearing
    return {
        **about,
        "said": said_text,
        "heard": heard.text,
        "confidence": heard.confidence,
        "level": heard.level,
        "voiced_seconds": hearing.voiced_seconds if hearing else None,
        "no_speech": hearing.reason if hearing else None,
        "seconds": heard.seconds,
        "backend": heard.backend,
    }


def report(rows: list[dict], voices: list[str], speeds: list[int]) -> None:
    spoken = [r for r in rows if r["said"]]
    sounds = [r for r in rows if not r["said"]]

    espeak = subprocess.run(["espeak-ng", "--version"], capture_output=True, text=True).stdout.split("Data")[0]
    machine = f"{platform.machine()}, Python {platform.python_version()}"
    print(f"{date.today()}, {machine}, {espeak.strip()}, {rows[0]['backend']}")
    print(f"\n| voice | {' | '.join(f'-s {s}' for s in speeds)} | all speeds |")
    print(f"|---|{'---:|' * (len(speeds) + 1)}")
    for voice in voices:
        cells = [wer([r for r in spoken if r["voice"] == voice and r["speed"] == s]) for s in speeds]
        mine = [r for r in spoken if r["voice"] == voice]
        print(f"| {voice} | {' | '.join(f'{c:.0%}' for c in cells)} | {wer(mine):.0%} |")
    by_speed = [wer([r for r in spoken if r["speed"] == s]) for s in speeds]
    print(f"| all voices | {' | '.join(f'{c:.0%}' for c in by_speed)} | **{wer(spoken):.0%}** |")
    exact = sum(words(r["said"]) == words(r["heard"]) for r in spoken)
    seconds = sorted(r["seconds"] for r in spoken)
    missed = [r for r in spoken if r["level"] == "none"]
    print(
        f"\n{len(spoken)} sentences, {exact} heard word for word, {len(missed)} taken for no speech; "
        f"median {seconds[len(seconds) // 2]:.2f} s each"
    )

    print("\n| sound without speech | level shown | heard | without the speech check |")
    print("|---|---|---|---|")
    for r in sounds:
        print(
            f"| {r['sound']} | {r['level']} | {r['heard']!r} ({r['no_speech'] or 'speech'}) | {r['unchecked'] or '-'} |"
        )

    print("\n| backend's confidence | suggestions | right word for word | word accuracy |")
    print("|---|---:|---:|---:|")
    known = [r for r in spoken if r["confidence"] is not None]
    for low, high in zip(FIGURES, (*FIGURES[1:], 1.01), strict=True):
        part = [r for r in known if low <= r["confidence"] < high]
        label = f"{low:.1f} to {min(high, 1):.1f}" + (" (1.0 included)" if high > 1 else "")
        print(f"| {label} | {len(part)} | {_share(part)} | {accuracy(part)} |")
    for threshold in FIGURES[1:]:
        part = [r for r in known if r["confidence"] >= threshold]
        print(f"| >= {threshold:.1f} | {len(part)} | {_share(part)} | {accuracy(part)} |")

    print("\n| level shown | speech | right word for word | word accuracy | no speech | right (none) |")
    print("|---|---:|---:|---:|---:|---:|")
    for level in LEVELS:
        said_here = [r for r in spoken if r["level"] == level]
        quiet_here = [r for r in sounds if r["level"] == level]
        if said_here or quiet_here:
            print(
                f"| {level} | {len(said_here)} | {_share(said_here)} | {accuracy(said_here)} "
                f"| {len(quiet_here)} | {_share(quiet_here)} |"
            )


def _share(rows: list[dict]) -> str:
    return f"{sum(map(right, rows))} ({sum(map(right, rows)) / len(rows):.0%})" if rows else "-"


if __name__ == "__main__":
    main()
