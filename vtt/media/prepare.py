"""Browser-ready clips built from what a benchmark publishes (:mod:`vtt.media.sources` says what from).

Each clip is H.264 (yuv420p, even sizes) in MP4 with its index first (faststart), AAC audio when the source has
sound, at most 1280x720, and beside it a light rendition for phones (:func:`vtt.media.phone_rendition`); both are
written in one pass over the source. Frame folders become video at their own rate (each frame shown for 1/fps), a
video is cut to the span and re-encoded.

Both cores work: two worker processes (spawned, so a caller's main module must be safe to import), each building
one clip at a time. A clip is written under a temporary name in its folder and moved into place whole. The manifest
beside the clips records what each was made from (input files with their sizes and times, the span, these settings),
so a clip made from the same source is left untouched.
"""

from __future__ import annotations

import hashlib
import json
import math
import multiprocessing
import os
import re
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from fractions import Fraction
from pathlib import Path

from . import phone_rendition
from .check import span_problem, stream_seconds
from .sources import Recipe, SourceProblem


@dataclass(frozen=True)
class Rendition:
    box: tuple[int, int]  # at most this wide and high (never enlarged)
    crf: int  # x264 quality
    max_bitrate: int  # bits per second the video may peak at
    audio_bitrate: int


# A 720p projector shows the main clip pixel for pixel and a 1080p one scales it cleanly; its peak stays well under
# what `vtt media check` calls heavy for phones (HIGH_BITRATE, 4 Mbit/s). The phone's is a quarter of the pixels.
RENDITIONS = {
    "main": Rendition(box=(1280, 720), crf=23, max_bitrate=2_500_000, audio_bitrate=128_000),
    "phone": Rendition(box=(640, 360), crf=28, max_bitrate=800_000, audio_bitrate=64_000),
}
X264_PRESET = "veryfast"
KEYFRAME_SECONDS = 2.0  # a page that joins mid-clip or replays seeks to a keyframe: at most this far back
AUDIO_RATE = 48_000
PREPARE_WORKERS = 2
MANIFEST = ".prepared.json"
SETTINGS_VERSION = 1  # bump when the encoding changes: every clip is then made again
FRAME_SUFFIXES = {".jpg", ".jpeg", ".png"}
VIDEO_FALLBACK_RATE = Fraction(25)  # a stream that states no frame rate
_DIGITS = re.compile(r"(\d+)")


@dataclass(frozen=True)
class Outcome:
    name: str  # the clip's file name in the output folder
    status: str  # "made" | "unchanged" | "failed"
    fingerprint: str | None = None
    problem: str | None = None  # why it failed, with the fix
    path: str | None = None  # the input concerned by the failure, relative to --from


def prepare_clips(
    out_dir: Path,
    recipes: Mapping[str, Recipe],
    workers: int = PREPARE_WORKERS,
    on_done: Callable[[Outcome], None] | None = None,
) -> dict[str, Outcome]:
    """Build every clip of ``recipes`` (file name in ``out_dir`` -> what it is made from) that is not already there
    from the same source; each clip's outcome. A failure is named and the others go on."""
    out_dir.mkdir(parents=True, exist_ok=True)
    made_before = _read_manifest(out_dir)
    manifest = dict(made_before)
    outcomes: dict[str, Outcome] = {}
    # spawned, not forked: the command holds a database engine, and a forked copy of its connections is unsafe
    with ProcessPoolExecutor(
        max_workers=max(1, min(workers, len(recipes))), mp_context=multiprocessing.get_context("spawn")
    ) as pool:
        futures = {
            pool.submit(build_clip, out_dir, name, recipe, manifest.get(name)): name for name, recipe in recipes.items()
        }
        for future in as_completed(futures):
            name = futures[future]
            try:
                outcome = future.result()
            except Exception as error:
                outcome = Outcome(name, "failed", problem=f"could not be built ({type(error).__name__}: {error})")
            outcomes[name] = outcome
            if outcome.fingerprint:
                manifest[name] = outcome.fingerprint
            if on_done:
                on_done(outcome)
    if manifest != made_before:
        _write_manifest(out_dir, manifest)
    return outcomes


def build_clip(out_dir: Path, name: str, recipe: Recipe, previous: str | None = None) -> Outcome:
    """One clip and its phone rendition in ``out_dir`` (in a worker process); left untouched when ``previous``, the
    fingerprint it was made with, still holds."""
    import av

    targets = {"main": out_dir / name, "phone": out_dir / phone_rendition(name)}
    partials = {kind: target.with_name(f".{target.name}.partial") for kind, target in targets.items()}
    try:
        inputs = _frame_files(recipe) if recipe.kind == "frames" else [recipe.root / recipe.inputs[0]]
        fingerprint = _fingerprint(recipe, inputs)
        if fingerprint == previous and all(target.is_file() for target in targets.values()):
            return Outcome(name, "unchanged", fingerprint)
        encode = _encode_frames if recipe.kind == "frames" else _encode_video
        encode(recipe, inputs, partials)
        os.replace(partials["phone"], targets["phone"])
        os.replace(partials["main"], targets["main"])
        return Outcome(name, "made", fingerprint)
    except SourceProblem as problem:
        return Outcome(name, "failed", problem=str(problem), path=problem.path)
    except (av.FFmpegError, OSError) as error:
        return Outcome(
            name,
            "failed",
            problem=f"could not be read or encoded ({error}): check the file, or give --format for this bank's clips",
            path=recipe.inputs[0],
        )
    finally:
        for partial in partials.values():
            partial.unlink(missing_ok=True)  # nothing half-written stays behind


def fit(size: tuple[int, int], box: tuple[int, int]) -> tuple[int, int]:
    """``size`` scaled down (never up) to fit ``box``, keeping its shape, both sides even (H.264's 4:2:0 needs it)."""
    scale = min(1.0, box[0] / size[0], box[1] / size[1])
    return tuple(max(2, round(side * scale / 2) * 2) for side in size)


def span_frames(recipe: Recipe, rate: Fraction, duration: float) -> tuple[int, int | None]:
    """The frames the span plays, as ``(first, stop)`` indexes at ``rate`` (stop None: to the end), rounded to the
    nearest frame so the clip lasts the span within one frame; :class:`SourceProblem` when the span does not fit."""
    problem = span_problem(recipe.start, recipe.end, duration, 1 / float(rate))
    if problem:
        raise SourceProblem(problem, recipe.inputs[0])
    first = nearest((recipe.start or 0) * rate)
    stop = None if recipe.end is None else nearest(recipe.end * rate)
    if stop is not None and stop <= first:
        raise SourceProblem(
            f"the span {recipe.start or 0:g}-{recipe.end:g} s is shorter than one frame: check the span",
            recipe.inputs[0],
        )
    return first, stop


def nearest(value) -> int:
    """``value`` rounded half up, alike at both ends of a span (``round`` rounds halves to even: 2.5-7.5 s at 25 fps
    would be frames 62 to 188, one too many)."""
    return math.floor(value + Fraction(1, 2))


def _frame_files(recipe: Recipe) -> list[Path]:
    frames = []
    for folder in recipe.inputs:
        found = sorted(
            (entry for entry in (recipe.root / folder).iterdir() if entry.suffix.lower() in FRAME_SUFFIXES),
            key=lambda entry: _natural(entry.name),
        )
        if not found:
            raise SourceProblem(
                f"the frame folder {folder} holds no JPEG or PNG frame: copy its frames from the "
                "benchmark's archive again",
                folder,
            )
        frames += found
    return frames


def _natural(name: str) -> tuple:
    """``IMAGE_9.jpg`` before ``IMAGE_10.jpg``."""
    return tuple(int(part) if part.isdigit() else part for part in _DIGITS.split(name))


def _fingerprint(recipe: Recipe, inputs: list[Path]) -> str:
    files = []
    for path in inputs:
        facts = path.stat()
        files.append((path.relative_to(recipe.root).as_posix(), facts.st_size, facts.st_mtime_ns))
    settings = [
        SETTINGS_VERSION,
        {kind: asdict(rendition) for kind, rendition in RENDITIONS.items()},
        X264_PRESET,
        KEYFRAME_SECONDS,
        AUDIO_RATE,
    ]
    described = [recipe.kind, files, recipe.start, recipe.end, recipe.fps, settings]
    return hashlib.sha256(json.dumps(described).encode()).hexdigest()[:20]


def _encode_frames(recipe: Recipe, frames: list[Path], partials: dict[str, Path]) -> None:
    """The frames in the span, each shown for 1/fps."""
    rate = Fraction(recipe.fps).limit_denominator(1001)
    first, stop = span_frames(recipe, rate, len(frames) / float(rate))
    chosen = frames[first:stop]
    size = _image_size(recipe, chosen[0])
    largest = fit(size, RENDITIONS["main"].box)
    with _Renditions(partials, size, rate, audio_layout=None) as out:
        for index, path in enumerate(chosen):
            out.add_video(_frame_image(recipe, path, largest), index)


def _image_size(recipe: Recipe, path: Path) -> tuple[int, int]:
    from PIL import Image

    try:
        with Image.open(path) as image:
            return image.size
    except (OSError, ValueError) as error:
        raise _unreadable(recipe, path, error) from None


def _frame_image(recipe: Recipe, path: Path, size: tuple[int, int]):
    import av
    from PIL import Image

    try:
        with Image.open(path) as image:
            image.draft("RGB", size)  # a large JPEG is decoded at a smaller scale straight away (never below size)
            return av.VideoFrame.from_image(image.convert("RGB"))
    except (OSError, ValueError) as error:
        raise _unreadable(recipe, path, error) from None


def _unreadable(recipe: Recipe, path: Path, error: Exception) -> SourceProblem:
    frame = path.relative_to(recipe.root).as_posix()
    return SourceProblem(
        f"the frame {frame} cannot be read ({error}): copy it from the benchmark's archive again", frame
    )


def _encode_video(recipe: Recipe, inputs: list[Path], partials: dict[str, Path]) -> None:
    """The video file cut to the span (from the frame showing at its start, to the nearest frame), sound included."""
    import av

    with av.open(str(inputs[0])) as source:
        if not source.streams.video:
            raise SourceProblem("the file has no video stream: give the question a video file", recipe.inputs[0])
        video = source.streams.video[0]
        audio = source.streams.audio[0] if source.streams.audio else None
        rate = video.average_rate or video.guessed_rate or VIDEO_FALLBACK_RATE
        duration = stream_seconds(source, video)
        first, stop = span_frames(recipe, rate, duration if duration is not None else math.inf)
        origin = float(video.start_time * video.time_base) if video.start_time else 0.0  # players count from here
        if first:
            source.seek(int((first / rate + origin) / video.time_base), stream=video, backward=True)
        cut = _AudioCut(
            first / rate,
            None if stop is None else stop / rate,
            origin,
            "mono" if audio is not None and audio.codec_context.channels == 1 else "stereo",
        )
        size = (video.codec_context.width, video.codec_context.height)
        written, video_done = -1, False
        with _Renditions(partials, size, rate, audio_layout=cut.layout if audio is not None else None) as out:
            for packet in source.demux(*[stream for stream in (video, audio) if stream is not None]):
                for frame in packet.decode():
                    if packet.stream is audio:
                        for piece in cut.trim(frame):
                            out.add_audio(piece)
                    elif frame.time is not None:
                        index = nearest((frame.time - origin) * rate) - first
                        if stop is not None and index >= stop - first:
                            video_done = True  # frames come out in display order: the span is all there
                        elif index > written:
                            out.add_video(frame, index)
                            written = index
                if video_done and (audio is None or cut.done):
                    break
            for piece in cut.flush():
                out.add_audio(piece)
        if written < 0:
            raise SourceProblem("no frame of the span decodes: check the span, or re-encode the file", recipe.inputs[0])


class _AudioCut:
    """Decoded sound resampled to AAC's input (float planar, 48 kHz) and cut to the clip's span sample by sample, so
    that it stays in step with the video cut. Positions count samples from the source's origin."""

    def __init__(self, start: Fraction, end: Fraction | None, origin: float, layout: str):
        import av

        self.first = nearest(start * AUDIO_RATE)
        self.stop = None if end is None else nearest(end * AUDIO_RATE)
        self.origin, self.layout = origin, layout
        self.resampler = av.AudioResampler(format="fltp", layout=layout, rate=AUDIO_RATE)
        self.position: int | None = None  # the next resampled sample
        self.done = False

    def trim(self, frame) -> list:
        if self.position is None and frame.time is not None:
            self.position = nearest((frame.time - self.origin) * AUDIO_RATE)
        return self._cut(self.resampler.resample(frame))

    def flush(self) -> list:
        return self._cut(self.resampler.resample(None))

    def _cut(self, chunks) -> list:
        import av

        pieces = []
        for chunk in chunks:
            if self.position is None:
                continue
            begins, self.position = self.position, self.position + chunk.samples
            self.done = self.stop is not None and self.position >= self.stop
            keep_from = max(0, self.first - begins)
            keep_to = chunk.samples if self.stop is None else min(chunk.samples, self.stop - begins)
            if keep_to <= keep_from:
                continue
            piece = av.AudioFrame.from_ndarray(
                chunk.to_ndarray()[:, keep_from:keep_to].copy(), format="fltp", layout=self.layout
            )
            piece.sample_rate, piece.time_base = AUDIO_RATE, Fraction(1, AUDIO_RATE)
            piece.pts = begins + keep_from - self.first
            pieces.append(piece)
        return pieces


class _Renditions:
    """The main clip and its phone rendition, written side by side: every frame and sound is given once and each
    encoder scales it to its own size."""

    def __init__(self, paths: dict[str, Path], size: tuple[int, int], rate: Fraction, audio_layout: str | None):
        import av

        self.frame_time_base = 1 / Fraction(rate)
        self.outputs = []
        for kind, path in paths.items():
            rendition = RENDITIONS[kind]
            container = av.open(str(path), "w", format="mp4", options={"movflags": "+faststart"})
            video = container.add_stream(
                "libx264",
                rate=rate,
                options={
                    "crf": str(rendition.crf),
                    "preset": X264_PRESET,
                    "maxrate": str(rendition.max_bitrate),
                    "bufsize": str(2 * rendition.max_bitrate),
                },
            )
            video.width, video.height = fit(size, rendition.box)
            video.pix_fmt = "yuv420p"
            video.codec_context.gop_size = max(1, round(KEYFRAME_SECONDS * rate))
            audio = None
            if audio_layout is not None:
                audio = container.add_stream("aac", rate=AUDIO_RATE, layout=audio_layout)
                audio.codec_context.bit_rate = rendition.audio_bitrate
            self.outputs.append((container, video, audio))

    def __enter__(self) -> _Renditions:
        return self

    def add_video(self, frame, index: int) -> None:
        frame.pts, frame.time_base = index, self.frame_time_base
        for container, video, _audio in self.outputs:
            container.mux(video.encode(frame))

    def add_audio(self, frame) -> None:
        for container, _video, audio in self.outputs:
            container.mux(audio.encode(frame))

    def __exit__(self, failed_type, *_details) -> None:
        try:
            if failed_type is None:
                for container, video, audio in self.outputs:
                    container.mux(video.encode(None))
                    if audio is not None:
                        container.mux(audio.encode(None))
        finally:
            for container, _video, _audio in self.outputs:
                container.close()


def _read_manifest(out_dir: Path) -> dict[str, str]:
    try:
        return json.loads((out_dir / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # none yet, or unreadable: every clip is made again


def _write_manifest(out_dir: Path, manifest: dict[str, str]) -> None:
    partial = out_dir / f".{MANIFEST}.partial"
    partial.write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(partial, out_dir / MANIFEST)
