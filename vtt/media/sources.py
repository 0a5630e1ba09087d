"""What each question's clip is made from, as the benchmarks publish their video.

- **TVQA**: JPEG frames at 3 fps, one folder per ``vid_name`` under a folder per show:
  ``<from>/castle_frames/castle_s01e02_seg02_clip_00/00001.jpg``; The Big Bang Theory's ``vid_name`` has no show
  prefix (``bbt_frames/s01e02_seg02_clip_00/``), as TVQA's own loaders assume. ``ts`` (the question's span) cuts it.
- **DramaQA**: frames at 3 fps per episode, scene and shot: ``<from>/AnotherMissOh14/001/0010/IMAGE_*.jpg`` for the
  shot ``AnotherMissOh14_001_0010``. A scene's ``vid`` ends in ``_0000`` and its ``shot_contained`` is
  ``[first, last]`` (one element for a shot): the scene is every shot folder from the first to the last, in order
  (DramaQA's challenge loader, ``get_image_by_vid``, takes every frame from the first shot's to the last shot's).
- **video**: video files (MovieCORE, a native bank's clips): the clip's path relative to ``<from>``, cut to the span.

Only names and folders are looked at here; :mod:`vtt.media.prepare` reads the frames and builds the clips.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .check import ClipRef, clip_path, is_url

PREPARE_FORMATS = ("tvqa", "dramaqa", "video")
TVQA_FPS = 3.0  # "The video frames are extracted at 3 frames per second" (TVQA's data/README.md)
DRAMAQA_FPS = 3.0  # "The image frames are captured at 3 frames per second" (dramaqa.snu.ac.kr, Dataset)
FRAME_RATES = {"tvqa": TVQA_FPS, "dramaqa": DRAMAQA_FPS}  # the formats published as frames
TVQA_VID = re.compile(r"(?:(?P<show>[a-z]+)_)?s\d+e\d+_seg\d+_clip_\d+")
TVQA_PREFIXLESS_SHOW = "bbt"
DRAMAQA_VID = re.compile(r"(?P<episode>AnotherMissOh\d+)_(?P<scene>\d+)_(?P<shot>\d+)")


class SourceProblem(Exception):
    """Why a clip cannot be made, in a sentence with the fix; ``path`` is the file or folder concerned (relative to
    the ``--from`` folder), kept apart so that one kind of problem reads as one line for many questions."""

    def __init__(self, message: str, path: str | None = None):
        super().__init__(message)
        self.path = path


@dataclass(frozen=True)
class Recipe:
    """What one prepared clip is made from. Questions with the same recipe share the clip."""

    kind: str  # "frames": frame folders shown in order at ``fps`` | "video": one video file
    root: Path  # the --from folder
    inputs: tuple[str, ...]  # relative to root: frame folders in play order, or the video file
    label: str  # what the clip is named after: a vid, a video's path
    start: float | None = None
    end: float | None = None
    fps: float | None = None  # frames only

    def clip_name(self) -> str:
        if self.start is None and self.end is None:
            return f"{slug(self.label)}.mp4"
        end = "end" if self.end is None else f"{self.end:g}"
        return f"{slug(self.label)}_{self.start or 0:g}-{end}.mp4"


@dataclass
class Plan:
    """A bank's questions sorted out: the clips to build, which question plays which, and what cannot be made."""

    recipes: dict[str, Recipe] = field(default_factory=dict)  # clip file name -> what it is made from
    clip_of: dict[str, str] = field(default_factory=dict)  # qid -> clip file name
    problems: dict[str, SourceProblem] = field(default_factory=dict)  # qid -> why its clip cannot be made
    without_clip: list[str] = field(default_factory=list)  # qids with no clip at all: left as they are


def slug(text: str) -> str:
    """A file or folder name for ``text``: letters (any script), digits, '.', '_' and '-' kept, the rest '-'."""
    return re.sub(r"[^\w.-]+", "-", text).strip("-.") or "clip"


def default_format(bank_format: str) -> str:
    """``--format`` for a bank imported from ``bank_format``: frame folders for TVQA and DramaQA, else video files."""
    return bank_format if bank_format in ("tvqa", "dramaqa") else "video"


def plan_clips(fmt: str, root: Path, questions: Sequence[tuple[ClipRef, dict]], fps: float | None = None) -> Plan:
    """Each question's recipe (``questions``: its original clip and the fields its importer kept), one clip per
    distinct recipe, named after its label and span (a hash added where two different recipes share a name)."""
    plan = Plan()
    qids_of: dict[Recipe, list[str]] = {}
    for ref, kept in questions:
        if not ref.source:
            plan.without_clip.append(ref.qid)
            continue
        try:
            qids_of.setdefault(recipe_for(fmt, root, ref, kept, fps), []).append(ref.qid)
        except SourceProblem as problem:
            plan.problems[ref.qid] = problem
    sharing_a_name: dict[str, list[Recipe]] = {}
    for recipe in qids_of:
        sharing_a_name.setdefault(recipe.clip_name(), []).append(recipe)
    for name, recipes in sharing_a_name.items():
        for recipe in recipes:
            unique = name if len(recipes) == 1 else _with_hash(name, recipe)
            plan.recipes[unique] = recipe
            plan.clip_of.update(dict.fromkeys(qids_of[recipe], unique))
    return plan


def recipe_for(fmt: str, root: Path, ref: ClipRef, kept: dict, fps: float | None = None) -> Recipe:
    """What ``ref``'s clip is made from in the ``fmt`` layout under ``root``; :class:`SourceProblem` if it cannot be."""
    if is_url(ref.source):
        raise SourceProblem(
            "an online clip is not prepared: download it into the --from folder and give the "
            "question that file's path (--format video)",
            ref.source,
        )
    if fmt == "tvqa":
        return _tvqa(root, ref, fps or FRAME_RATES[fmt])
    if fmt == "dramaqa":
        return _dramaqa(root, ref, kept, fps or FRAME_RATES[fmt])
    return _video(root, ref)


def _tvqa(root: Path, ref: ClipRef, fps: float) -> Recipe:
    vid = TVQA_VID.fullmatch(ref.source)
    if vid is None:
        raise SourceProblem(
            "not a TVQA vid_name (like castle_s01e02_seg02_clip_00): give --format for this bank's clips", ref.source
        )
    folder = f"{vid['show'] or TVQA_PREFIXLESS_SHOW}_frames/{ref.source}"
    if not (root / folder).is_dir():
        raise SourceProblem(
            f"no frame folder <show>_frames/<vid_name> in {root}: give --from the folder that holds "
            "TVQA's bbt_frames, castle_frames, ... (tvqa_video_frames_fps3_hq)",
            folder,
        )
    return Recipe("frames", root, (folder,), ref.source, ref.start, ref.end, fps)


def _dramaqa(root: Path, ref: ClipRef, kept: dict, fps: float) -> Recipe:
    vid = DRAMAQA_VID.fullmatch(ref.source)
    if vid is None:
        raise SourceProblem(
            "not a DramaQA vid (like AnotherMissOh14_001_0010): give --format for this bank's clips", ref.source
        )
    scene = f"{vid['episode']}/{vid['scene']}"
    if int(vid["shot"]):
        folders = (f"{scene}/{vid['shot']}",)
    elif not (root / scene).is_dir():
        raise SourceProblem(_missing_dramaqa_folder(root), scene)
    else:
        folders = _scene_shots(root, scene, kept.get("shot_contained"))
    missing = next((folder for folder in folders if not (root / folder).is_dir()), None)
    if missing is not None:
        raise SourceProblem(_missing_dramaqa_folder(root), missing)
    return Recipe("frames", root, folders, ref.source, ref.start, ref.end, fps)


def _scene_shots(root: Path, scene: str, shot_contained) -> tuple[str, ...]:
    """The scene's shot folders from the first shot to the last (``shot_contained``), or all of them without it;
    the first and the last must be there."""
    shots = {
        int(entry.name): entry.name for entry in (root / scene).iterdir() if entry.is_dir() and entry.name.isdigit()
    }
    if not shot_contained:
        return tuple(f"{scene}/{shots[number]}" for number in sorted(shots))
    first, last = int(shot_contained[0]), int(shot_contained[-1])
    for end in (first, last):
        if end not in shots:
            raise SourceProblem(_missing_dramaqa_folder(root), f"{scene}/{end:04d}")
    return tuple(f"{scene}/{shots[number]}" for number in sorted(shots) if first <= number <= last)


def _missing_dramaqa_folder(root: Path) -> str:
    return (
        f"no frame folder <episode>/<scene>/<shot> in {root}: give --from DramaQA's AnotherMissOh_images "
        "folder (the one that holds AnotherMissOh01, ...)"
    )


def _video(root: Path, ref: ClipRef) -> Recipe:
    path = clip_path(root, ref.source)
    if path is None:
        raise SourceProblem(
            "the clip's path leaves the --from folder (an absolute path or '..'): give its path inside that folder",
            ref.source,
        )
    if not path.is_file():
        raise SourceProblem(
            f"no such video file in {root}: copy it there, or give --from the folder that holds the bank's videos",
            ref.source,
        )
    relative = path.relative_to(root).as_posix()
    return Recipe("video", root, (relative,), str(Path(relative).with_suffix("")), ref.start, ref.end)


def _with_hash(name: str, recipe: Recipe) -> str:
    digest = hashlib.sha1(repr((recipe.inputs, recipe.start, recipe.end)).encode()).hexdigest()[:8]
    return f"{name.removesuffix('.mp4')}-{digest}.mp4"
