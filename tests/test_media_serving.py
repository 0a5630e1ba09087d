"""`/media/`: clips with byte ranges (iOS needs them), caching headers and the right types, the phone rendition on
request, and nothing outside the media folder, however the path is spelt."""

from __future__ import annotations

import os

import pytest

from tests.support.media import make_clip


@pytest.fixture
def media(app, tmp_path):
    folder = tmp_path / "media"
    make_clip(folder / "clips" / "q1.mp4", "h264", seconds=2, size=(64, 36))
    make_clip(folder / "clips" / "q1.phone.mp4", "h264", seconds=2, size=(32, 18))
    make_clip(folder / "clips" / "q2.webm", "vp9", seconds=1)
    (tmp_path / "secret.txt").write_text("the host password", encoding="utf-8")
    app.config["MEDIA_DIR"] = str(folder)
    return folder


def test_a_clip_comes_whole_with_its_type_and_caching_headers(client, media):
    whole = client.get("/media/clips/q1.mp4")
    body = (media / "clips" / "q1.mp4").read_bytes()
    assert whole.status_code == 200 and whole.data == body
    assert whole.mimetype == "video/mp4" and whole.headers["Accept-Ranges"] == "bytes"
    assert whole.headers["Cache-Control"] == "public, max-age=3600"
    assert whole.headers["ETag"] and whole.headers["Last-Modified"]
    assert client.get("/media/clips/q2.webm").mimetype == "video/webm"
    again = client.get("/media/clips/q1.mp4", headers={"If-None-Match": whole.headers["ETag"]})
    assert again.status_code == 304 and again.data == b""
    unchanged = client.get("/media/clips/q1.mp4", headers={"If-Modified-Since": whole.headers["Last-Modified"]})
    assert unchanged.status_code == 304


@pytest.mark.parametrize(
    "name, mimetype",
    [
        ("clip.mp4", "video/mp4"),
        ("clip.M4V", "video/mp4"),
        ("clip.webm", "video/webm"),
        ("sound.m4a", "audio/mp4"),
        ("notes.xyz", "application/octet-stream"),
        ("no-suffix", "application/octet-stream"),
    ],
)
def test_types_are_named_by_vtt_not_guessed_from_the_machine(client, media, monkeypatch, name, mimetype):
    import mimetypes

    (media / name).write_bytes(b"\x00" * 16)
    # a machine whose /etc/mime.types says otherwise (or has none) changes nothing
    monkeypatch.setattr(mimetypes, "guess_type", lambda *_args, **_kwargs: ("text/plain", None))
    assert client.get(f"/media/{name}").mimetype == mimetype


def test_byte_ranges_as_ios_asks_for_them(client, media):
    body = (media / "clips" / "q1.mp4").read_bytes()
    probe = client.get("/media/clips/q1.mp4", headers={"Range": "bytes=0-1"})
    assert probe.status_code == 206 and probe.data == body[:2]
    assert probe.headers["Content-Range"] == f"bytes 0-1/{len(body)}"
    tail = client.get("/media/clips/q1.mp4", headers={"Range": "bytes=100-"})
    assert tail.status_code == 206 and tail.data == body[100:]
    beyond = client.get("/media/clips/q1.mp4", headers={"Range": f"bytes={len(body) + 10}-"})
    assert beyond.status_code == 416 and beyond.headers["Content-Range"] == f"bytes */{len(body)}"


def test_the_phone_rendition_when_there_is_one(client, media):
    whole = client.get("/media/clips/q1.mp4")
    phone = client.get("/media/clips/q1.mp4?rendition=phone")
    light = (media / "clips" / "q1.phone.mp4").read_bytes()
    assert phone.data == light and phone.mimetype == "video/mp4" and phone.headers["ETag"] != whole.headers["ETag"]
    probe = client.get("/media/clips/q1.mp4?rendition=phone", headers={"Range": "bytes=0-1"})
    assert probe.status_code == 206 and probe.headers["Content-Range"] == f"bytes 0-1/{len(light)}"
    plain = client.get("/media/clips/q2.webm?rendition=phone")  # none beside it: the clip itself
    assert plain.data == (media / "clips" / "q2.webm").read_bytes()


@pytest.mark.parametrize(
    "path",
    [
        "/media/../secret.txt",
        "/media/%2e%2e/secret.txt",
        "/media/%2e%2e%2fsecret.txt",
        "/media/clips/../../secret.txt",
        "/media//etc/passwd",
        "/media/%2Fetc%2Fpasswd",
        "/media/..%5csecret.txt",
        "/media/clips%5c..%5c..%5csecret.txt",
        "/media/clips/q1.mp4%00.txt",
        "/media/clips/../../secret.txt?rendition=phone",
        "/media/link/secret.txt",
        "/media/nothing.mp4",
    ],
)
def test_nothing_outside_the_media_folder(client, media, tmp_path, path):
    os.symlink(tmp_path, media / "link")  # a link inside that points out
    response = client.get(path, follow_redirects=True)  # "//" redirects to a single slash, inside the folder
    assert response.status_code in (404, 400), (path, response.status_code)
    assert b"host password" not in response.data
