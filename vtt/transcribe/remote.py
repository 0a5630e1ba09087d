"""``http:URL``: an OpenAI-compatible ``/v1/audio/transcriptions`` server (a local Whisper, ...).

The recording goes as it is (the server decodes it), named by what is in it (``answer.webm``,
``answer.mp4``): OpenAI's API tells the format by the file name.  A multipart form with ``file``,
``model``, ``language`` and ``response_format=verbose_json``; the reply's ``{"text": ..., "segments": [...]}``,
whose segments' ``avg_logprob`` (the mean log probability of their tokens) give the confidence
``exp(mean avg_logprob)``, weighted by each segment's tokens when it lists them; a reply without usable segments
has no confidence, its text still counts.  A server that refuses ``verbose_json`` with HTTP 400 (OpenAI's
gpt-4o-transcribe models answer only ``json``) is asked once more with ``json``.

The reply is not trusted: over MAX_REPLY bytes, not JSON (read with :mod:`vtt.protocol.strict_json`: NaN,
1e999 or nesting thousands deep is refused), or without a text, it is no transcript (an error that says which); the
text is cleaned and capped by the caller (:mod:`vtt.transcribe.text`).  ``timeout`` bounds the exchange as a whole
(both requests when there are two): the call is :func:`vtt.model_calls.http.post`, whose timeout and size limit are
the juries' and the judge's.  Proxy settings are not used (the server is expected on the host's own network).
"""

from __future__ import annotations

import base64
import math
import time
import uuid
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ..model_calls.endpoints import is_http_url, public_url, transcriptions_endpoint
from ..model_calls.http import BodyTooLong, CallFailed, TimedOut, post
from ..protocol import strict_json
from .audio import kind_of
from .errors import TranscriptionError, without_credentials
from .text import shown as shown_reply

MAX_REPLY = 1 << 20  # a transcript of a spoken answer is a few hundred bytes


def check_url(url: str) -> None:
    if not is_http_url(url):
        raise TranscriptionError(f"http: {without_credentials(url)!r} is not an http:// or https:// URL")


def describe(endpoint: str, model: str) -> str:
    return f"http:{public_url(endpoint)} model {model}"


def form(fields: dict[str, str], file_name: str, mime: str, data: bytes) -> tuple[bytes, str]:
    """A ``multipart/form-data`` body of ``fields`` and the file: the body and its content type."""
    boundary = f"vtt-{uuid.uuid4().hex}"
    parts = []
    for name, value in fields.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{file_name}"\r\n'
        f"Content-Type: {mime}\r\n\r\n".encode()
        + data
        + b"\r\n"
    )
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def transcription(
    path: Path, url: str, language: str, timeout: float, api_key: str | None, model: str
) -> tuple[str, float | None, str]:
    """The server's transcript of the recording, its confidence (0 to 1, None when the server gives none), and the
    backend's description."""
    endpoint = transcriptions_endpoint(url)
    where = public_url(endpoint)
    extension, mime = kind_of(path)  # not a recording: said here, not by the server
    try:
        data = path.read_bytes()
    except OSError as error:
        raise TranscriptionError(f"cannot read the recording {path.name}: {error.strerror or error}") from None
    headers = {"Accept": "application/json", "Connection": "close"}
    parts = urlsplit(endpoint)
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    elif parts.username is not None:  # http://user:password@host/...
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        headers["Authorization"] = f"Basic {base64.b64encode(pair.encode()).decode()}"
    deadline = time.monotonic() + timeout  # for both requests together
    for response_format in ("verbose_json", "json"):
        fields = {"model": model, "language": language, "response_format": response_format}
        body, headers["Content-Type"] = form(fields, f"answer.{extension}", mime, data)
        status, raw = _post(endpoint, body, headers, deadline, timeout)
        if status != 400:
            break
    if status != 200:
        excerpt = shown_reply(raw)
        raise TranscriptionError(f"{where} answered HTTP {status}" + (f": {excerpt}" if excerpt else ""))
    text, confidence = reply_of(raw, where)
    return text, confidence, describe(endpoint, model)


def reply_of(raw: bytes, where: str) -> tuple[str, float | None]:
    """The text and the confidence of a server's JSON reply; TranscriptionError when it holds no text."""
    try:
        reply = strict_json.loads(raw)
    except ValueError:  # not JSON, not UTF-8, or JSON the strict reader refuses
        reply = None
    text = reply.get("text") if isinstance(reply, dict) else None
    if not isinstance(text, str):
        raise TranscriptionError(f'{where} sent no transcript (JSON {{"text": ...}}): {shown_reply(raw)}')
    return text, _confidence(reply.get("segments"))


def _confidence(segments: object) -> float | None:
    """``exp`` of the segments' mean ``avg_logprob``, each weighted by its token count (1 when not listed)."""
    if not isinstance(segments, list):
        return None
    total = weight = 0.0
    for segment in segments:
        logprob = segment.get("avg_logprob") if isinstance(segment, dict) else None
        if isinstance(logprob, bool) or not isinstance(logprob, int | float) or not math.isfinite(logprob):
            return None  # one segment without a figure: no figure for the whole
        tokens = segment.get("tokens")
        count = len(tokens) if isinstance(tokens, list) and tokens else 1
        total, weight = total + min(logprob, 0.0) * count, weight + count
    return math.exp(total / weight) if weight else None


def _post(endpoint: str, body: bytes, headers: dict[str, str], deadline: float, timeout: float) -> tuple[int, bytes]:
    try:
        return post(endpoint, body, headers, deadline=deadline, timeout=timeout, max_bytes=MAX_REPLY)
    except TimedOut:
        raise TranscriptionError(f"{public_url(endpoint)} gave no transcript within {timeout:g} s") from None
    except BodyTooLong:
        where = public_url(endpoint)
        raise TranscriptionError(f"{where} sent a reply of over {MAX_REPLY // 1024} KB: not a transcript") from None
    except CallFailed as failure:
        raise TranscriptionError(str(failure)) from None
