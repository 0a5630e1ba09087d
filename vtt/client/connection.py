"""One bot's connection: python-socketio's asyncio client, a :class:`View`, and sends that retry until acked.

A bot behaves as the pages must: every action carries an id of its own, is resent with the same
id until the server acknowledges it (a lost ack costs a duplicate reply, never a second row), and
a dropped connection is re-opened, after which the server's snapshot says where things stand.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import socketio

from .view import View

CALL_TIMEOUT = 20.0  # seconds one try at an action may wait for its ack
GIVE_UP_AFTER = 120.0  # seconds an action is retried before it counts as an error
RETRYABLE = {"server_error", "timeout", "not_connected"}  # the server could not save it: send it again
ACTION_KINDS = {"vote": "votes", "sheet": "sheets", "answer": "answers", "host": "host"}


@dataclass
class Ledger:
    """What the bots of one run sent and had acknowledged (the server's own counts are read back apart)."""

    acked: Counter = field(default_factory=Counter)  # kind -> actions acknowledged (each id once)
    latencies: dict[str, list[float]] = field(default_factory=dict)  # kind -> seconds from first send to ack
    refused: Counter = field(default_factory=Counter)  # "kind: code" -> refusals the bot did not expect
    errors: Counter = field(default_factory=Counter)  # "kind: what" -> actions never acknowledged, failed connects
    examples: list[str] = field(default_factory=list)
    reconnects: int = 0
    refreshes: int = 0

    def error(self, kind: str, detail: str) -> None:
        self.errors[kind] += 1
        if len(self.examples) < 10:
            self.examples.append(f"{kind}: {detail}"[:300])


class Connection:
    """A socket that reopens itself; ``send`` returns the ok-reply, or None when refused or given up."""

    def __init__(
        self,
        url: str,
        auth: dict[str, Any],
        ledger: Ledger,
        id_prefix: str,
        headers: dict[str, str] | None = None,
        route: str | None = None,
    ):
        self.url, self.auth, self.headers, self.ledger = url, auth, headers or {}, ledger
        # The session's join code, named on the URL (?session=CODE) so that nginx routes every connection of one
        # session to its owner (docs/protocol.md "Routing"); a bot given a token learns it from its first snapshot.
        self.route = route or auth.get("code")
        self.id_prefix = id_prefix
        self.view = View()
        self.changed = asyncio.Event()  # set whenever the view moves
        self._sequence = 0
        self._client: socketio.AsyncClient | None = None
        self._refusal: dict[str, Any] | None = None
        self.last_error: dict[str, Any] | None = None  # why the last ``send`` returned None: {code, message}

    # --- connecting --------------------------------------------------------------------------

    async def open(self) -> None:
        client = socketio.AsyncClient(
            reconnection=True, reconnection_delay=0.2, reconnection_delay_max=2, randomization_factor=0.5
        )
        client.on("*", self._on_event)
        client.on("connect_error", self._on_connect_error)
        self._client = client
        deadline = time.monotonic() + GIVE_UP_AFTER
        while True:
            self._refusal = None
            try:
                await client.connect(
                    self.routed_url(),
                    auth=self.auth,
                    headers=self.headers,
                    transports=["websocket"],
                    wait_timeout=CALL_TIMEOUT,
                )
                return
            except socketio.exceptions.ConnectionError as failure:
                if self._refusal is not None:  # the server said no (bad token, not host, ...): final
                    raise Refused(self._refusal) from failure
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.5)

    @property
    def closed(self) -> bool:
        """Whether this connection is closed for good (never opened, closed, or revoked by the host): it does not
        reconnect."""
        return self._client is None

    def routed_url(self) -> str:
        """The server's URL, naming the session when it is known."""
        if not self.route:
            return self.url
        return f"{self.url}{'&' if '?' in self.url else '?'}{urlencode({'session': self.route})}"

    async def close(self) -> None:
        if self._client is not None:
            await self._client.disconnect()
            self._client = None

    async def refresh(self) -> None:
        """What a page reload does: drop the socket, forget the view, connect again."""
        self.ledger.refreshes += 1
        await self.close()
        self.view = View()
        await self.open()

    async def drop(self) -> None:
        """Lose the network for a moment: the websocket closes under the client, which reconnects by itself
        (a clean ``disconnect`` would not: the client takes that as meant)."""
        if self._client is not None and self._client.connected and self._client.eio.ws is not None:
            self.ledger.reconnects += 1
            await self._client.eio.ws.close()

    async def _on_connect_error(self, data: Any = None) -> None:
        refusal = data.get("data") if isinstance(data, dict) else None  # {message, data: {code, message}}
        if isinstance(refusal, dict) and "code" in refusal:
            self._refusal = refusal

    async def _on_event(self, event: str, payload: Any = None) -> None:
        if event == "link_revoked":  # removed by the host, or given a new link: this one is dead, stop reconnecting
            self.view.event(event, payload)
            self.last_error = {"code": "link_revoked", "message": self.view.revoked}
            asyncio.get_running_loop().create_task(self.close())
            self.changed.set()
            return
        if event == "snapshot":
            self.view.snapshot(payload)
            self._learn_route(payload)
            if self.view.stale:  # read before events that came first: ask again
                asyncio.get_running_loop().create_task(self.resync())
        elif not self.view.event(event, payload):
            if self.view.stale and self._client is not None and self._client.connected:
                asyncio.get_running_loop().create_task(self.resync())
            return
        self.changed.set()

    def _learn_route(self, snapshot: Any) -> None:
        """The snapshot names the session: the client's reconnects name it too (python-socketio reconnects to the
        URL it connected to: that URL is changed)."""
        named = (snapshot.get("session") or {}) if isinstance(snapshot, dict) else {}
        code = named.get("route") or named.get("code")  # a displaced juror's names its route, never the join code
        if code and code != self.route:
            self.route = code
            if self._client is not None:
                self._client.connection_url = self.routed_url()

    async def resync(self) -> None:
        """A fresh snapshot, asked for again while the one that came is older than events already applied."""
        while True:
            reply = await self.send("snapshot", None, record=False)
            if reply is None:
                return
            self.view.snapshot(reply["snapshot"])
            self.changed.set()
            if not self.view.stale:
                return

    async def wait_change(self, timeout: float) -> None:
        """Until the view moves (or ``timeout`` seconds pass)."""
        self.changed.clear()
        try:
            await asyncio.wait_for(self.changed.wait(), timeout)
        except TimeoutError:
            pass

    # --- acting --------------------------------------------------------------------------------

    def new_id(self) -> str:
        self._sequence += 1
        return f"{self.id_prefix}-{self._sequence}"

    async def send(
        self, event: str, payload: dict[str, Any] | None, *, record: bool = True, expected: frozenset[str] = frozenset()
    ) -> dict[str, Any] | None:
        """Send ``event`` until it is acknowledged; refusals in ``expected`` are not counted as surprises."""
        kind = ACTION_KINDS.get(event, event)
        message = None if payload is None else {"id": self.new_id(), **payload}
        started = time.monotonic()
        last = "no reply"
        while time.monotonic() - started < GIVE_UP_AFTER:
            client = self._client
            if client is None or not client.connected:
                await asyncio.sleep(0.2)
                continue
            try:
                reply = await client.call(event, message, timeout=CALL_TIMEOUT)
            except (TimeoutError, socketio.exceptions.SocketIOError) as failure:
                last = type(failure).__name__
                await asyncio.sleep(0.2)
                continue
            if not isinstance(reply, dict):
                last = f"unexpected reply {reply!r}"
                break
            if reply.get("ok"):
                if record:
                    self.ledger.acked[kind] += 1
                    self.ledger.latencies.setdefault(kind, []).append(time.monotonic() - started)
                return reply
            code = reply.get("error", {}).get("code")
            if code in RETRYABLE:
                last = code
                await asyncio.sleep(0.2)
                continue
            self.last_error = reply.get("error")
            if code not in expected:
                self.ledger.refused[f"{kind}: {code}"] += 1
                if len(self.ledger.examples) < 10:
                    self.ledger.examples.append(f"{kind} refused: {reply['error']}"[:300])
            return None
        self.last_error = {
            "code": "not_acknowledged",
            "message": f"no acknowledgement after {GIVE_UP_AFTER:.0f} s ({last})",
        }
        if record:
            self.ledger.error(f"{kind}: {last}", f"{message} not acknowledged after {GIVE_UP_AFTER:.0f} s")
        return None


class Refused(Exception):
    """The server refused the connection: ``args[0]`` is its ``{code, message}``."""

    @property
    def error(self) -> dict[str, Any]:
        return self.args[0]
