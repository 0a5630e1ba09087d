"""The demo plays video: `vtt demo load` makes every clip the demo bank names, the same bytes every run, small,
long enough for every span, and `vtt media check` passes on them."""

from __future__ import annotations

import hashlib
import json

import pytest

from vtt.media import phone_rendition
from vtt.sessions.demo.clips import BANK_FILE, ensure_demo_clips


def digests(folder):
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in sorted(folder.glob("*.mp4"))}


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    folder = tmp_path_factory.mktemp("demo-media")
    line = ensure_demo_clips(folder)
    return folder, line


def test_demo_load_makes_every_clip_small_and_a_check_passes(made, run, monkeypatch):
    folder, line = made
    assert line == f"demo clips: 13 generated into {folder / 'clips'}, each with its phone rendition"
    sizes = [path.stat().st_size for path in (folder / "clips").glob("*.mp4")]
    assert len(sizes) == 26 and sum(sizes) < 5 * 2**20  # all of them, phone renditions included: a few MB
    monkeypatch.setenv("VTT_MEDIA_DIR", str(folder))
    result = run("media", "check", str(BANK_FILE), "--json")
    report = json.loads(result.output)
    assert result.exit_code == 0 and report["counts"]["ok"] == 30, report["counts"]
    for clip in report["clips"]:
        assert clip["phone"] and (clip["video_codec"], clip["audio_codec"]) == ("h264", "aac")
        assert (clip["width"], clip["height"]) == (640, 360)
    loaded = run("demo", "load")  # the command makes them in the media folder: there already
    assert loaded.exit_code == 0 and f"demo clips: all 13 already there in {folder / 'clips'}" in loaded.output


def test_the_same_bytes_every_run_and_a_second_load_changes_nothing(made, tmp_path):
    folder, _line = made
    clips = folder / "clips"
    before = {path: path.stat().st_mtime_ns for path in clips.glob("*.mp4")}
    assert ensure_demo_clips(folder) == f"demo clips: all 13 already there in {clips}"
    assert {path: path.stat().st_mtime_ns for path in before} == before
    (clips / "ep01_s018.mp4").unlink()  # one clip gone, another's phone rendition spoilt: both made again
    (clips / "ep01_s001.phone.mp4").write_bytes(b"truncated")
    assert ensure_demo_clips(folder) == f"demo clips: 2 generated into {clips}, each with its phone rendition"
    other = tmp_path / "other"
    ensure_demo_clips(other)
    assert digests(other / "clips") == digests(clips)
    assert not list(clips.glob(".*.part"))


def test_a_clip_shows_its_scene_and_a_running_timecode_with_a_soft_tone(made):
    import av
    import numpy as np

    folder, _line = made
    with av.open(str(folder / phone_rendition("clips/ep01_s014.mp4"))) as clip:
        stream = clip.streams.video[0]
        assert (stream.codec_context.width, stream.codec_context.height) == (448, 252)
        assert float(stream.duration * stream.time_base) == pytest.approx(106.0, abs=0.1)  # q15 plays 95-104 s
        frames = [frame.to_ndarray(format="gray") for _i, frame in zip(range(12), clip.decode(stream))]
    assert np.abs(frames[0].astype(int) - frames[11].astype(int)).sum() > 0  # the timecode moves
    with av.open(str(folder / "clips" / "ep01_s014.mp4")) as clip:
        sound = np.concatenate([frame.to_ndarray()[0] for frame in clip.decode(audio=0)])
    assert 0.03 < np.abs(sound).max() < 0.3  # heard once a browser allows sound, never loud
