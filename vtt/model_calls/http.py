"""The HTTP call to a model, with its timeout and its size limit, and the failures it raises.

* :func:`chat_completion` (async, an aiohttp session): an OpenAI-compatible chat-completions call, as the AI players,
  the AI jurors and the judge make it. ``timeout`` bounds the call as a whole.
* :func:`post` (blocking, the standard library's ``http.client``): one POST, as the transcription client makes it
  (it runs in a worker or off the event loop, with no asyncio loop of its own). ``deadline`` bounds the exchange as a
  whole: connecting, sending, the reply's headers and each read of its body get only the time then left, so a server
  that trickles its reply is cut off too. Proxy settings are not used.

Both read no more of a body than ``max_bytes`` (and one byte): a longer reply with HTTP 200 is :class:`BodyTooLong`,
a longer error page is its start. A body is JSON read with :mod:`vtt.protocol.strict_json` (by the caller for
:func:`post`). Every failure is a :class:`CallFailed` whose message names the endpoint without credentials.
"""

from __future__ import annotations

import http.client
import ssl
import time
from typing import Any
from urllib.parse import urlsplit

from ..protocol import strict_json
from .endpoints import public_url

MAX_BODY = 1 << 20  # bytes of a reply's body read (a juror's verdict, a judge's score, a transcript: far less)
MAX_KEPT_BODY = 1 << 16  # characters of an unreadable body handed back (a caller keeps its start)


class CallFailed(RuntimeError):
    """A call that brought no reply to read (no answer, an HTTP error, no chat completion); ``str(error)`` is the
    sentence for the host, naming the endpoint without credentials."""


class TimedOut(CallFailed):
    """No reply within the call's timeout."""


class UnreadableBody(CallFailed):
    """A reply the endpoint did send but that cannot be read: a body whose JSON the strict reader refuses, or one
    longer than the caller reads. ``start`` is its text as read: a juror or the judge keeps it as an unread reply;
    a player's question goes unanswered."""

    def __init__(self, message: str, start: str):
        super().__init__(message)
        self.start = start


class BodyTooLong(UnreadableBody):
    """A reply whose body is longer than the caller reads; ``start`` is what was read."""


def chat_body(
    model: str, messages: list[dict[str, Any]], temperature: float | None = None, max_tokens: int | None = None
) -> dict[str, Any]:
    """A chat-completions request body: ``temperature`` and ``max_tokens`` only when given."""
    body: dict[str, Any] = {"model": model, "messages": messages}
    if temperature is not None:
        body["temperature"] = temperature
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    return body


def _excerpt(raw: str) -> str:
    return " ".join(raw.split())[:300]


async def chat_completion(
    http: Any, url: str, body: dict[str, Any], api_key: str | None, timeout: float, max_bytes: int | None = None
) -> tuple[str, dict[str, Any]]:
    """POST ``body`` to the chat-completions endpoint ``url`` with the aiohttp session ``http``: the first choice's
    text and the whole reply; CallFailed naming the endpoint (without credentials) on any failure (TimedOut after
    ``timeout`` seconds), BodyTooLong when the reply's body is longer than ``max_bytes`` (no more than that is read),
    UnreadableBody when its JSON is refused (NaN, Infinity, a number such as 1e999, nesting thousands deep)."""
    import aiohttp

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    where = public_url(url)
    try:
        async with http.post(url, json=body, headers=headers, timeout=aiohttp.ClientTimeout(total=timeout)) as response:
            raw = await (response.text() if max_bytes is None else _body_within(response, max_bytes, where))
            if response.status != 200:
                raise CallFailed(f"{where} answered HTTP {response.status}: {_excerpt(raw)}")
    except (aiohttp.ClientError, TimeoutError) as failure:
        if isinstance(failure, TimeoutError):
            raise TimedOut(f"{where} gave no reply within {timeout:.0f} s") from None
        raise CallFailed(f"cannot reach {where}: {type(failure).__name__} {failure}".strip()) from None
    try:
        data = strict_json.loads(raw)
    except strict_json.JsonRefused as refused:
        raise UnreadableBody(f"{where} sent a body this reader refuses: {refused}", raw[:MAX_KEPT_BODY]) from None
    except ValueError:
        raise CallFailed(f"{where} sent no chat completion: {_excerpt(raw)}") from None
    try:
        return _message_text(data["choices"][0]["message"].get("content")), data
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise CallFailed(f"{where} sent no chat completion: {_excerpt(raw)}") from None


async def _body_within(response: Any, max_bytes: int, where: str) -> str:
    received = bytearray()
    async for chunk in response.content.iter_chunked(1 << 16):
        received += chunk
        if len(received) > max_bytes:
            return _too_long(response.status, bytes(received), max_bytes, where).decode("utf-8", "replace")
    return received.decode(response.charset or "utf-8", "replace")


def _too_long(status: int, received: bytes, max_bytes: int, where: str) -> bytes:
    """The start of a body longer than ``max_bytes``: an error page's start says enough; a reply is refused."""
    start = received[:max_bytes]
    if status != 200:
        return start
    message = f"{where} sent a reply longer than {max_bytes:,} bytes: not read"
    raise BodyTooLong(message, start.decode("utf-8", "replace"))


def _message_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    raise TypeError("no content")


def post(
    url: str, body: bytes, headers: dict[str, str], *, deadline: float, timeout: float, max_bytes: int = MAX_BODY
) -> tuple[int, bytes]:
    """POST ``body`` to ``url`` before ``deadline`` (``time.monotonic()``; ``timeout`` is named in the message):
    the reply's status and body; TimedOut, CallFailed or BodyTooLong (module docstring) otherwise."""
    parts = urlsplit(url)
    where = public_url(url)
    target = parts.path + (f"?{parts.query}" if parts.query else "")

    def left() -> float:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        return remaining

    connecting = max(deadline - time.monotonic(), 0.001)
    if parts.scheme == "https":
        connection: http.client.HTTPConnection = http.client.HTTPSConnection(
            parts.hostname, parts.port, timeout=connecting, context=ssl.create_default_context()
        )
    else:
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=connecting)
    try:
        connection.connect()
        sock = connection.sock  # kept: getresponse() lets go of it when the server closes
        sock.settimeout(left())
        connection.request("POST", target, body=body, headers=headers)
        sock.settimeout(left())
        response = connection.getresponse()
        raw = b""
        while len(raw) <= max_bytes and not response.isclosed():  # over max_bytes: stop reading
            sock.settimeout(left())
            chunk = response.read1(65536)  # what one wait brings: a trickle cannot outlast the timeout
            if not chunk:
                break
            raw += chunk
    except TimeoutError:  # socket.timeout is TimeoutError
        raise TimedOut(f"{where} gave no reply within {timeout:g} s") from None
    except ssl.SSLError as error:
        raise CallFailed(f"cannot reach {where}: TLS {error.reason or error}") from None
    except (OSError, http.client.HTTPException) as error:
        what = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise CallFailed(f"cannot reach {where}: {type(error).__name__} {what}".strip()) from None
    finally:
        connection.close()
    if len(raw) > max_bytes:
        raw = _too_long(response.status, raw, max_bytes, where)
    return response.status, raw
