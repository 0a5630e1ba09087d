"""vtt.transcribe: a spoken answer (WebM/Opus as MediaRecorder sends it, MP4/AAC from Safari) as a suggested text.

The speech is made by Debian's espeak-ng (required when CI=true), encoded with PyAV as a browser would; the
``http:`` backend talks to a fake OpenAI-compatible server in a thread.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from email import policy
from email.parser import BytesParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import av
import numpy as np
import pytest

from tests.audio_helpers import FORMATS, PHRASE, encode, said_webm, tone
from tests.conftest import free_port
from vtt.transcribe import Transcript, TranscriptionError, check, language_code, transcribe
from vtt.transcribe import audio as audio_module
from vtt.transcribe.audio import kind_of, pcm16k
from vtt.transcribe.remote import endpoint_of, public_url


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
    assert endpoint_of(url) == endpoint


def test_the_backend_is_described_without_credentials():
    url = "https://ana:secret@example.org:8443/v1?token=secret"
    assert public_url(endpoint_of(url)) == "https://example.org:8443/v1/audio/transcriptions"
    assert check(f"http:{url}", language="ko", model="large-v3") == (
        "http:https://example.org:8443/v1/audio/transcriptions model large-v3"
    )


# --- http: an OpenAI-compatible server ------------------------------------------------------------------------


class FakeWhisper:
    """An OpenAI-compatible transcriptions server in a thread: ``mode`` is ok, error, slow, trickle or garbage."""

    def __init__(self, mode: str = "ok", text: str = "i like to play with my dog"):
        self.mode, self.text = mode, text
        self.requests: list[dict] = []
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                message = BytesParser(policy=policy.HTTP).parsebytes(
                    f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode() + body
                )
                fields, files = {}, {}
                for part in message.iter_parts():
                    name = part.get_param("name", header="content-disposition")
                    if part.get_filename():
                        files[name] = (part.get_filename(), part.get_content_type(), part.get_payload(decode=True))
                    else:
                        fields[name] = part.get_content()
                server.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "fields": fields, "files": files}
                )
                if server.mode == "slow" and server.release.wait(10):
                    return  # the client has given up: nobody to answer
                if server.mode == "trickle":  # headers at once, then a byte every 0.2 s
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", "200")
                    self.end_headers()
                    for _ in range(200):
                        if server.release.wait(0.2):
                            return
                        try:
                            self.wfile.write(b" ")
                            self.wfile.flush()
                        except OSError:  # the client has given up
                            return
                    return
                status, reply = {
                    "ok": (200, json.dumps({"text": server.text}).encode()),
                    "slow": (200, json.dumps({"text": server.text}).encode()),
                    "error": (500, b'{"error": {"message": "CUDA out of memory"}}'),
                    "garbage": (200, b"<html>a proxy's page</html>"),
                }[server.mode]
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.root = f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> FakeWhisper:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def recording(tmp_path) -> Path:
    return encode(tone(0.5), tmp_path / "answer.webm", "webm", "libopus")


def test_http_sends_the_recording_as_a_form_and_reads_the_text(recording):
    with FakeWhisper(text="  un chat sur la table \n") as server:
        heard = transcribe(recording, f"http:{server.root}/v1", language="fr-CA", api_key="sk-test", timeout=10)
    assert heard.text == "un chat sur la table"
    assert heard.backend == f"http:{server.root}/v1/audio/transcriptions model whisper-1"
    assert heard.language == "fr" and heard.seconds > 0
    (request,) = server.requests
    assert request["path"] == "/v1/audio/transcriptions"
    assert request["headers"]["Authorization"] == "Bearer sk-test"
    assert request["fields"] == {"model": "whisper-1", "language": "fr", "response_format": "json"}
    assert request["files"] == {"file": ("answer.webm", "audio/webm", recording.read_bytes())}


def test_http_at_the_server_root_with_credentials_in_the_url(tmp_path):
    safari = encode(tone(0.5), tmp_path / "0a1b2c", "mp4", "aac")  # kept under an id, without an extension
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
