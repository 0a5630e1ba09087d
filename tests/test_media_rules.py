"""The silent sources a page plays on its clip's element inside the person's tap (static/js/screening.js; the browser
side is tests/test_screening.py): silent, a quarter of a second, what scripts/make_silence.py writes, and served with
the media type Safari needs to play them."""

from __future__ import annotations

import importlib.util

import av
import numpy as np
import pytest

from tests.support.paths import ROOT

SILENCE = {"silence.m4a": ("aac", "audio/mp4"), "silence.webm": ("opus", "video/webm")}


def make_silence():
    spec = importlib.util.spec_from_file_location("make_silence", ROOT / "scripts" / "make_silence.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", sorted(SILENCE))
def test_a_silent_source_is_silent_short_and_what_the_script_writes(name, tmp_path):
    committed = ROOT / "static" / "media" / name
    codec, _type = SILENCE[name]
    with av.open(str(committed)) as source:
        assert source.streams.audio[0].codec_context.name == codec
        frames = list(source.decode(audio=0))
        seconds = sum(frame.samples for frame in frames) / frames[0].sample_rate
        loudest = max(float(np.abs(frame.to_ndarray().astype(np.float32)).max()) for frame in frames)
    assert 0.2 <= seconds <= 0.3 and loudest < 1e-3, (seconds, loudest)
    assert committed.stat().st_size < 2048
    make_silence().main(tmp_path)
    assert (tmp_path / name).read_bytes() == committed.read_bytes()  # the same bytes every run


@pytest.mark.parametrize("name", sorted(SILENCE))
def test_a_silent_source_is_served_with_its_media_type(client, name):
    served = client.get(f"/static/media/{name}")
    assert served.status_code == 200 and served.mimetype == SILENCE[name][1]
