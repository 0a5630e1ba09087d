"""`vtt media prepare`: browser-ready clips from TVQA's and DramaQA's frame folders and from video files, cut to each
question's span, the bank pointed at them (the original clip kept), a second run changing nothing, and every
question whose clip cannot be made named without stopping the others."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import select

from tests.support.media import make_clip
from vtt.media.prepare import fit
from vtt.models import Question

SIZE = (64, 36)


def make_frames(folder: Path, count: int, shade: int = 0, name: str = "{:05d}.jpg", first: int = 1) -> Path:
    """``count`` JPEG frames, each a flat grey a step lighter than the one before (from ``shade``)."""
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        grey = np.full((SIZE[1], SIZE[0], 3), shade + 4 * index, np.uint8)
        Image.fromarray(grey).save(folder / name.format(first + index), quality=95)
    return folder


def probe(path: Path) -> dict:
    """A clip's facts, and the grey level of its first and last frames."""
    import av

    with av.open(str(path)) as clip:
        video = clip.streams.video[0]
        greys = [frame.to_ndarray(format="gray").mean() for frame in clip.decode(video)]
        audio = clip.streams.audio[0] if clip.streams.audio else None
        return {
            "seconds": float(video.duration * video.time_base),
            "frames": len(greys),
            "codec": video.name,
            "size": (video.width, video.height),
            "pix_fmt": video.codec_context.pix_fmt,
            "audio": audio.name if audio else None,
            "audio_seconds": float(audio.duration * audio.time_base) if audio else None,
            "first": greys[0],
            "last": greys[-1],
        }


def index_first(path: Path) -> bool:
    data = path.read_bytes()
    return data.index(b"moov") < data.index(b"mdat")


def bank_clips(db, bank: str) -> dict[str, tuple]:
    db.expire_all()
    questions = db.scalars(select(Question).join(Question.bank).where(Question.bank.has(name=bank)))
    return {q.qid: (q.clip_source, q.clip_start, q.clip_end, q.source.get("original_clip")) for q in questions}


@pytest.fixture
def media(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "media"
    monkeypatch.setenv("VTT_MEDIA_DIR", str(folder))
    return folder


def tvqa_line(qid: int, vid: str, ts: str) -> str:
    return json.dumps(
        {
            "qid": qid,
            "q": f"Question {qid}?",
            "a0": "a",
            "a1": "b",
            "a2": "c",
            "a3": "d",
            "a4": "e",
            "answer_idx": 0,
            "ts": ts,
            "vid_name": vid,
            "show_name": "a show",
        }
    )


def import_tvqa(run, tmp_path, lines: list[str], bank: str = "TVQA val") -> None:
    path = tmp_path / "tvqa_val.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert run("questions", "import", str(path), "--bank", bank).exit_code == 0


def test_fit_scales_down_to_even_sizes_and_never_up():
    assert fit((1920, 1080), (1280, 720)) == (1280, 720)
    assert fit((1440, 1080), (1280, 720)) == (960, 720)
    assert fit((1080, 1920), (640, 360)) == (202, 360)
    assert fit((64, 36), (640, 360)) == (64, 36)
    assert fit((101, 57), (1280, 720)) == (100, 56)


def test_tvqa_frames_become_clips_cut_to_ts_and_the_bank_plays_them(run, db, media, tmp_path):
    frames = tmp_path / "tvqa_frames"
    make_frames(frames / "bbt_frames" / "s01e02_seg02_clip_00", 30)  # 10 s at 3 fps
    make_frames(frames / "castle_frames" / "castle_s01e02_seg02_clip_00", 45, shade=60)  # 15 s
    import_tvqa(
        run,
        tmp_path,
        [
            tvqa_line(1, "s01e02_seg02_clip_00", "1.21-8.49"),
            tvqa_line(2, "castle_s01e02_seg02_clip_00", "NaN-NaN"),
            tvqa_line(3, "s01e02_seg02_clip_00", "1.21-8.49"),
        ],
    )

    result = run("media", "prepare", "--bank", "TVQA val", "--from", str(frames))
    assert result.exit_code == 0, result.output
    out = media / "TVQA-val"
    assert result.output.splitlines() == [
        f"TVQA val: 2 clips for 3 questions (tvqa at 3 fps from {frames}) in {out}: 2 made, 0 already prepared, "
        "0 failed",
        "3 of 3 questions play a prepared clip (3 repointed now)",
    ]
    cut = probe(out / "s01e02_seg02_clip_00_1.21-8.49.mp4")
    # frames 5 to 25 (the ones showing from 1.21 s to 8.49 s, to the nearest frame): 21 frames, 7 s
    assert (cut["frames"], cut["codec"], cut["pix_fmt"], cut["size"], cut["audio"]) == (
        21,
        "h264",
        "yuv420p",
        SIZE,
        None,
    )
    assert abs(cut["seconds"] - (8.49 - 1.21)) <= 1 / 3 and cut["seconds"] == pytest.approx(7.0, abs=1e-3)
    assert cut["first"] == pytest.approx(4 * 4, abs=3) and cut["last"] == pytest.approx(4 * 24, abs=3)
    whole = probe(out / "castle_s01e02_seg02_clip_00.mp4")
    assert whole["frames"] == 45 and whole["seconds"] == pytest.approx(15.0, abs=1e-3)
    phone = out / "castle_s01e02_seg02_clip_00.phone.mp4"
    assert probe(phone)["frames"] == 45 and index_first(phone) and index_first(out / "castle_s01e02_seg02_clip_00.mp4")

    clips = bank_clips(db, "TVQA val")
    assert clips["1"] == (
        "TVQA-val/s01e02_seg02_clip_00_1.21-8.49.mp4",
        None,
        None,
        {"source": "s01e02_seg02_clip_00", "start": 1.21, "end": 8.49},
    )
    assert clips["3"][0] == clips["1"][0]  # the same clip and span: one clip for both
    assert clips["2"] == (
        "TVQA-val/castle_s01e02_seg02_clip_00.mp4",
        None,
        None,
        {"source": "castle_s01e02_seg02_clip_00", "start": None, "end": None},
    )
    assert db.scalar(select(Question.source).where(Question.qid == "2"))["ts"] == "NaN-NaN"  # the record's own
    check = run("media", "check", "--bank", "TVQA val")
    assert check.exit_code == 0 and check.output.startswith("TVQA val: 3 questions: 3 clips ready"), check.output

    made = {path.name: path.stat().st_mtime_ns for path in out.iterdir()}
    again = run("media", "prepare", "--bank", "TVQA val", "--from", str(frames))
    assert again.exit_code == 0
    assert "2 clips for 3 questions" in again.output and ": 0 made, 2 already prepared, 0 failed" in again.output
    assert "3 of 3 questions play a prepared clip (0 repointed now)" in again.output
    assert {path.name: path.stat().st_mtime_ns for path in out.iterdir()} == made
    assert bank_clips(db, "TVQA val") == clips


def test_a_changed_frame_or_rate_makes_that_clip_again(run, media, tmp_path):
    frames = tmp_path / "frames"
    changed = make_frames(frames / "bbt_frames" / "s01e01_seg01_clip_00", 12)
    make_frames(frames / "grey_frames" / "grey_s01e01_seg01_clip_00", 9)
    import_tvqa(
        run,
        tmp_path,
        [tvqa_line(1, "s01e01_seg01_clip_00", "NaN-NaN"), tvqa_line(2, "grey_s01e01_seg01_clip_00", "NaN-NaN")],
    )
    assert run("media", "prepare", "--bank", "TVQA val", "--from", str(frames)).exit_code == 0
    make_frames(changed, 1, shade=200)  # frame 1 replaced
    again = run("media", "prepare", "--bank", "TVQA val", "--from", str(frames))
    assert ": 1 made, 1 already prepared, 0 failed" in again.output
    assert probe(media / "TVQA-val" / "s01e01_seg01_clip_00.mp4")["first"] == pytest.approx(200, abs=3)
    faster = run("media", "prepare", "--bank", "TVQA val", "--from", str(frames), "--fps", "6")
    assert "(tvqa at 6 fps from" in faster.output and ": 2 made, 0 already prepared" in faster.output
    assert probe(media / "TVQA-val" / "grey_s01e01_seg01_clip_00.mp4")["seconds"] == pytest.approx(1.5, abs=1e-3)


def test_dramaqa_shots_and_scenes_of_several_shots(run, db, media, tmp_path):
    images = tmp_path / "AnotherMissOh_images"
    scene = images / "AnotherMissOh14" / "001"
    make_frames(scene / "0010", 7, shade=0, name="IMAGE_{:010d}.jpg", first=4051)
    make_frames(scene / "0011", 5, shade=40, name="IMAGE_{:010d}.jpg", first=4100)
    make_frames(scene / "0012", 6, shade=80, name="IMAGE_{:010d}.jpg", first=4140)
    make_frames(scene / "0013", 4, shade=160, name="IMAGE_{:010d}.jpg", first=4180)  # after the scene's last shot

    def item(qid, vid, kind, shots):
        return {
            "qid": qid,
            "que": f"Question {qid}?",
            "answers": list("abcde"),
            "correct_idx": 1,
            "vid": vid,
            "videoType": kind,
            "shot_contained": shots,
            "q_level_mem": 2,
            "q_level_logic": 3,
        }

    bank = tmp_path / "AnotherMissOhQA_val_set.json"
    bank.write_text(
        json.dumps(
            [
                item(11, "AnotherMissOh14_001_0010", "shot", [10]),
                item(12, "AnotherMissOh14_001_0000", "scene", [10, 12]),
                item(13, "AnotherMissOh14_001_0010", "shot", [10]),
                item(14, "AnotherMissOh14_002_0000", "scene", [1, 3]),
            ]
        ),
        encoding="utf-8",
    )
    assert run("questions", "import", str(bank), "--bank", "DramaQA val").exit_code == 0

    result = run("media", "prepare", "--bank", "DramaQA val", "--from", str(images))
    assert result.exit_code == 1  # question 14's scene is not in the folder
    out = media / "DramaQA-val"
    assert result.output.splitlines()[0] == (
        f"DramaQA val: 2 clips for 3 questions (dramaqa at 3 fps from {images}) "
        f"in {out}: 2 made, 0 already prepared, 0 failed"
    )
    assert (
        f"  DramaQA val: question 14: field 'clip': no frame folder <episode>/<scene>/<shot> in {images}: give "
        "--from DramaQA's AnotherMissOh_images folder (the one that holds AnotherMissOh01, ...)"
    ) in result.output
    shot = probe(out / "AnotherMissOh14_001_0010.mp4")
    assert shot["frames"] == 7 and shot["seconds"] == pytest.approx(7 / 3, abs=1e-3)
    whole_scene = probe(out / "AnotherMissOh14_001_0000.mp4")  # shots 10, 11 and 12 in order; not 13
    assert whole_scene["frames"] == 18 and whole_scene["seconds"] == pytest.approx(6.0, abs=1e-3)
    assert whole_scene["first"] == pytest.approx(0, abs=3) and whole_scene["last"] == pytest.approx(80 + 20, abs=3)
    clips = bank_clips(db, "DramaQA val")
    assert clips["11"][0] == clips["13"][0] == "DramaQA-val/AnotherMissOh14_001_0010.mp4"
    assert clips["12"][0] == "DramaQA-val/AnotherMissOh14_001_0000.mp4"
    assert clips["14"] == ("AnotherMissOh14_002_0000", None, None, None)  # failed: kept as it was


def test_video_files_are_cut_to_the_span_with_their_sound(run, db, media, tmp_path):
    videos = tmp_path / "moviecore"
    make_clip(videos / "films" / "one.mp4", "h264", seconds=10, fps=25)
    make_clip(videos / "two.webm", "vp9", seconds=3, fps=30)
    make_clip(videos / "big.mp4", "h264", seconds=1, fps=5, size=(1920, 1080))
    bank = tmp_path / "films.csv"
    bank.write_text(
        "qid,question,answer,video,start,end\ncut,Q?,a,films/one.mp4,2.5,7.5\n"
        "webm,Q?,a,two.webm,,\nbig,Q?,a,big.mp4,,\nnone,Q?,a,,,\n",
        encoding="utf-8",
    )
    assert run("questions", "import", str(bank), "--bank", "Films").exit_code == 0

    result = run("media", "prepare", "--bank", "Films", "--from", str(videos), "--out", str(media / "venue"))
    assert result.exit_code == 0, result.output
    assert (
        "3 of 4 questions play a prepared clip (3 repointed now); 1 without a clip (nothing to prepare)"
        in result.output
    )
    cut = probe(media / "venue" / "films-one_2.5-7.5.mp4")
    assert (cut["frames"], cut["audio"]) == (125, "aac")  # 2.5 s to 7.5 s at 25 fps
    assert cut["seconds"] == pytest.approx(5.0, abs=0.04) and cut["audio_seconds"] == pytest.approx(5.0, abs=0.03)
    shade_of_second = [(second * 60) % 256 for second in range(10)]  # make_clip's frames change every second
    assert cut["first"] == pytest.approx(shade_of_second[2], abs=3)
    assert cut["last"] == pytest.approx(shade_of_second[7], abs=3)
    webm = probe(media / "venue" / "two.mp4")
    assert (webm["codec"], webm["audio"], webm["frames"]) == ("h264", "aac", 90)
    assert probe(media / "venue" / "big.mp4")["size"] == (1280, 720)
    assert probe(media / "venue" / "big.phone.mp4")["size"] == (640, 360)
    assert bank_clips(db, "Films")["cut"] == (
        "venue/films-one_2.5-7.5.mp4",
        None,
        None,
        {"source": "films/one.mp4", "start": 2.5, "end": 7.5},
    )
    assert run("media", "check", "--bank", "Films").exit_code == 0


def test_each_question_that_fails_is_named_and_the_others_are_made(run, db, media, tmp_path):
    frames = tmp_path / "frames"
    make_frames(frames / "bbt_frames" / "s01e01_seg01_clip_00", 9)
    broken = make_frames(frames / "house_frames" / "house_s01e01_seg01_clip_00", 9)
    (broken / "00004.jpg").write_bytes(b"\xff\xd8 not a jpeg")
    (frames / "met_frames" / "met_s01e01_seg01_clip_00").mkdir(parents=True)
    import_tvqa(
        run,
        tmp_path,
        [
            tvqa_line(1, "s01e01_seg01_clip_00", "0-2"),
            tvqa_line(2, "house_s01e01_seg01_clip_00", "NaN-NaN"),
            tvqa_line(3, "met_s01e01_seg01_clip_00", "NaN-NaN"),
            tvqa_line(4, "friends_s01e01_seg01_clip_00", "NaN-NaN"),
            tvqa_line(5, "s01e01_seg01_clip_00", "1-9"),
            tvqa_line(6, "clips/q6.mp4", "NaN-NaN"),
        ],
    )
    problems = tmp_path / "problems.csv"
    result = run("media", "prepare", "--bank", "TVQA val", "--from", str(frames), "--problems-out", str(problems))
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0].endswith(": 1 made, 0 already prepared, 3 failed")
    assert lines[1] == "1 of 6 questions play a prepared clip (1 repointed now)"
    assert lines[2] == "5 questions kept the clip they had:"
    assert lines[3:] == [  # in the bank's order
        "  TVQA val: question 2: field 'clip': the frame house_frames/house_s01e01_seg01_clip_00/00004.jpg cannot be "
        f"read (cannot identify image file '{broken / '00004.jpg'}'): copy it from the benchmark's archive again",
        "  TVQA val: question 3: field 'clip': the frame folder met_frames/met_s01e01_seg01_clip_00 holds no JPEG or "
        "PNG frame: copy its frames from the benchmark's archive again",
        f"  TVQA val: question 4: field 'clip': no frame folder <show>_frames/<vid_name> in {frames}: give --from the "
        "folder that holds TVQA's bbt_frames, castle_frames, ... (tvqa_video_frames_fps3_hq)",
        "  TVQA val: question 5: field 'clip': the span ends at 9 s but the clip is only 3.00 s long: check the "
        "span, or the file",
        "  TVQA val: question 6: field 'clip': not a TVQA vid_name (like castle_s01e02_seg02_clip_00): give --format "
        "for this bank's clips",
    ]
    with problems.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [(row["row"], row["value"]) for row in rows] == [
        ("2", "house_frames/house_s01e01_seg01_clip_00/00004.jpg"),
        ("3", "met_frames/met_s01e01_seg01_clip_00"),
        ("4", "friends_frames/friends_s01e01_seg01_clip_00"),
        ("5", "bbt_frames/s01e01_seg01_clip_00"),
        ("6", "clips/q6.mp4"),
    ]
    assert sorted(path.name for path in (media / "TVQA-val").iterdir()) == [
        ".prepared.json",
        "s01e01_seg01_clip_00_0-2.mp4",
        "s01e01_seg01_clip_00_0-2.phone.mp4",
    ]  # no partial file
    clips = bank_clips(db, "TVQA val")
    assert clips["1"][0] == "TVQA-val/s01e01_seg01_clip_00_0-2.mp4"
    assert clips["2"] == ("house_s01e01_seg01_clip_00", None, None, None)
    assert clips["5"] == ("s01e01_seg01_clip_00", 1.0, 9.0, None)


def test_the_clips_must_go_inside_the_media_folder_of_a_bank_that_exists(run, media, tmp_path):
    frames = make_frames(tmp_path / "frames" / "bbt_frames" / "s01e01_seg01_clip_00", 3).parent.parent
    import_tvqa(run, tmp_path, [tvqa_line(1, "s01e01_seg01_clip_00", "NaN-NaN")])
    outside = run("media", "prepare", "--bank", "TVQA val", "--from", str(frames), "--out", str(tmp_path / "clips"))
    assert outside.exit_code == 1 and not (tmp_path / "clips").exists()
    assert outside.output == (
        f"error: --out {tmp_path / 'clips'} is outside the media folder ({media}), and the "
        "server serves clips only from there: give a folder inside it, or set VTT_MEDIA_DIR\n"
    )
    missing = run("media", "prepare", "--bank", "Nope", "--from", str(frames))
    assert missing.exit_code == 1 and "no question bank named 'Nope'" in missing.output
    video_rate = run("media", "prepare", "--bank", "TVQA val", "--from", str(frames), "--format", "video", "--fps", "3")
    assert video_rate.exit_code == 2 and "--fps is for frame folders" in video_rate.output


def test_video_files_that_cannot_be_cut_are_named(run, media, tmp_path):
    videos = tmp_path / "videos"
    make_clip(videos / "short.mp4", "h264", seconds=2)
    (videos / "notes.mp4").write_bytes(b"not a video at all " * 20)
    bank = tmp_path / "films.csv"
    bank.write_text(
        "qid,question,answer,video,start,end\nlong,Q?,a,short.mp4,1,8\ngone,Q?,a,gone.mp4,,\n"
        "text,Q?,a,notes.mp4,,\nup,Q?,a,../secret.mp4,,\nweb,Q?,a,https://example.org/a.mp4,,\n",
        encoding="utf-8",
    )
    assert run("questions", "import", str(bank), "--bank", "Films").exit_code == 0
    result = run("media", "prepare", "--bank", "Films", "--from", str(videos))
    assert result.exit_code == 1
    messages = [line.split(": field 'clip': ", 1)[1] for line in result.output.splitlines() if "field 'clip'" in line]
    assert messages == [
        "the span ends at 8 s but the clip is only 2.00 s long: check the span, or the file",
        f"no such video file in {videos}: copy it there, or give --from the folder that holds the bank's videos",
        messages[2],  # FFmpeg's own words, checked below
        "the clip's path leaves the --from folder (an absolute path or '..'): give its path inside that folder",
        "an online clip is not prepared: download it into the --from folder and give the question that file's path "
        "(--format video)",
    ]
    assert messages[2].startswith("could not be read or encoded (") and messages[2].endswith(
        "): check the file, or give --format for this bank's clips"
    )
    assert list((media / "Films").iterdir()) == []  # nothing made, nothing half-written
