"""How well the shipped transcriber hears a spoken answer: word error rate (WER) by voice and speed.

    python bench/bench_transcribe.py [--voices en-us,en-gb,en-us+f3,child] [--speeds 120,160,200] [--spec pocketsphinx]

Each of SENTENCES (short answers a child might give about a clip) is said by espeak-ng in each voice at each speed
(words per minute), encoded as a browser's MediaRecorder sends it (Opus in WebM, 48 kHz mono), then transcribed by
``vtt.transcribe.transcribe`` with the backend ``--spec`` (the app's path: PyAV decodes and resamples to 16 kHz,
the backend recognises).  The WER of a cell is its word edits over its words said (vtt.transcribe.accuracy).  The
last table asks whether the backend's confidence tells a host when to retype: the WER of the suggestions at or
above a confidence, and of those below.

espeak-ng is not a child: its voices are cleaner than a four-year-old in a classroom, so these figures are a best
case for the backend, not what a host will see.
"""

from __future__ import annotations

import argparse
import platform
import shutil
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.audio import decoded, encode
from vtt.transcribe import transcribe
from vtt.transcribe.accuracy import edit_distance, words

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
THRESHOLDS = (0.3, 0.5, 0.7)


def said(folder: Path, sentence: str, voice: list[str], speed: int) -> Path:
    wav = folder / "said.wav"
    subprocess.run(["espeak-ng", *voice, "-s", str(speed), "-w", str(wav), sentence], check=True, timeout=60)
    return encode(list(decoded(wav)), folder / "answer.webm", "webm", "libopus")


def wer(rows: list[dict]) -> float:
    said_words = sum(len(words(row["said"])) for row in rows)
    return sum(edit_distance(words(row["said"]), words(row["heard"])) for row in rows) / said_words


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--voices", default=",".join(VOICES))
    parser.add_argument("--speeds", default="120,160,200")
    parser.add_argument("--spec", default="pocketsphinx")
    parser.add_argument("--show", action="store_true", help="print every sentence heard")
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
                    rows.append(
                        {
                            "voice": voice,
                            "speed": speed,
                            "said": sentence,
                            "heard": heard.text,
                            "confidence": heard.confidence,
                            "seconds": heard.seconds,
                            "backend": heard.backend,
                        }
                    )
                    if args.show:
                        sure = "-" if heard.confidence is None else f"{heard.confidence:.2f}"
                        print(f"{voice:9} {speed:3} {sure:>5} {sentence!r} -> {heard.text!r}", flush=True)

    espeak = subprocess.run(["espeak-ng", "--version"], capture_output=True, text=True).stdout.split("Data")[0]
    machine = f"{platform.machine()}, Python {platform.python_version()}"
    print(f"{date.today()}, {machine}, {espeak.strip()}, {rows[0]['backend']}")
    print(f"\n| voice | {' | '.join(f'-s {s}' for s in speeds)} | all speeds |")
    print(f"|---|{'---:|' * (len(speeds) + 1)}")
    for voice in voices:
        cells = [wer([r for r in rows if r["voice"] == voice and r["speed"] == s]) for s in speeds]
        mine = [r for r in rows if r["voice"] == voice]
        print(f"| {voice} | {' | '.join(f'{c:.0%}' for c in cells)} | {wer(mine):.0%} |")
    by_speed = [wer([r for r in rows if r["speed"] == s]) for s in speeds]
    print(f"| all voices | {' | '.join(f'{c:.0%}' for c in by_speed)} | **{wer(rows):.0%}** |")

    exact = sum(words(r["said"]) == words(r["heard"]) for r in rows)
    known = [r for r in rows if r["confidence"] is not None]
    seconds = sorted(r["seconds"] for r in rows)
    print(f"\n{len(rows)} sentences, {exact} heard word for word; median {seconds[len(seconds) // 2]:.2f} s each")
    print("\n| confidence | suggestions | their WER |")
    print("|---|---:|---:|")
    for threshold in THRESHOLDS:
        for label, part in (
            (f">= {threshold:.1f}", [r for r in known if r["confidence"] >= threshold]),
            (f"< {threshold:.1f}", [r for r in known if r["confidence"] < threshold]),
        ):
            print(f"| {label} | {len(part)} | {wer(part):.0%} |" if part else f"| {label} | 0 | - |")
    unknown = [r for r in rows if r["confidence"] is None]
    print(f"| none given | {len(unknown)} | {wer(unknown):.0%} |" if unknown else "| none given | 0 | - |")


if __name__ == "__main__":
    main()
