"""The demo's clips, made with PyAV so `make run` plays video without downloading any.

Each clip the demo bank names is a coloured card with the scene's title, a large running timecode and a progress
bar (so a viewer sees that a question's span is honoured: "q01 plays 4.0-9.5 s"), and a soft tone that changes
every second (so a browser's rule against sound before a touch is real). H.264/AAC in MP4 with the index first,
plus a light rendition for phones beside each one.  Same bytes on every run with the same PyAV: fixed settings,
one encoder thread, no timestamps in the files.  A clip already there as it was made is left alone (a manifest in
the clips folder records each one's recipe and files' digests).
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from itertools import repeat
from pathlib import Path

from ...media import phone_rendition
from ...media.tone import mux_tone

BANK_FILE = Path(__file__).resolve().parent / "bank.csv"
MANIFEST = ".demo-clips.json"  # in the clips folder: what each clip was made from and its files' digests
FORMAT_VERSION = 2  # bump when the drawing, the sound or the settings change: clips are made again
FPS = 10
SAMPLE_RATE = 16_000
TAIL_SECONDS = 2.0  # after the last span's end
WHOLE_SCENE_SECONDS = 20.0  # a clip that only whole-scene questions play
# width, height, x264 crf; the phone's width a multiple of 16 (at 426 px x264 gave other bytes from run to run)
RENDITIONS = {"main": (640, 360, 30), "phone": (448, 252, 33)}
# The scenes of the demo episode, by clip: the card's title and colour.
SCENES = {
    "ep01_s001": ("On the subway", (44, 62, 80)),
    "ep01_s003": ("The office elevator", (94, 53, 66)),
    "ep01_s005": ("Before the pitch", (46, 80, 60)),
    "ep01_s007": ("The rooftop call", (40, 70, 110)),
    "ep01_s009": ("The pantry", (110, 74, 30)),
    "ep01_s010": ("Dokyung's desk", (60, 60, 90)),
    "ep01_s012": ("The slogan meeting", (100, 40, 40)),
    "ep01_s013": ("The new one", (70, 90, 40)),
    "ep01_s014": ("The pitch at 붉은면", (120, 30, 30)),
    "ep01_s015": ("The team dinner", (90, 60, 20)),
    "ep01_s017": ("The umbrella in the rain", (30, 80, 100)),
    "ep01_s018": ("The umbrella at home", (50, 50, 70)),
    "ep01_s020": ("The sticky note", (100, 90, 30)),
}


@dataclass(frozen=True)
class DemoClip:
    source: str  # as the bank names it: clips/ep01_s014.mp4
    title: str
    colour: tuple[int, int, int]
    seconds: float


def demo_clips(bank: Path = BANK_FILE) -> list[DemoClip]:
    """Every clip the bank names, long enough for the latest span that plays it."""
    ends: dict[str, float] = {}
    with bank.open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            end = float(row["end"]) if row["end"] else WHOLE_SCENE_SECONDS - TAIL_SECONDS
            ends[row["video"]] = max(ends.get(row["video"], 0.0), end)
    clips = []
    for source, end in sorted(ends.items()):
        scene = Path(source).stem
        title, colour = SCENES.get(scene, (scene, (60, 60, 60)))
        clips.append(DemoClip(source, f"{scene.replace('_', ' · ')} — {title}", colour, end + TAIL_SECONDS))
    return clips


def ensure_demo_clips(media_dir: Path, workers: int = 2) -> str:
    """Make the demo's clips in ``media_dir`` unless each is there as it was made; says what it did."""
    clips = demo_clips()
    where = media_dir / "clips"
    manifest = where / MANIFEST
    try:
        made = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        made = {}
    records = {clip.source: _record(media_dir, clip) for clip in clips}
    todo = [clip for clip in clips if made.get(clip.source) != records[clip.source]]
    if not todo:
        return f"demo clips: all {len(clips)} already there in {where}"
    longest_first = sorted(todo, key=lambda clip: -clip.seconds)  # so that the workers finish together
    with ProcessPoolExecutor(max_workers=max(1, min(workers, len(todo)))) as pool:
        list(pool.map(_make, repeat(media_dir), longest_first))
    records.update((clip.source, _record(media_dir, clip)) for clip in todo)
    with _aside(manifest) as partial:
        partial.write_text(json.dumps(records, indent=1, sort_keys=True), encoding="utf-8")
    return f"demo clips: {len(todo)} generated into {where}, each with its phone rendition"


def _renditions(clip: DemoClip) -> dict[str, str]:
    """Each rendition's file, by its name in RENDITIONS."""
    return {"main": clip.source, "phone": phone_rendition(clip.source)}


def _record(media_dir: Path, clip: DemoClip) -> dict:
    """What the clip is made from, and the digest of each of its files as they are (None: missing).  A clip whose
    record is the one written when it was made is left alone; one edited, truncated or gone is made again."""
    recipe = hashlib.sha256(json.dumps([FORMAT_VERSION, asdict(clip), RENDITIONS]).encode()).hexdigest()[:16]
    return {"recipe": recipe, "files": {path: _digest(media_dir / path) for path in _renditions(clip).values()}}


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


@contextmanager
def _aside(target: Path) -> Iterator[Path]:
    """A partial file to write ``target`` through, moved into place once whole: a file is there whole or not at
    all."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.part")  # per process: two loads at once never mix
    try:
        yield partial
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


def _make(media_dir: Path, clip: DemoClip) -> None:
    for name, source in _renditions(clip).items():
        with _aside(media_dir / source) as partial:
            _encode(partial, clip, *RENDITIONS[name])


def _encode(path: Path, clip: DemoClip, width: int, height: int, crf: int) -> None:
    import av
    import numpy as np

    frames = round(clip.seconds * FPS)
    with av.open(str(path), "w", format="mp4", options={"movflags": "+faststart", "fflags": "+bitexact"}) as out:
        video = out.add_stream(
            "libx264", rate=FPS, options={"crf": str(crf), "preset": "veryfast", "tune": "stillimage"}
        )
        video.width, video.height, video.pix_fmt = width, height, "yuv420p"
        video.codec_context.thread_count = 1  # the same bytes every run
        video.codec_context.flags |= av.codec.context.Flags.bitexact
        audio = out.add_stream("aac", rate=SAMPLE_RATE, layout="mono")
        audio.codec_context.bit_rate = 16_000
        audio.codec_context.flags |= av.codec.context.Flags.bitexact
        card = _Card(clip, width, height)
        for index in range(frames):
            frame = av.VideoFrame.from_image(card.draw(index / FPS))
            frame.pts = index
            for packet in video.encode(frame):
                out.mux(packet)
        for packet in video.encode():
            out.mux(packet)
        second = np.arange(round(clip.seconds * SAMPLE_RATE)) // SAMPLE_RATE
        pitch = 220.0 * 2 ** (second % 5 / 12)  # a semitone higher each second, five steps round
        phase = 2 * math.pi * np.cumsum(pitch) / SAMPLE_RATE  # accumulated: the pitch steps without a click
        tone = (0.08 * np.sin(phase)).astype(np.float32)  # soft: -22 dBFS
        mux_tone(out, audio, tone, SAMPLE_RATE)


class _Card:
    """One frame of a clip: its colour, title, running timecode and progress bar."""

    def __init__(self, clip: DemoClip, width: int, height: int):
        from PIL import Image, ImageDraw, ImageFont

        from analysis.fonts import FONT_DIR  # Nanum Gothic: the titles have Korean in them

        self.clip, self.width, self.height = clip, width, height
        self.background = Image.new("RGB", (width, height), clip.colour)
        font = str(FONT_DIR / "NanumGothicBold.ttf")
        title_font = ImageFont.truetype(font, max(12, height // 14))
        self.small = ImageFont.truetype(font, max(10, height // 22))
        self.big = ImageFont.truetype(font, height // 4)
        draw = ImageDraw.Draw(self.background)
        draw.text((width // 20, height // 12), clip.title, font=title_font, fill=(255, 255, 255))
        draw.text((width // 20, height - height // 6), "vtt demo clip", font=self.small, fill=(220, 220, 220))

    def draw(self, at: float):
        from PIL import ImageDraw

        image = self.background.copy()
        draw = ImageDraw.Draw(image)
        draw.text((self.width // 2, self.height // 2), f"{at:5.1f} s", font=self.big, fill=(255, 255, 255), anchor="mm")
        bar_top, bar_left, bar_right = self.height - self.height // 12, self.width // 20, self.width - self.width // 20
        draw.rectangle((bar_left, bar_top, bar_right, bar_top + 6), fill=(255, 255, 255))
        done = bar_left + (bar_right - bar_left) * at / self.clip.seconds
        draw.rectangle((bar_left, bar_top, done, bar_top + 6), fill=(250, 200, 40))
        draw.text(
            (bar_right, self.height - self.height // 6),
            f"of {self.clip.seconds:.0f} s",
            font=self.small,
            fill=(220, 220, 220),
            anchor="ra",
        )
        return image
