"""`vtt media check`: every clip is there, decodes, is long enough for its span and plays in every browser;
each kind of problem is named once with the questions it concerns, and the exit code says whether any clip fails."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.support.media import make_clip
from vtt.media.check import ClipRef, check_clip, check_clips

BANK = """qid,question,answer,video,start,end
ok_mp4,What colour?,red,clips/ok.mp4,0.5,2.5
ok_webm,What colour?,red,clips/ok.webm,,
avi,What colour?,red,clips/old.avi,,
short,What colour?,red,clips/ok.mp4,1,9
gone1,What colour?,red,clips/gone.mp4,,
gone2,What colour?,red,clips/gone2.mp4,,
outside,What colour?,red,../secret.mp4,,
online,What colour?,red,https://example.org/clip.mp4,,
none,What colour?,red,,,
"""


@pytest.fixture
def media(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "media"
    make_clip(folder / "clips" / "ok.mp4", "h264", seconds=3)
    make_clip(folder / "clips" / "ok.webm", "vp9", seconds=2)
    make_clip(folder / "clips" / "old.avi", "mpeg4_avi", seconds=2)
    monkeypatch.setenv("VTT_MEDIA_DIR", str(folder))
    return folder


@pytest.fixture
def bank(tmp_path) -> Path:
    path = tmp_path / "bank.csv"
    path.write_text(BANK, encoding="utf-8")
    return path


def test_each_clip_gets_its_verdict_and_the_facts_behind_it(media):
    refs = [
        ClipRef("a", "clips/ok.mp4", 0.5, 2.5),
        ClipRef("b", "clips/ok.webm"),
        ClipRef("c", "clips/old.avi"),
        ClipRef("d", "clips/ok.mp4", 1, 9),
        ClipRef("e", "clips/gone.mp4"),
        ClipRef("f", "/etc/passwd"),
        ClipRef("g", "https://example.org/x.mp4"),
        ClipRef("h", None),
    ]
    verdicts = {v.qid: v for v in check_clips(media, refs)}
    assert [verdicts[q].verdict for q in "abcdefgh"] == [
        "ok",
        "ok",
        "problem",
        "problem",
        "problem",
        "problem",
        "url",
        "none",
    ]
    mp4 = verdicts["a"]
    assert (mp4.video_codec, mp4.audio_codec, mp4.width, mp4.height) == ("h264", "aac", 64, 36)
    assert mp4.duration == pytest.approx(3.0, abs=0.05) and mp4.size > 0 and mp4.bitrate > 0
    assert (verdicts["b"].video_codec, verdicts["b"].audio_codec) == ("vp9", "opus")
    assert verdicts["c"].problems == [
        "MPEG-4 Part 2 video in a .avi file (avi) does not play in every browser: "
        "re-encode it to H.264/AAC MP4 (`vtt media prepare --format video`)"
    ]
    assert verdicts["d"].problems == [
        "the span ends at 9 s but the clip is only 3.00 s long: check the span, or the file"
    ]
    assert "not in the media folder" in verdicts["e"].problems[0]
    assert "leaves the media folder" in verdicts["f"].problems[0]


def test_a_clip_with_its_index_at_the_end_and_a_heavy_one_are_warned_about(media, monkeypatch):
    make_clip(media / "slow.mp4", "h264", seconds=2, faststart=False)
    slow = check_clip(media, ClipRef("s", "slow.mp4"))
    assert slow.verdict == "warning" and "index (moov) comes after the video data" in slow.warnings[0]
    monkeypatch.setattr("vtt.media.check.HIGH_BITRATE", 1000)
    heavy = check_clip(media, ClipRef("h", "clips/ok.mp4"))
    assert heavy.verdict == "warning" and "heavy for phones" in heavy.warnings[0]


def test_a_file_that_is_no_video_and_a_bad_phone_rendition_are_problems(media):
    (media / "clips" / "text.mp4").write_bytes(b"not a video " * 50)
    assert "cannot be opened as a video" in check_clip(media, ClipRef("t", "clips/text.mp4")).problems[0]
    make_clip(media / "clips" / "ok.phone.mp4", "h264", seconds=1)  # a rendition too short for the span
    verdict = check_clip(media, ClipRef("p", "clips/ok.mp4", 0.5, 2.5))
    assert verdict.phone and verdict.verdict == "problem"
    assert verdict.problems == [
        "its phone rendition ok.phone.mp4: the span ends at 2.5 s but the clip is only "
        "1.00 s long: check the span, or the file"
    ]


def test_the_command_groups_the_problems_names_the_questions_and_exits_1(run, media, bank, tmp_path):
    out = tmp_path / "problems.csv"
    result = run("media", "check", str(bank), "--problems-out", str(out))
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert lines[0] == (
        f"bank.csv: 9 questions: 2 clips ready, 0 with a warning, 5 with a problem, 1 online (not "
        f"checked), 1 without a clip (media folder {media})"
    )
    assert (
        f"  bank.csv: 2 questions (gone1, gone2): field 'clip': the file is not in the media folder ({media}): "
        "copy it there, or build it with `vtt media prepare`"
    ) in lines
    assert any(line.startswith("  bank.csv: question avi: field 'clip': MPEG-4 Part 2 video") for line in lines)
    assert any(line.startswith("  bank.csv: question short: field 'clip': the span ends at 9 s") for line in lines)
    with out.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert sorted(row["row"] for row in rows) == ["avi", "gone1", "gone2", "outside", "short"]
    assert {row["value"] for row in rows if row["row"] == "gone1"} == {"clips/gone.mp4"}


def test_the_json_names_every_question_and_a_good_bank_exits_0(run, media, bank, tmp_path):
    result = run("media", "check", str(bank), "--json")
    report = json.loads(result.output)
    assert report["counts"] == {"ok": 2, "warning": 0, "problem": 5, "url": 1, "none": 1}
    assert [(c["qid"], c["source"], c["verdict"]) for c in report["clips"]][:3] == [
        ("ok_mp4", "clips/ok.mp4", "ok"),
        ("ok_webm", "clips/ok.webm", "ok"),
        ("avi", "clips/old.avi", "problem"),
    ]
    good = tmp_path / "good.csv"
    good.write_text("\n".join(BANK.splitlines()[:3]) + "\n", encoding="utf-8")
    assert run("media", "check", str(good)).exit_code == 0


def test_a_bank_in_the_database_is_checked_by_name(run, media, bank):
    assert run("questions", "import", str(bank), "--bank", "Clips").exit_code == 0
    result = run("media", "check", "--bank", "Clips")
    assert result.exit_code == 1 and result.output.startswith("Clips: 9 questions: 2 clips ready")
    missing = run("media", "check", "--bank", "Nope")
    assert missing.exit_code == 1 and "no question bank named 'Nope'" in missing.output
    assert run("media", "check").exit_code == 2  # neither a file nor a bank
