"""Time `vtt questions check` on TVQA-format files with something to say on every row, and count its lines.

    python bench/bench_problems.py [--rows 100000]

Two files of ``--rows`` lines, written to a temporary folder, each as TVQA publishes them (JSONL,
integer qids, ``ts`` of ``NaN-NaN``): a test split (no ``answer_idx`` at all), and a file whose every
``answer_idx`` is out of range (a problem on every row).  Printed per file: the seconds the command
took (a new process, as a user runs it), the lines it printed, and the rows of ``--problems-out``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LINE = {
    "a0": "He laughs",
    "a1": "He leaves",
    "a2": "He cries",
    "a3": "He sings",
    "a4": "He sleeps",
    "vid_name": "s01e01_seg01_clip_00",
    "show_name": "The Big Bang Theory",
    "ts": "NaN-NaN",
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    args = parser.parse_args()
    for name, changes in (("a test split (no keys)", {}), ("every key out of range", {"answer_idx": 9})):
        check(args.rows, name, changes)


def check(count: int, name: str, changes: dict) -> None:
    vtt = Path(sys.executable).parent / "vtt"
    with tempfile.TemporaryDirectory(prefix="vtt-bench-problems-") as folder:
        split = Path(folder) / "tvqa.jsonl"
        with split.open("w", encoding="utf-8") as handle:
            for qid in range(count):
                handle.write(json.dumps({**LINE, "qid": qid, "q": f"What does Sheldon do ({qid})?", **changes}) + "\n")
        out = Path(folder) / "problems.csv"
        env = {**os.environ, "DATABASE_URL": f"sqlite:///{folder}/vtt.db", "VTT_INSTANCE_PATH": folder}
        started = time.perf_counter()
        done = subprocess.run(
            [str(vtt), "questions", "check", str(split), "--problems-out", str(out)],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
        seconds = time.perf_counter() - started
        printed = (done.stdout + done.stderr).strip().splitlines()
        with out.open(encoding="utf-8") as handle:
            rows = sum(1 for _ in handle) - 1
    print(
        f"{count:,} lines, {name}: `vtt questions check --problems-out` took {seconds:.2f} s, exit "
        f"{done.returncode}, printed {len(printed)} lines; problems.csv {rows:,} rows"
    )
    for line in printed:
        print(f"  | {line}")


if __name__ == "__main__":
    main()
