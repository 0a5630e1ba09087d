"""vtt.transcribe: a spoken answer (WebM/Opus as MediaRecorder sends it, MP4/AAC from Safari) as a suggested text.

The speech is made by Debian's espeak-ng (required when CI=true), encoded with PyAV as a browser would; the
``http:`` backend talks to a fake OpenAI-compatible server in a thread.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import threading
import time
from pathlib import Path

import av
import numpy as np
import pytest

from tests.support.audio import FORMATS, PHRASE, SOUNDS, decoded, encode, frames_of, said_webm, tone
from tests.support.paths import DATA
from tests.support.served import free_port
from tests.support.whisper import FakeWhisper
from vtt.model_calls.endpoints import public_url, transcriptions_endpoint
from vtt.transcribe import MAX_TRANSCRIPT, Transcript, TranscriptionError, check, language_code, transcribe
from vtt.transcribe import audio as audio_module
from vtt.transcribe.audio import kind_of, pcm16k


@pytest.fixture(scope="module")
def spoken(tmp_path_factory) -> Path:
    return said_webm(tmp_path_factory.mktemp("speech"))


# --- decoding -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", FORMATS)
def test_each_recording_format_decodes_to_16_khz_mono_pcm(kind, tmp_path):
    container, codec, name = FORMATS[kind]
    path = encode(tone(1.0, 440.0), tmp_path / name, container, codec)
    pcm = np.frombuffer(pcm16k(path), dtype="<i2")
    assert 0.95 * 16000 <= len(pcm) <= 1.1 * 16000  # one second (codecs add a few ms of priming)
    spectrum = np.abs(np.fft.rfft(pcm.astype(np.float64)))
    assert abs(np.argmax(spectrum) * 16000 / len(pcm) - 440) < 5  # the tone's pitch: resampled at the right rate
    rms = np.sqrt(np.mean(pcm.astype(np.float64) ** 2)) / 32768
    assert 0.3 < rms < 0.4  # a sine of amplitude 0.5: 0.354
    assert kind_of(path)[0] == kind
    renamed = path.rename(tmp_path / "recording")  # an upload kept under an id: told by what is in it
    assert (
        kind_of(renamed)
        == {
            "webm": ("webm", "audio/webm"),
            "mp4": ("mp4", "audio/mp4"),
            "ogg": ("ogg", "audio/ogg"),
            "wav": ("wav", "audio/wav"),
        }[kind]
    )


def test_a_file_that_is_not_a_recording_is_named_as_such(tmp_path):
    junk = tmp_path / "answer.webm"
    junk.write_bytes(b"this is not a recording, only some text that ends in .webm\n" * 20)
    for spec in ("pocketsphinx", "http:http://127.0.0.1:9"):  # http: refused before anything is sent
        with pytest.raises(TranscriptionError, match=r"cannot decode the recording answer\.webm"):
            transcribe(junk, spec)
    with pytest.raises(TranscriptionError, match=r"no recording at .*missing\.webm"):
        transcribe(tmp_path / "missing.webm", "pocketsphinx")
    with pytest.raises(TranscriptionError, match="no recording at"):
        transcribe(tmp_path, "pocketsphinx")  # a folder


def test_a_video_without_sound_and_an_endless_recording_are_refused(tmp_path, monkeypatch):
    silent_video = tmp_path / "video.webm"
    with av.open(str(silent_video), "w", format="webm") as out:
        stream = out.add_stream("libvpx", rate=10)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        for index in range(3):
            frame = av.VideoFrame.from_ndarray(np.full((48, 64, 3), index * 40, dtype=np.uint8), format="rgb24")
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    with pytest.raises(TranscriptionError, match="the recording video.webm has no sound track"):
        transcribe(silent_video, "pocketsphinx")
    monkeypatch.setattr(audio_module, "MAX_SECONDS", 0.5)
    long = encode(tone(1.0), tmp_path / "long.webm", "webm", "libopus")
    with pytest.raises(TranscriptionError, match="lasts over 0.5 s"):
        transcribe(long, "pocketsphinx")


# --- pocketsphinx ---------------------------------------------------------------------------------------------


def test_pocketsphinx_hears_the_spoken_phrase_offline(spoken):
    heard = transcribe(spoken, "pocketsphinx", language="en-US")
    assert isinstance(heard, Transcript)
    assert heard.hearing.speech and heard.level in ("unsure", "likely", "sure")  # speech, shown as what it is
    words = set(PHRASE.split())
    overlap = words & set(heard.text.split())
    print(f"pocketsphinx heard {heard.text!r} in {heard.seconds:.2f} s")
    assert len(overlap) >= 5, f"pocketsphinx heard {heard.text!r} for {PHRASE!r}"
    assert heard.backend.startswith("pocketsphinx 5.") and heard.backend == check("pocketsphinx")
    assert heard.language == "en"
    assert 0 < heard.seconds < 30
    again = transcribe(str(spoken), "pocketsphinx")  # the decoder is reused: the same words
    assert again.text == heard.text


def test_pocketsphinx_transcribes_in_threads_at_once(spoken):
    """Workers may transcribe at the same time: each call gets a decoder of its own."""
    heard: list[str] = []
    threads = [threading.Thread(target=lambda: heard.append(transcribe(spoken, "pocketsphinx").text)) for _ in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(heard) == 2 and heard[0] == heard[1] == transcribe(spoken, "pocketsphinx").text


def test_the_package_needs_neither_flask_nor_socketio():
    imported = subprocess.run(
        [sys.executable, "-c", "import sys, vtt.transcribe; print('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parent.parent,
    ).stdout.split()
    assert "vtt.transcribe.remote" in imported
    assert not [name for name in imported if name.split(".")[0] in ("flask", "socketio", "engineio", "flask_socketio")]


def test_pocketsphinx_refuses_a_language_other_than_english(tmp_path):
    path = encode(tone(0.2), tmp_path / "answer.webm", "webm", "libopus")
    for language in ("ko", "ko-KR", "KO"):
        with pytest.raises(TranscriptionError) as refused:
            transcribe(path, "pocketsphinx", language=language)
        assert str(refused.value) == "pocketsphinx ships an English model only: use http:URL for ko"
    with pytest.raises(TranscriptionError, match="pocketsphinx ships an English model only: use http:URL for fr"):
        check("pocketsphinx", language="fr")


# --- specs and settings ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec, problem",
    [
        ("whisper", "unknown transcription backend 'whisper': give pocketsphinx or http:URL"),
        ("", "unknown transcription backend '': give pocketsphinx or http:URL"),
        ("http:", "unknown transcription backend 'http:'"),
        ("vosk:https://user:secret@example.org", "unknown transcription backend 'vosk:https://example.org'"),
        ("http:ftp://example.org", "http: 'ftp://example.org' is not an http:// or https:// URL"),
        ("http:example.org/v1", "is not an http:// or https:// URL"),
    ],
)
def test_a_spec_that_names_no_backend_is_refused(spec, problem, tmp_path):
    with pytest.raises(TranscriptionError) as refused:
        transcribe(tmp_path / "answer.webm", spec)
    assert problem in str(refused.value)
    assert "secret" not in str(refused.value)


def test_language_codes_and_timeouts():
    assert [language_code(tag) for tag in ("en", "en-US", "en_GB", " Ko-kr ")] == ["en", "en", "en", "ko"]
    for bad in ("", "english", "1x"):
        with pytest.raises(TranscriptionError, match="is not a language code"):
            language_code(bad)
    with pytest.raises(TranscriptionError, match="the timeout must be a positive number"):
        transcribe("answer.webm", "pocketsphinx", timeout=0)


@pytest.mark.parametrize(
    "url, endpoint",
    [
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000/v1/audio/transcriptions"),
        ("http://127.0.0.1:8000/", "http://127.0.0.1:8000/v1/audio/transcriptions"),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1/audio/transcriptions"),
        ("http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1/audio/transcriptions"),
        ("https://api.example.org/v1/audio/transcriptions", "https://api.example.org/v1/audio/transcriptions"),
        ("http://host/openai/v1?key=1", "http://host/openai/v1/audio/transcriptions?key=1"),
    ],
)
def test_the_endpoint_of_a_server_root_or_its_v1(url, endpoint):
    assert transcriptions_endpoint(url) == endpoint


def test_the_backend_is_described_without_credentials():
    url = "https://ana:secret@example.org:8443/v1?token=secret"
    assert public_url(transcriptions_endpoint(url)) == "https://example.org:8443/v1/audio/transcriptions"
    assert check(f"http:{url}", language="ko", model="large-v3") == (
        "http:https://example.org:8443/v1/audio/transcriptions model large-v3"
    )


# --- http: an OpenAI-compatible server ------------------------------------------------------------------------


@pytest.fixture
def recording(spoken) -> Path:
    """A spoken answer: a tone is no speech, and no server is asked about it."""
    return spoken


def test_http_sends_the_recording_as_a_form_and_reads_the_text(recording):
    with FakeWhisper(text="  un chat sur la table \n") as server:
        heard = transcribe(recording, f"http:{server.root}/v1", language="fr-CA", api_key="sk-test", timeout=10)
    assert heard.text == "un chat sur la table"
    assert heard.backend == f"http:{server.root}/v1/audio/transcriptions model whisper-1"
    assert heard.language == "fr" and heard.seconds > 0
    (request,) = server.requests
    assert request["path"] == "/v1/audio/transcriptions"
    assert request["headers"]["Authorization"] == "Bearer sk-test"
    assert request["fields"] == {"model": "whisper-1", "language": "fr", "response_format": "verbose_json"}
    assert heard.confidence is None  # a reply without segments says nothing of how sure it is
    assert request["files"] == {"file": ("answer.webm", "audio/webm", recording.read_bytes())}


def test_http_at_the_server_root_with_credentials_in_the_url(spoken, tmp_path):
    safari = encode(list(decoded(spoken)), tmp_path / "0a1b2c", "mp4", "aac")  # kept under an id, no extension
    with FakeWhisper() as server:
        url = f"http://ana:s%40cret@127.0.0.1:{server.port}"
        heard = transcribe(safari, f"http:{url}", model="Systran/faster-whisper-small")
    (request,) = server.requests
    assert request["path"] == "/v1/audio/transcriptions"
    assert request["headers"]["Authorization"] == "Basic YW5hOnNAY3JldA=="  # ana:s@cret
    assert request["fields"]["model"] == "Systran/faster-whisper-small"
    assert request["files"]["file"][:2] == ("answer.mp4", "audio/mp4")
    assert heard.backend == f"http:{server.root}/v1/audio/transcriptions model Systran/faster-whisper-small"
    assert "cret" not in heard.backend


def test_an_http_error_names_the_endpoint_without_credentials(recording):
    with FakeWhisper("error") as server:
        with pytest.raises(TranscriptionError) as failed:
            transcribe(recording, f"http:http://ana:secret@127.0.0.1:{server.port}/v1/")
    assert str(failed.value) == (
        f'{server.root}/v1/audio/transcriptions answered HTTP 500: {{"error": {{"message": "CUDA out of memory"}}}}'
    )
    with FakeWhisper("garbage") as server:
        with pytest.raises(TranscriptionError, match=r"/v1/audio/transcriptions sent no transcript .*a proxy's page"):
            transcribe(recording, f"http:{server.root}")


def test_a_slow_server_times_out(recording):
    with FakeWhisper("slow") as server:
        started = time.monotonic()
        with pytest.raises(TranscriptionError) as failed:
            transcribe(recording, f"http:http://ana:secret@127.0.0.1:{server.port}", timeout=0.5)
        took = time.monotonic() - started
    assert str(failed.value) == f"{server.root}/v1/audio/transcriptions gave no transcript within 0.5 s"
    assert took < 3


def test_the_timeout_bounds_the_whole_exchange(recording):
    """A server that answers at once but sends its reply a byte at a time still gets only the timeout."""
    with FakeWhisper("trickle") as server:
        started = time.monotonic()
        with pytest.raises(TranscriptionError, match="gave no transcript within 1 s"):
            transcribe(recording, f"http:{server.root}", timeout=1)
        took = time.monotonic() - started
    assert took < 2.5


def test_a_server_that_is_not_there(recording):
    port = free_port()
    with pytest.raises(TranscriptionError) as failed:
        transcribe(recording, f"http:http://ana:secret@127.0.0.1:{port}/v1", timeout=5)
    assert str(failed.value).startswith(f"cannot reach http://127.0.0.1:{port}/v1/audio/transcriptions: Connection")
    assert "secret" not in str(failed.value)


# --- how sure the backend is ----------------------------------------------------------------------------------


def test_pocketsphinx_says_how_sure_it_is(spoken):
    heard = transcribe(spoken, "pocketsphinx")
    assert heard.text and 0 < heard.confidence <= 1


# --- no speech, no transcript ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["silence", "tone 440 Hz", "tone 1000 Hz", "white noise #1", "pink noise #1", "brown noise #1"]
)
def test_silence_tones_and_noise_are_no_transcript(name, tmp_path):
    """Found: pocketsphinx heard "it" (confidence 1.0) in three seconds of silence, and "john" (1.0) in another run:
    the host's card said "Sure (100 %)" of a recording with nothing in it."""
    path = encode(frames_of(SOUNDS[name]()), tmp_path / "answer.webm", "webm", "libopus")
    heard = transcribe(path, "pocketsphinx")
    assert (heard.text, heard.confidence) == ("", None), f"{name}: heard {heard.text!r} ({heard.confidence})"
    assert heard.level == "none" and not heard.hearing.speech


def test_chromium_s_fake_microphone_is_no_transcript():
    """Found: Chromium's fake microphone (a 400 Hz beep twice a second; this file is what it recorded through
    MediaRecorder) was heard by pocketsphinx as "gervais" at confidence 1.0, and the card said "Sure (100 %): check it
    as you listen"."""
    heard = transcribe(DATA / "chromium_fake_microphone.webm", "pocketsphinx")
    assert (heard.text, heard.confidence, heard.level) == ("", None, "none")


def test_a_recording_without_speech_is_not_sent_to_a_transcription_server(tmp_path):
    """A Whisper-class server answers silence with a sentence ("Thank you for watching"): it is not asked."""
    path = encode(frames_of(SOUNDS["silence"]()), tmp_path / "answer.webm", "webm", "libopus")
    with FakeWhisper(text="Thank you for watching.") as server:
        heard = transcribe(path, f"http:{server.root}")
    assert server.requests == []
    assert (heard.text, heard.confidence, heard.level) == ("", None, "none")
    assert heard.backend == f"http:{server.root}/v1/audio/transcriptions model whisper-1"


def test_the_speech_check_finds_a_voice_in_speech_and_none_in_tones_noise_or_silence(spoken):
    """The check alone, on PCM (fast): every sound of tests.support.audio.SOUNDS is no speech; a spoken phrase, and
    one word said by a high child-like voice, are speech."""
    from vtt.transcribe.speech import hear

    def pcm(samples):  # 48 kHz float to 16 kHz 16-bit, as pcm16k gives it (every third sample: aliasing is noise)
        return (np.clip(samples[::3], -1, 1) * 32767).astype("<i2").tobytes()

    for name, make in SOUNDS.items():
        hearing = hear(pcm(make()))
        assert not hearing.speech and hearing.reason, f"{name}: {hearing}"
    assert hear(bytes(32000)).reason == "silent"
    assert hear(pcm(SOUNDS["buzz (sawtooth 120 Hz)"]())).reason == "a steady pitch"
    assert hear(b"").speech is False and hear(b"\x01").speech is False
    phrase = np.frombuffer(pcm16k(spoken), dtype="<i2").astype(np.float32) / 32768
    assert hear(pcm16k(spoken)).speech
    assert hear((phrase * 0.05 * 32767).astype("<i2").tobytes()).speech  # said quietly: -38 dBFS at its loudest
    noise = SOUNDS["pink noise #1"]()[::3][: len(phrase)]
    noise *= np.sqrt(np.mean(phrase**2) / np.mean(noise**2) / 10)  # 10 dB below the voice
    assert hear((np.clip(phrase + noise, -1, 1) * 32767).astype("<i2").tobytes()).speech  # in a noisy room
    word = subprocess.run(
        ["espeak-ng", "-v", "en-us+f3", "-p", "80", "--stdout", "two"], capture_output=True, check=True, timeout=60
    ).stdout
    samples = np.frombuffer(word[44:], dtype="<i2").astype(np.float32) / 32768  # 22,050 Hz
    at_16k = np.interp(np.arange(int(len(samples) * 16000 / 22050)) * 22050 / 16000, np.arange(len(samples)), samples)
    assert hear((at_16k * 32767).astype("<i2").tobytes()).speech


def test_the_level_says_what_the_backend_s_figure_was_measured_to_mean():
    """bench/bench_transcribe.py (docs/benchmarks.md): of pocketsphinx's suggestions at 0.8 or more, none was right
    word for word and their word accuracy was 11 %; at no figure were most words right.  So its figure never makes a
    suggestion likely or sure: before, the card said "Sure (100 %)" of "gervais" for a beep."""
    from vtt.transcribe.levels import POCKETSPHINX, UNMEASURED, level_of

    sphinx = "pocketsphinx 5.1.1"
    assert level_of("", None, sphinx) == "none" and level_of("  ", 0.9, "http:x") == "none"
    assert level_of("a dog", None, sphinx) == "unknown"
    assert POCKETSPHINX.sure is None and POCKETSPHINX.likely is None
    assert [level_of("gervais", figure, sphinx) for figure in (1.0, 0.8, 0.5, 0.0)] == ["unsure"] * 4
    assert UNMEASURED.sure is None  # a server's figure was not measured: never "sure" on its word
    assert level_of("a dog", 1.0, "http:http://127.0.0.1/v1/audio/transcriptions model m") == "likely"
    assert level_of("a dog", UNMEASURED.likely - 0.01, "http:x") == "unsure"


def test_the_confidence_of_word_posteriors_is_their_geometric_mean():
    from vtt.transcribe.sphinx import confidence

    assert confidence([1.0001, 1.0]) == 1.0  # the log arithmetic's rounding stays within 0..1
    assert confidence([1.0, 0.25]) == pytest.approx(0.5)
    assert confidence([0.0, 1.0]) == pytest.approx(10**-4.5)  # a word no path went through: near 0, not an error
    assert confidence([]) is None


def verbose(text: str, *segments) -> tuple[int, bytes]:
    return 200, json.dumps({"task": "transcribe", "text": text, "segments": list(segments)}).encode()


def test_http_confidence_is_the_exp_of_the_token_weighted_avg_logprob(recording):
    reply = verbose(
        " the man opened the red door",
        {"id": 0, "text": " the man opened", "tokens": [1, 2, 3], "avg_logprob": -0.1},
        {"id": 1, "text": " the red door", "tokens": [4], "avg_logprob": -0.9},
    )
    with FakeWhisper(reply=lambda fields: reply) as server:
        heard = transcribe(recording, f"http:{server.root}")
    assert heard.text == "the man opened the red door"
    assert heard.confidence == pytest.approx(math.exp((3 * -0.1 + 1 * -0.9) / 4))
    no_tokens = verbose("hello", {"avg_logprob": -0.2}, {"avg_logprob": -0.4})  # whisper.cpp may leave them out
    with FakeWhisper(reply=lambda fields: no_tokens) as server:
        assert transcribe(recording, f"http:{server.root}").confidence == pytest.approx(math.exp(-0.3))


@pytest.mark.parametrize(
    "segments",
    [
        "not a list",
        [{"avg_logprob": "high"}],
        [{"avg_logprob": -0.1}, {"text": "no figure"}],
        [{"avg_logprob": True}],
        [7],
        [],
    ],
)
def test_segments_without_usable_figures_give_no_confidence_but_keep_the_text(segments, recording):
    body = json.dumps({"text": "a red ball", "segments": segments}).encode()
    with FakeWhisper(reply=lambda fields: (200, body)) as server:
        heard = transcribe(recording, f"http:{server.root}")
    assert (heard.text, heard.confidence) == ("a red ball", None)


def test_a_server_that_refuses_verbose_json_is_asked_for_json(recording):
    def only_json(fields):
        if fields["response_format"] != "json":
            return 400, b'{"error": {"message": "response_format verbose_json is not compatible with this model"}}'
        return 200, b'{"text": "a big dog"}'

    with FakeWhisper(reply=only_json) as server:
        heard = transcribe(recording, f"http:{server.root}", model="gpt-4o-transcribe")
    assert [r["fields"]["response_format"] for r in server.requests] == ["verbose_json", "json"]
    assert (heard.text, heard.confidence) == ("a big dog", None)


# --- a hostile or broken server -------------------------------------------------------------------------------


def test_a_hostile_transcript_is_cleaned_and_kept_as_text(recording):
    hostile = (
        '<img src=x onerror="alert(1)">\x1b[31m red\x00 \u202eflow\u202c \ud800 line\r\nbreak\x7f\u2066!\u2069 '
        "\U0001f468\u200d\U0001f469 아이"
    )
    with FakeWhisper(reply=lambda fields: verbose(hostile)) as server:
        heard = transcribe(recording, f"http:{server.root}")
    # markup is kept as the characters it is (the console shows it as text); every control character is gone
    assert heard.text == '<img src=x onerror="alert(1)"> [31m red flow line break ! \U0001f468\u200d\U0001f469 아이'
    heard.text.encode("utf-8")  # no lone surrogate left: a database would refuse it


def test_a_long_transcript_is_cut_at_a_word(recording):
    with FakeWhisper(reply=lambda fields: verbose("la " * 100_000)) as server:
        heard = transcribe(recording, f"http:{server.root}")
    assert len(heard.text) <= MAX_TRANSCRIPT and heard.text.endswith("la…")


@pytest.mark.parametrize(
    "body, problem",
    [
        (b'{"text": "' + b"a" * (1 << 20) + b'"}', "sent a reply of over 1024 KB: not a transcript"),
        (b"[" * 100_000 + b"]" * 100_000, "sent no transcript"),  # nested past the parser's depth
        (b'{"text": "a red ball", "segments": [{"avg_logprob": NaN}]}', "sent no transcript"),  # strict JSON
        (b'["the man"]', "sent no transcript"),
        (b'{"text": 5}', "sent no transcript"),
        (b'{"text": null, "segments": []}', "sent no transcript"),
        (b'{"error": "failed to read WAV file"}', "sent no transcript .*failed to read WAV file"),  # whisper.cpp
        (b"\xff\xfe\x00garbage\x1b[2J", "sent no transcript"),
        (b"", "sent no transcript"),
    ],
)
def test_a_malformed_or_oversized_reply_is_no_transcript_with_its_reason(body, problem, recording):
    with FakeWhisper(reply=lambda fields: (200, body)) as server:
        with pytest.raises(TranscriptionError, match=problem) as failed:
            transcribe(recording, f"http:{server.root}")
    assert len(str(failed.value)) < 500 and "\x1b" not in str(failed.value) and "\x00" not in str(failed.value)


def test_an_error_reply_is_quoted_short_and_clean(recording):
    body = b"\x1b]0;owned\x07" + b"x" * 5000
    with FakeWhisper(reply=lambda fields: (503, body)) as server:
        with pytest.raises(TranscriptionError) as failed:
            transcribe(recording, f"http:{server.root}")
    message = str(failed.value)
    assert message.startswith(f"{server.root}/v1/audio/transcriptions answered HTTP 503: ]0;owned x")
    assert len(message) < 400 and "\x1b" not in message and "\x07" not in message


# --- word error rate ------------------------------------------------------------------------------------------


def test_word_error_rate_counts_substitutions_deletions_and_insertions():
    from vtt.transcribe.accuracy import edit_distance, word_error_rate, words

    assert words("The man's dog, DON'T run!  'quoted'") == ["the", "man's", "dog", "don't", "run", "quoted"]
    assert word_error_rate("the man opened the red door", "The man opened the red door.") == 0
    assert word_error_rate("the man opened the red door", "the man opened a red door") == pytest.approx(1 / 6)
    assert word_error_rate("the man opened the red door", "the man opened door") == pytest.approx(2 / 6)
    assert word_error_rate("a red ball", "a big red ball") == pytest.approx(1 / 3)
    assert word_error_rate("the man opened the red door", "all my all") == pytest.approx(6 / 6)  # 3 subs, 3 dels
    assert word_error_rate("no", "oh no no no") == 3  # insertions: above 1
    assert word_error_rate("i like my dog", "") == 1
    assert edit_distance(["a", "b", "c"], ["b", "c", "d"]) == 2  # one deletion, one insertion
    assert edit_distance([], ["x", "y"]) == 2
    with pytest.raises(ValueError, match="the reference has no word"):
        word_error_rate(" ... ", "anything")
