"""Time `vtt media prepare` per clip, from frames and from video, and `vtt media check` on many clips.

    python bench/bench_media.py [--runs 3] [--clips 1000]

- prepare from frames: a TVQA-like folder (20 s at 3 fps: 60 JPEGs of 640x360) made into one clip and its phone
  rendition in this process; then 8 such folders through the worker pool, 1 worker against 2.
- prepare from video: a 20 s span cut out of a 2-minute 1280x720 H.264/AAC file (25 fps), in this process.
- check: ``--clips`` small H.264/AAC clips (5 s, 320x180, each a file of its own), 1 thread against the default.

Frames and videos are drawn here (moving shapes on a moving pattern, so that the encoder has real work), in a
temporary folder. Prints the median of ``--runs`` runs of each.
"""

from __future__ import annotations

import argparse
import functools
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from vtt.media.check import ClipRef, check_clips
from vtt.media.prepare import build_clip, prepare_clips
from vtt.media.sources import TVQA_FPS, Recipe

BATCH = 8  # frame folders through the pool


@functools.cache
def pattern(width: int, height: int) -> np.ndarray:
    ys, xs = np.mgrid[0:height, 0:width]
    stripes = 96 + 64 * np.sin(xs / 23.0) * np.cos(ys / 31.0)
    return np.stack([stripes, np.roll(stripes, width // 3, axis=1), 255 - stripes], axis=-1).astype(np.uint8)


def picture(index: int, width: int, height: int) -> np.ndarray:
    """Frame ``index`` of a scene: a drifting striped background and a square crossing it."""
    image = np.roll(pattern(width, height), 3 * index, axis=1)
    side = height // 4
    left, top = (7 * index) % (width - side), (height - side) // 2
    image[top : top + side, left : left + side] = (230, 200, 40)
    return image


def write_frames(folder: Path, count: int, size=(640, 360)) -> None:
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        Image.fromarray(picture(index, *size)).save(folder / f"{index + 1:05d}.jpg", quality=90)


def write_video(path: Path, seconds: float, size: tuple[int, int], fps: int = 25) -> None:
    """H.264/AAC MP4 (stereo, 48 kHz, a tone) with the index first."""
    import av

    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), "w", format="mp4", options={"movflags": "+faststart"}) as out:
        video = out.add_stream("libx264", rate=fps, options={"crf": "23", "preset": "veryfast"})
        video.width, video.height, video.pix_fmt = *size, "yuv420p"
        audio = out.add_stream("aac", rate=48_000, layout="stereo")
        for index in range(round(seconds * fps)):
            frame = av.VideoFrame.from_ndarray(picture(index, *size), format="rgb24")
            frame.pts = index
            out.mux(video.encode(frame))
        out.mux(video.encode(None))
        step = 1024
        for start in range(0, round(seconds * 48_000), step):
            tone = 0.1 * np.sin(2 * np.pi * 440 * (start + np.arange(step)) / 48_000, dtype=np.float32)
            frame = av.AudioFrame.from_ndarray(np.stack([tone, tone]), format="fltp", layout="stereo")
            frame.sample_rate, frame.pts = 48_000, start
            out.mux(audio.encode(frame))
        out.mux(audio.encode(None))


def median_seconds(runs: int, work) -> tuple[float, list[float]]:
    times = []
    for run in range(runs):
        started = time.perf_counter()
        work(run)
        times.append(time.perf_counter() - started)
    return statistics.median(times), times


def report(label: str, runs: tuple[float, list[float]], per: str = "") -> None:
    median, times = runs
    print(f"{label}: {median:.2f} s{per} (median; runs {', '.join(f'{t:.2f}' for t in times)})")


def bench_frames(root: Path, runs: int) -> None:
    for number in range(BATCH):
        write_frames(root / "frames" / "bbt_frames" / f"s01e0{number + 1}_seg01_clip_00", round(20 * TVQA_FPS))
    recipes = {
        f"clip{number}.mp4": Recipe(
            "frames",
            root / "frames",
            (f"bbt_frames/s01e0{number + 1}_seg01_clip_00",),
            f"s01e0{number + 1}_seg01_clip_00",
            fps=TVQA_FPS,
        )
        for number in range(BATCH)
    }
    one = next(iter(recipes.items()))
    report(
        "prepare from frames, one 20 s clip (60 frames, 640x360, 3 fps) + phone rendition, in-process",
        median_seconds(runs, lambda run: _built(build_clip(_folder(root / f"one-{run}"), *one))),
    )
    for workers in (1, 2):
        batch = median_seconds(
            runs,
            lambda run, workers=workers: _all_built(
                prepare_clips(root / f"pool{workers}-{run}", recipes, workers=workers)
            ),
        )
        report(
            f"prepare from frames, {BATCH} such clips through the pool, {workers} worker{'s' * (workers > 1)}",
            batch,
            f", {batch[0] / BATCH:.2f} s a clip",
        )


def bench_video(root: Path, runs: int) -> None:
    source = root / "videos" / "film.mp4"
    started = time.perf_counter()
    write_video(source, 120, (1280, 720))
    print(
        f"(the 2-minute 1280x720 source took {time.perf_counter() - started:.0f} s to draw and encode, "
        f"{source.stat().st_size / 2**20:.0f} MB)"
    )
    recipe = Recipe("video", root / "videos", ("film.mp4",), "film", start=50.0, end=70.0)
    report(
        "prepare from video, a 20 s span of a 2-minute 1280x720 H.264/AAC file + phone rendition, in-process",
        median_seconds(runs, lambda run: _built(build_clip(_folder(root / f"cut-{run}"), "film.mp4", recipe))),
    )


def bench_check(root: Path, runs: int, clips: int) -> None:
    media = root / "media"
    first = media / "clips" / "c00000.mp4"
    write_video(first, 5, (320, 180))
    for index in range(1, clips):
        shutil.copyfile(first, media / "clips" / f"c{index:05d}.mp4")
    refs = [ClipRef(f"q{index}", f"clips/c{index:05d}.mp4", 1.0, 4.5) for index in range(clips)]
    for label, workers in (("1 thread", 1), ("the default threads", None)):
        checked = median_seconds(runs, lambda run, workers=workers: _all_ok(check_clips(media, refs, workers=workers)))
        report(
            f"check {clips:,} clips (5 s, 320x180 H.264/AAC), {label}",
            checked,
            f", {1000 * checked[0] / clips:.2f} ms a clip",
        )


def _folder(path: Path) -> Path:
    path.mkdir(parents=True)
    return path


def _built(outcome) -> None:
    assert outcome.status == "made", outcome


def _all_built(outcomes) -> None:
    assert all(outcome.status == "made" for outcome in outcomes.values()), outcomes


def _all_ok(verdicts) -> None:
    assert all(verdict.verdict == "ok" for verdict in verdicts), {verdict.verdict for verdict in verdicts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--clips", type=int, default=1000, help="how many clips `check` checks")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        bench_frames(root, args.runs)
        bench_video(root, args.runs)
        bench_check(root, args.runs, args.clips)


if __name__ == "__main__":
    main()
