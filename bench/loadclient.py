"""A lean Socket.IO client for load: Engine.IO 4 / Socket.IO 5 text frames over one aiohttp websocket.

python-socketio's client costs the load process more CPU per message than the server spends on it,
and load and server share this machine's two cores.  This speaks only what a juror needs: connect
with an ``auth`` object, answer pings, emit with an acknowledgement, count events.  Both servers
of the benchmark (vtt and the bare reference) get exactly the same client.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from typing import Any

import aiohttp


class Refused(Exception):
    pass


class LeanClient:
    def __init__(
        self,
        http: aiohttp.ClientSession,
        url: str,
        auth: dict[str, Any],
        headers: dict | None = None,
        session: str | None = None,
    ):
        """``session``: the join code to name on the URL (``?session=``), as the pages do, so that nginx routes the
        connection to the process owning that session."""
        self.http, self.auth, self.headers = http, auth, headers or {}
        self.ws_url = url.replace("http://", "ws://", 1).rstrip("/") + "/socket.io/?EIO=4&transport=websocket"
        if session is not None:
            self.ws_url += f"&session={session}"
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self._acks: dict[int, asyncio.Future] = {}
        self._ids = itertools.count(1)
        self._reader: asyncio.Task | None = None
        self.events: dict[str, int] = {}
        self.first_seen: dict[tuple[str, Any], float] = {}  # (event, a key of its payload) -> when it first came
        self.watch: dict[str, str] = {}  # event -> payload field whose values' arrival times are kept
        self.snapshot: dict[str, Any] | None = None

    async def connect(self, timeout: float = 30.0) -> None:
        self.ws = await self.http.ws_connect(
            self.ws_url,
            headers=self.headers,
            timeout=aiohttp.ClientWSTimeout(ws_close=timeout),
            autoping=True,
            max_msg_size=0,
        )
        opening = await asyncio.wait_for(self.ws.receive_str(), timeout)
        if not opening.startswith("0"):
            raise Refused(f"unexpected Engine.IO open packet {opening[:80]!r}")
        await self.ws.send_str("40" + json.dumps(self.auth))
        while True:
            reply = await asyncio.wait_for(self.ws.receive_str(), timeout)
            if reply.startswith("40"):
                break
            if reply.startswith("44"):
                raise Refused(reply[2:])
            if reply == "2":
                await self.ws.send_str("3")
            else:
                self._dispatch(reply)
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        assert self.ws is not None
        async for message in self.ws:
            if message.type != aiohttp.WSMsgType.TEXT:
                break
            data = message.data
            if data == "2":
                await self.ws.send_str("3")
            else:
                self._dispatch(data)
        for future in self._acks.values():
            if not future.done():
                future.set_exception(ConnectionError("the connection closed"))

    def _dispatch(self, data: str) -> None:
        if data.startswith("43"):  # an acknowledgement: 43<id>[reply]
            bracket = data.index("[")
            future = self._acks.pop(int(data[2:bracket]), None)
            if future is not None and not future.done():
                future.set_result(json.loads(data[bracket:])[0])
        elif data.startswith("42"):
            event, *rest = json.loads(data[2:])
            self.events[event] = self.events.get(event, 0) + 1
            payload = rest[0] if rest else None
            if event == "snapshot":
                self.snapshot = payload
            key_field = self.watch.get(event)
            if key_field is not None and isinstance(payload, dict):
                self.first_seen.setdefault((event, payload.get(key_field)), time.monotonic())

    async def call(self, event: str, payload: Any, timeout: float = 30.0) -> Any:
        assert self.ws is not None
        number = next(self._ids)
        future = asyncio.get_running_loop().create_future()
        self._acks[number] = future
        await self.ws.send_str(f"42{number}" + json.dumps([event, payload]))
        try:
            return await asyncio.wait_for(future, timeout)
        finally:
            self._acks.pop(number, None)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self._reader is not None:
            self._reader.cancel()
