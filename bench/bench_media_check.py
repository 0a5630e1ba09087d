"""Time `vtt media check` on many clips: 1,000 small H.264/AAC MP4 clips (5 s, 320x180), each a file of its own.

    python bench/bench_media_check.py [--clips 1000] [--runs 3]

Prints the median wall time of `check_clips` (the library the command, the setup page and the host console call)
for 1 thread, the default threads and the whole command line.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.media_helpers import make_clip  # noqa: E402
from vtt.media.check import ClipRef, check_clips  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clips", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        media = Path(folder)
        first = make_clip(media / "clips" / "c00000.mp4", "h264", seconds=5, fps=25, size=(320, 180))
        for index in range(1, args.clips):
            shutil.copyfile(first, media / "clips" / f"c{index:05d}.mp4")
        refs = [ClipRef(f"q{index}", f"clips/c{index:05d}.mp4", 1.0, 4.5) for index in range(args.clips)]
        bank = media / "bank.csv"
        bank.write_text("qid,question,answer,video,start,end\n" + "".join(
            f"{r.qid},Q?,a,{r.source},{r.start},{r.end}\n" for r in refs), encoding="utf-8")
        for label, workers in (("1 thread", 1), ("default threads", None)):
            times = []
            for _ in range(args.runs):
                began = time.perf_counter()
                verdicts = check_clips(media, refs, workers=workers)
                times.append(time.perf_counter() - began)
            assert all(v.verdict == "ok" for v in verdicts), {v.verdict for v in verdicts}
            median = statistics.median(times)
            print(f"check_clips, {label}: {args.clips} clips in {median:.2f} s ({1000 * median / args.clips:.2f} ms "
                  f"a clip; runs {', '.join(f'{t:.2f}' for t in times)})")
        times = []
        for _ in range(args.runs):
            began = time.perf_counter()
            subprocess.run([sys.executable, "-m", "vtt.cli", "media", "check", str(bank)], check=True,
                           stdout=subprocess.DEVNULL, env={**os.environ, "VTT_MEDIA_DIR": str(media)})
            times.append(time.perf_counter() - began)
        print(f"vtt media check FILE (whole command): {statistics.median(times):.2f} s")


if __name__ == "__main__":
    main()
