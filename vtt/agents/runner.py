"""``vtt agent``'s player: connect with a player token, answer each question once, until the session finishes.

The agent is a client of the live protocol like the player page (``docs/agents.md``): the bots'
:class:`~vtt.client.connection.Connection` reopens a dropped socket by itself and resends an action with
the same id until it is acknowledged, and its :class:`~vtt.client.view.View` applies the snapshot and
the events by the versioning rules.  On top of that:

* every question it plays is answered with the id ``agent-<question id>``, so a resend after a
  dropped connection, or the same answer from a restarted process, is a duplicate the server
  recognises, never a second answer; a question whose snapshot already holds this player's answer
  (sent before a restart, or typed by the host) is skipped;
* the backend starts as soon as the question is shown (while the clip plays) and may take
  ``--timeout`` seconds, never past the deadline (less a second to send);
* it tells the host how it is doing with ``agent`` events: ``ready`` once connected, ``working``
  when a question arrives, ``answered``, or ``error`` with a sentence (the session goes on: the host
  can enter the answer);
* one line per question on stderr: the qid, the backend, and the answer or the error.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from ..client.connection import Connection, Ledger, Refused
from .backends import Asked, Backend, BackendError, Reply, Services, fit
from .delay import HumanTyping

SEND_MARGIN = 1.0  # seconds kept before the deadline to send the answer
LOOK_EVERY = 0.5  # seconds between looks at the view when nothing happens
ANSWER_REFUSALS = frozenset({"answering_closed", "wrong_question", "not_playing", "invalid", "not_ai", "host_answered"})
NOT_AI = "the token is a human player's: an agent plays with an AI player's token"
PLAYING_PHASES = ("clip", "answering")


class AgentError(RuntimeError):
    """The agent cannot play at all (refused token, unreachable server, not a player's token)."""


class Late(Exception):
    """The question moved on (answering closed, the host showed another) before the answer was sent."""


class AgentConnection(Connection):
    """A :class:`Connection` whose waiters each see every change (``news`` is replaced each time it is set)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.news = asyncio.Event()

    async def _on_event(self, event: str, payload: Any = None) -> None:
        await super()._on_event(event, payload)
        self.pulse()

    async def resync(self) -> None:
        await super().resync()
        self.pulse()

    def pulse(self) -> None:
        news, self.news = self.news, asyncio.Event()
        news.set()


def stderr_log(line: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {line}", file=sys.stderr, flush=True)


class Agent:
    def __init__(
        self,
        server: str,
        token: str,
        backend: Backend,
        *,
        timeout: float = 60.0,
        typing: HumanTyping | None = None,
        log: Callable[[str], None] = stderr_log,
        route: str | None = None,
    ):
        self.server = server.rstrip("/")
        self.token, self.backend, self.timeout, self.typing, self.log = token, backend, timeout, typing, log
        self.connection = AgentConnection(
            self.server, {"token": token}, Ledger(), f"agent-{secrets.token_hex(4)}", route=route
        )
        self.handled: set[int] = set()  # question ids this process played (or found answered)
        self.tasks: set[asyncio.Task] = set()  # a question's task ends by itself when the question moves on
        self.seen_round: Any = object()
        self.sitting_out: set[int] = set()
        self._statuses: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        self._status_warned = False
        self.fatal: str | None = None  # set when playing on makes no sense (a human player's token)

    @property
    def view(self):
        return self.connection.view

    # --- the session --------------------------------------------------------------------------------

    async def run(self) -> None:
        """Play until the session has finished; :class:`AgentError` when it cannot play at all."""
        services = Services()
        if self.backend.needs_http():
            import aiohttp

            from .frames import Clips

            services.http = aiohttp.ClientSession()
            services.clips = Clips(services.http)
        self.backend.attach(services)
        sender = None
        try:
            await self._connect()
            sender = asyncio.create_task(self._send_statuses())
            self.status("ready", f"ready: {self.backend.describe()}")
            await self._play()
            self.log("the session has finished")
        finally:
            for task in list(self.tasks):
                task.cancel()
            if sender is not None:
                try:
                    await asyncio.wait_for(self._statuses.join(), 3)
                except TimeoutError:
                    pass
                sender.cancel()
            await self.connection.close()
            if services.http is not None:
                await services.http.close()
                services.clips.close()

    async def _connect(self) -> None:
        import socketio

        try:
            await self.connection.open()
        except Refused as refused:
            raise AgentError(
                f"the server refused the token: {refused.error.get('message')} ({refused.error.get('code')})"
            ) from None
        except socketio.exceptions.ConnectionError as failure:
            raise AgentError(f"cannot connect to {self.server}: {failure}") from None
        give_up = time.monotonic() + 5
        while self.view.stale and time.monotonic() < give_up:  # the first snapshot says whose token this is
            await self._wait(self.connection.news, 0.1)
        self._check_role()
        self.log(f"connected to {self.server} as a player; backend {self.backend.describe()}")

    def _check_role(self) -> None:
        role = self.view.data.get("role")
        if not self.view.stale and role not in (None, "player"):
            raise AgentError(f"the token is a {role}'s, not a player's: give an AI player's token")

    async def _play(self) -> None:
        while True:
            news = self.connection.news
            if self.fatal:
                raise AgentError(self.fatal)
            if self.view.revoked:
                raise AgentError(f"this link no longer works ({self.view.revoked}): ask the host for the new one")
            if not self.view.stale:
                self._check_role()
                if self.view.phase == "finished":
                    return
                await self._step()
            await self._wait(news, LOOK_EVERY)

    async def _step(self) -> None:
        data, status = self.view.data, self.view.status
        if status.get("round") != self.seen_round:  # a new round: the snapshot says whether this player plays
            self.seen_round = status.get("round")
            await self.connection.resync()
            return
        question = data.get("question")
        if not question or self.view.phase not in PLAYING_PHASES:
            return
        number = question["id"]
        if number in self.handled:
            return
        if not data.get("playing"):
            if status.get("round") not in self.sitting_out:
                self.sitting_out.add(status.get("round"))
                self.log(f"round {status.get('round')}: this player sits it out")
            return
        self.handled.add(number)
        if (data.get("answer") or {}).get("question") == number:
            self.log(
                f"qid={question.get('qid')} question={number}: already answered (before a restart, or by "
                "the host): skipped"
            )
            return
        task = asyncio.create_task(self._question(question))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _wait(self, news: asyncio.Event, timeout: float) -> None:
        try:
            await asyncio.wait_for(news.wait(), timeout)
        except TimeoutError:
            pass

    # --- one question ---------------------------------------------------------------------------------

    async def _question(self, question: dict[str, Any]) -> None:
        began = time.monotonic()
        label = f"qid={question.get('qid')} question={question['id']}"
        kind = self.backend.kind
        try:
            asked = Asked(question, self.server)
            backend = self.backend.route(asked)
            kind = backend.kind
            self.status("working", f"question {self._name(question)}: asking {backend.describe()}")
            reply = await self.ask(backend, question)
            await self._until_answering(question)
            await self.type_out(question, reply, began)
            ack = await self._send(question, reply)
        except (BackendError, Late) as problem:
            self.log(f"{label} backend={kind} error={json.dumps(str(problem), ensure_ascii=False)}")
            self.status("error", f"question {self._name(question)}: {problem}")
            return
        except asyncio.CancelledError:
            self.log(f'{label} backend={kind} error="stopped: the session has finished"')
            raise
        if ack is None:
            return
        shown = reply.shown(list(question.get("choices") or []))
        extra = f" note={json.dumps(reply.note, ensure_ascii=False)}" if reply.note else ""
        again = " (already saved: a duplicate)" if ack.get("duplicate") else ""
        self.log(f"{label} backend={kind} answer={shown}{again} in {time.monotonic() - began:.1f} s{extra}")
        self.status("answered", f"question {self._name(question)}: {shown}")

    async def ask(self, backend: Backend, question: dict[str, Any]) -> Reply:
        """``backend``'s reply to ``question``, given no longer than ``--timeout`` and the time left before the
        deadline (less the sending margin); a :class:`BackendError` when there is none in time."""
        limit = self.timeout
        left = self.time_left()
        if left is not None:
            limit = min(limit, left - SEND_MARGIN)
        if limit <= 0:
            raise BackendError("no time left before the deadline")
        asked = Asked(question, self.server, self.view.status.get("deadline"), timeout=limit)
        work = asyncio.create_task(self.backend.answer(asked))  # a composite routes it to ``backend`` itself
        give_up = time.monotonic() + self.timeout
        try:
            while True:
                done, _ = await asyncio.wait({work}, timeout=0.25)
                if done:
                    break
                self._check_still_open(question)
                left = self.time_left()
                if time.monotonic() > give_up:
                    raise BackendError(f"{backend.describe()} gave no answer within --timeout {self.timeout:g} s")
                if left is not None and left < SEND_MARGIN:
                    raise BackendError(f"{backend.describe()} gave no answer before the deadline")
        finally:
            if not work.done():
                work.cancel()
        try:
            return work.result()
        except BackendError:
            raise
        except TimeoutError:
            raise BackendError(f"{backend.describe()} gave no answer in time") from None
        except Exception as error:
            raise BackendError(f"{backend.describe()} failed: {type(error).__name__}: {error}") from None

    def _check_still_open(self, question: dict[str, Any]) -> None:
        if self.view.stale:
            return  # reconnecting: the deadline still bounds the wait
        current = self.view.data.get("question") or {}
        if current.get("id") != question["id"]:
            raise Late("the host moved on to another question before the answer was ready")
        if self.view.phase not in PLAYING_PHASES:
            raise Late(f"answering closed before the answer was ready (phase {self.view.phase})")

    async def _until_answering(self, question: dict[str, Any]) -> None:
        while True:
            news = self.connection.news
            if not self.view.stale:
                self._check_still_open(question)
                if self.view.phase == "answering":
                    return
            await self._wait(news, LOOK_EVERY)

    async def type_out(self, question: dict[str, Any], reply: Reply, began: float) -> None:
        """Wait as a person would type ``reply`` (from ``began``), never past the deadline less the sending margin;
        :class:`Late` when the host moves on or closes answering meanwhile."""
        if self.typing is None:
            return
        wanted = self.typing.seconds(question["id"], reply.text or "", reply.choice is not None)
        wait = wanted - (time.monotonic() - began)
        left = self.time_left()
        if left is not None:
            wait = min(wait, left - SEND_MARGIN - 0.5)
        until = time.monotonic() + wait
        while (remaining := until - time.monotonic()) > 0:  # the host may close answering meanwhile
            news = self.connection.news
            await self._wait(news, min(remaining, LOOK_EVERY))
            self._check_still_open(question)

    async def _send(self, question: dict[str, Any], reply: Reply) -> dict[str, Any] | None:
        number = question["id"]
        if (self.view.data.get("answer") or {}).get("question") == number:
            self.log(f"qid={question.get('qid')} question={number}: already answered: not sent again")
            return None
        provenance = dict(reply.provenance)
        if self.typing is not None:
            provenance["settings"] = {**provenance.get("settings", {}), **self.typing.describe()}
        message = {"id": f"agent-{number}", "question": number, **reply.content(), "provenance": fit(provenance)}
        ack = await self.connection.send("answer", message, expected=ANSWER_REFUSALS)
        if ack is None:
            error = self.connection.last_error or {}
            if error.get("code") == "not_ai":
                self.fatal = NOT_AI
                self.connection.pulse()
            raise BackendError(
                f"the server did not take the answer: {error.get('message', 'no reply')} ({error.get('code', '?')})"
            )
        return ack

    # --- the host's view of the agent ---------------------------------------------------------------------

    def status(self, status: str, message: str) -> None:
        """Tell the host (an ``agent`` event; sent in order, each until acknowledged)."""
        self._statuses.put_nowait((status, message[:1000]))

    async def _send_statuses(self) -> None:
        while True:
            status, message = await self._statuses.get()
            try:
                ack = await self.connection.send(
                    "agent",
                    {"status": status, "message": message},
                    record=False,
                    expected=frozenset({"unknown_event", "invalid", "not_ai"}),
                )
                if ack is None and (self.connection.last_error or {}).get("code") == "not_ai":
                    self.fatal = NOT_AI
                    self.connection.pulse()
                elif ack is None and not self._status_warned:
                    self._status_warned = True
                    error = self.connection.last_error or {}
                    self.log(
                        f"the server did not take the agent's status for the host: {error.get('message')} "
                        f"({error.get('code')})"
                    )
            finally:
                self._statuses.task_done()

    # --- time -----------------------------------------------------------------------------------------------

    def time_left(self) -> float | None:
        """Seconds before the deadline (None when there is none: the clip is still playing)."""
        deadline = self.view.status.get("deadline")
        if not deadline or self.view.phase != "answering":
            return None
        moment = datetime.fromisoformat(deadline.replace("Z", "+00:00"))
        return (moment - datetime.now(UTC)).total_seconds()

    @staticmethod
    def _name(question: dict[str, Any]) -> str:
        return str(question.get("qid") or f"#{question['id']}")
