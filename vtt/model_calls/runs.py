"""A run of calls to a model: its settings, one call's outcome, the calls made concurrently, and what the run did.

* :class:`ModelSettings`: an OpenAI-compatible chat-completions endpoint, the model it serves, and how to ask it
  (temperature, timeout, ``concurrency`` calls at once, ``max_failures`` failures in a row before the run stops).
* :func:`ask_model`: one call, its reply read by the caller's reader, as a :class:`Said`: a value, a reply without
  one (stored, asked again next run), or a failure (nothing stored).
* :func:`call_all`: every call, ``concurrency`` at a time, each outcome told to ``heard`` as it comes; ``heard``
  returns False to stop (calls under way finish; no new one starts).
* :class:`RunSummary`: what a run did; :meth:`RunSummary.heard` counts an outcome and says when ``max_failures``
  calls in a row have failed (the endpoint is down: hundreds of timeouts would tell nothing more).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

from .endpoints import EndpointError, chat_target, public_url
from .http import MAX_BODY, CallFailed, UnreadableBody, chat_body, chat_completion
from .replies import UnreadReply, kept

A = TypeVar("A")
S = TypeVar("S", bound="Said")


@dataclass(frozen=True)
class ModelSettings:
    """Where and how to ask: an OpenAI-compatible chat-completions endpoint and the model it serves."""

    url: str  # the endpoint, /chat/completions added when missing
    model: str
    temperature: float | None = 0.0
    api_key: str | None = None
    timeout: float = 60.0
    concurrency: int = 4
    max_tokens: int | None = None
    max_failures: int = 5

    @classmethod
    def from_spec(cls, spec: str, model: str | None, **options: Any) -> ModelSettings:
        """``http:URL`` (the agents' spelling) or a bare URL; the error of :meth:`refused` saying which setting."""
        try:
            endpoint, model = chat_target(spec, model)
        except EndpointError as error:
            raise cls.refused(error.message, error.setting) from None
        settings = cls(endpoint, model, **options)
        if settings.concurrency < 1:
            raise cls.refused("at least 1 call at a time", "concurrency")
        if settings.timeout <= 0:
            raise cls.refused("more than 0 seconds", "timeout")
        settings.check()
        return settings

    @classmethod
    def refused(cls, message: str, setting: str) -> Exception:
        """The error a setting that cannot be used raises (a caller's own), saying which setting."""
        return EndpointError(message, setting)

    def check(self) -> None:
        """The caller's own options, checked once the settings are made (raises :meth:`refused`'s error)."""

    @property
    def endpoint(self) -> str:
        return public_url(self.url)

    def body(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """A call's request body: the model, ``messages``, and the temperature and max_tokens when set."""
        return chat_body(self.model, messages, self.temperature, self.max_tokens)


@dataclass(frozen=True)
class Said:
    """What one call gave: a value read from the reply, or a reply without one (``problem``), or a failure
    (``failed``: nothing to store)."""

    ask: Any
    value: Any = None
    reply: str = ""  # as stored (replies.kept)
    problem: str | None = None
    failed: bool = False


async def ask_model(
    http: Any,
    settings: ModelSettings,
    body: dict[str, Any],
    ask: Any,
    read: Callable[[str], Any],
    said: type[S] = Said,
) -> S:
    """One call with ``body``, its reply read by ``read`` (UnreadReply when it holds nothing to use): ``said`` of
    the value, of a reply without one, or of a failure."""
    try:
        reply, _data = await chat_completion(http, settings.url, body, settings.api_key, settings.timeout, MAX_BODY)
    except UnreadableBody as unreadable:
        return said(ask, None, kept(unreadable.start), problem=str(unreadable))
    except CallFailed as failure:
        return said(ask, problem=str(failure), failed=True)
    try:
        return said(ask, read(reply), kept(reply))
    except UnreadReply as unread:
        return said(ask, None, kept(reply), problem=str(unread))


async def call_all(
    asks: Iterable[A],
    concurrency: int,
    ask_one: Callable[[A], Awaitable[S]],
    heard: Callable[[S], bool],
    take: Callable[[A], bool] | None = None,
) -> None:
    """Every ask, ``concurrency`` at a time; ``heard`` is told each outcome as it comes and returns False to stop
    the run (calls under way finish; no new one starts); ``take``, when given, is asked first whether this run
    makes the call (False: it is left)."""
    queue: asyncio.Queue[A] = asyncio.Queue()
    for ask in asks:
        queue.put_nowait(ask)
    stop = asyncio.Event()

    async def worker() -> None:
        while not stop.is_set():
            try:
                ask = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            if take is not None and not take(ask):
                continue
            if not heard(await ask_one(ask)):
                stop.set()

    await asyncio.gather(*(worker() for _ in range(min(concurrency, queue.qsize()) or 1)))


@dataclass
class RunSummary:
    """What a run did, the part every run of calls shares (a caller adds its own counts)."""

    asked: int = 0  # calls made this run
    unread: int = 0  # replies without a value (stored; asked again next run)
    failed: int = 0  # calls that failed (nothing stored)
    stopped: str | None = None  # why the run stopped early
    first_failure: str | None = None  # the first call that failed, and why
    problems: list[str] = field(default_factory=list)  # the first few failures and unread replies
    _in_a_row: int = field(default=0, init=False, repr=False, compare=False)  # failures in a row, not reported

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if not f.name.startswith("_")}

    def heard(self, said: Said, where: str, max_failures: int) -> bool:
        """Count one call's outcome (``where``: which call, for the messages); False once ``max_failures`` calls in
        a row have failed. A caller counts its values itself."""
        self.asked += 1
        if said.failed:
            self.failed += 1
            self._in_a_row += 1
            self.first_failure = self.first_failure or f"{where}: {said.problem}"
        else:
            self._in_a_row = 0
            self.unread += said.value is None
        if said.problem and len(self.problems) < 5:
            self.problems.append(f"{where}: {said.problem}")
        if self._in_a_row < max_failures:
            return True
        if self.stopped is None:  # calls already under way may fail too: the first reason stands
            self.stopped = f"{self._in_a_row} calls in a row failed; the last: {said.problem}"
        return False

    def nothing_done(self, done: int, what: str) -> str | None:
        """Why the run did nothing although it asked (``done``: the values it read; ``what``: the sentence's start):
        calls failed and no reply had a value; None otherwise."""
        if not self.failed or done:
            return None
        return f"{what}: {self.failed} calls failed; the first: {self.first_failure}"
