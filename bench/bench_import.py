"""Time reading and importing a large question bank (native CSV) into a fresh SQLite database.

python bench/bench_import.py [--questions 20000]
"""

from __future__ import annotations

import argparse
import csv
import random
import tempfile
import time
from pathlib import Path

from analysis.taxonomy import ELEMENTS, Module
from vtt.banks import import_bank, read_bank
from vtt.banks.fields import NATIVE_COLUMNS
from vtt.db import make_db_factory, make_engine, transaction, upgrade


def write_bank(path: Path, count: int, seed: int = 0, realistic: bool = False) -> None:
    """A native CSV bank of ``count`` tagged questions; ``realistic``: texts as long as a real bank's (uploads)."""
    rng = random.Random(seed)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=NATIVE_COLUMNS)
        writer.writeheader()
        for i in range(count):
            targets = rng.sample(ELEMENTS[Module.TARGET], rng.randint(1, 3))
            targets[0] += "*"
            mcq = i % 2 == 0
            if realistic:
                text = (
                    f"Question {i}: what does the person on the left do after the door opens, and why, in scene "
                    f"{i // 10}?"
                )
                choices, reference = (
                    "Leaves the room|Sits down|Calls someone|Laughs|Says nothing",
                    "She leaves the room because she is angry with him.",
                )
                video, category, round_ = (
                    f"clips/episode{i // 500:03d}/shot{i // 10:05d}.mp4",
                    "behaviour",
                    str(1 + i % 5),
                )
            else:
                text, choices, reference = (
                    f"Question {i} about the scene, with a comma?",
                    "a|b|c|d|e",
                    "a reference answer",
                )
                video, category, round_ = f"clips/{i // 10}.mp4", "", ""
            writer.writerow(
                {
                    "qid": f"b{i:06d}",
                    "question": text,
                    "type": "mcq" if mcq else "open",
                    "choices": choices if mcq else "",
                    "answer": str(i % 5) if mcq else reference,
                    "video": video,
                    "start": "1.5",
                    "end": "9",
                    "clip": rng.choice(["shot", "scene"]),
                    "targets": ";".join(targets),
                    "contents": ";".join(rng.sample(ELEMENTS[Module.CONTENT], rng.randint(1, 3))),
                    "thinking": rng.choice(ELEMENTS[Module.THINKING]),
                    "category": category,
                    "round": round_,
                }
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        bank_file, url = Path(folder) / "bank.csv", f"sqlite:///{folder}/bench.db"
        write_bank(bank_file, args.questions)
        upgrade(url)
        started = time.perf_counter()
        result = read_bank(bank_file)
        read_seconds = time.perf_counter() - started
        started = time.perf_counter()
        with transaction(make_db_factory(make_engine(url))) as db:
            import_bank(db, result, "bench")
        import_seconds = time.perf_counter() - started
    rate = args.questions / (read_seconds + import_seconds)
    print(
        f"{args.questions:,} tagged questions: read + validate {read_seconds:.2f} s, "
        f"insert into SQLite {import_seconds:.2f} s ({rate:,.0f} questions/s)"
    )


if __name__ == "__main__":
    main()
