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
from vtt.banks.readers import NATIVE_COLUMNS
from vtt.db import make_engine, make_db_factory, transaction, upgrade


def write_bank(path: Path, count: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=NATIVE_COLUMNS)
        writer.writeheader()
        for i in range(count):
            targets = rng.sample(ELEMENTS[Module.TARGET], rng.randint(1, 3))
            targets[0] += "*"
            mcq = i % 2 == 0
            writer.writerow({
                "qid": f"b{i:06d}", "question": f"Question {i} about the scene, with a comma?",
                "type": "mcq" if mcq else "open", "choices": "a|b|c|d|e" if mcq else "",
                "answer": str(i % 5) if mcq else "a reference answer", "video": f"clips/{i // 10}.mp4",
                "start": "1.5", "end": "9", "clip": rng.choice(["shot", "scene"]), "targets": ";".join(targets),
                "contents": ";".join(rng.sample(ELEMENTS[Module.CONTENT], rng.randint(1, 3))),
                "thinking": rng.choice(ELEMENTS[Module.THINKING]), "category": "", "round": "",
            })


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
    print(f"{args.questions:,} tagged questions: read + validate {read_seconds:.2f} s, "
          f"insert into SQLite {import_seconds:.2f} s ({rate:,.0f} questions/s)")


if __name__ == "__main__":
    main()
