"""The benchmark's reference: a bare python-socketio ASGI server under uvicorn, votes kept in memory.

What a team would get by dropping Flask and the database: no durability, no rules beyond "a known
token", no event log.  It speaks the slice of vtt's protocol the load uses (token auth, a snapshot
on connect, ``sheet`` and ``vote`` with acks, host moves that broadcast a status to everyone, and
the live vote count to the host), so the same load client drives both servers.

    python bench/reference_server.py --port 5099 --tokens FILE   (one juror token per line)

``GET /healthz`` answers ``{"ok": true, "max_stall_ms": ...}``: the longest the event loop was late
for its 10 ms heartbeat since the last ``/healthz?reset=1``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

import socketio
import uvicorn

HEARTBEAT = 0.01


def make_app(tokens: set[str], host_cookie: str) -> socketio.ASGIApp:
    sio = socketio.AsyncServer(async_mode="asgi", cors_allowed_origins=[], logger=False, engineio_logger=False)
    who: dict[str, str] = {}  # Socket.IO sid -> token or "host"
    votes: dict[tuple[str, int, int], dict] = {}
    sheets: dict[tuple[str, int, str], dict] = {}
    state = {"version": 0, "phase": "lobby", "round": 0, "stall": 0.0, "pending_count": False}

    @sio.event
    async def connect(sid, environ, auth):
        auth = auth or {}
        if auth.get("role") == "host":
            if host_cookie not in environ.get("HTTP_COOKIE", ""):
                raise socketio.exceptions.ConnectionRefusedError({"code": "not_host", "message": "sign in"})
            who[sid] = "host"
            await sio.enter_room(sid, "host")
        elif auth.get("token") in tokens:
            who[sid] = auth["token"]
            await sio.enter_room(sid, "juror")
        else:
            raise socketio.exceptions.ConnectionRefusedError({"code": "bad_token", "message": "no such token"})
        await sio.emit("snapshot", {"state_version": state["version"], "status": _status(state)}, to=sid)

    @sio.event
    async def disconnect(sid, *_reason):
        who.pop(sid, None)

    @sio.on("vote")
    async def vote(sid, data):
        token = who.get(sid)
        if token is None or state["phase"] != "voting":
            return {"ok": False, "error": {"code": "vote_closed", "message": "voting is closed"}}
        votes[(token, data["round"], data.get("slot", 1))] = data
        state["version"] += 1
        state["pending_count"] = True  # the count goes to the host once per loop pass, as vtt's once per batch
        return {"ok": True, "state_version": state["version"]}

    @sio.on("sheet")
    async def sheet(sid, data):
        token = who.get(sid)
        if token is None:
            return {"ok": False, "error": {"code": "not_connected", "message": "connect first"}}
        for line in data.get("lines") or [data]:
            sheets[(token, line["question"], line["alias"])] = line
        state["version"] += 1
        return {"ok": True, "state_version": state["version"]}

    @sio.on("host")
    async def host(sid, data):
        if who.get(sid) != "host":
            return {"ok": False, "error": {"code": "not_allowed", "message": "host only"}}
        action = data["action"]
        if action == "open_vote":
            state["round"] += 1
            state["phase"] = "voting"
        elif action == "close_vote":
            state["phase"] = "vote_closed"
        state["version"] += 1
        await sio.emit("status", {**_status(state), "state_version": state["version"]})
        in_round = sum(1 for _token, number, _slot in votes if number == state["round"])
        return {"ok": True, "state_version": state["version"], "votes_in_round": in_round, "sheets": len(sheets)}

    async def count_to_host() -> None:
        while True:
            await asyncio.sleep(0)
            if state["pending_count"]:
                state["pending_count"] = False
                voted = len({token for token, number, _slot in votes if number == state["round"]})
                await sio.emit(
                    "votes",
                    {"round": state["round"], "voted": voted, "jurors": len(tokens), "state_version": state["version"]},
                    to="host",
                )
            await asyncio.sleep(0.005)

    async def heartbeat() -> None:
        while True:
            before = time.perf_counter()
            await asyncio.sleep(HEARTBEAT)
            state["stall"] = max(state["stall"], time.perf_counter() - before - HEARTBEAT)

    async def healthz(scope, receive, send):
        if scope["type"] == "lifespan":
            message = await receive()
            if message["type"] == "lifespan.startup":
                asyncio.get_running_loop().create_task(heartbeat())
                asyncio.get_running_loop().create_task(count_to_host())
                await send({"type": "lifespan.startup.complete"})
                await receive()
                await send({"type": "lifespan.shutdown.complete"})
            return
        body = json.dumps({"ok": True, "max_stall_ms": round(state["stall"] * 1000, 1)}).encode()
        if b"reset=1" in scope.get("query_string", b""):
            state["stall"] = 0.0
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})

    return socketio.ASGIApp(sio, other_asgi_app=healthz)


def _status(state: dict) -> dict:
    return {"phase": state["phase"], "round": state["round"]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--tokens", required=True, help="a file with one juror token per line")
    parser.add_argument("--host-cookie", default="host=yes", help="the cookie the host's handshake must carry")
    args = parser.parse_args()
    with open(args.tokens, encoding="utf-8") as handle:
        tokens = {line.strip() for line in handle if line.strip()}
    uvicorn.run(
        make_app(tokens, args.host_cookie),
        host="127.0.0.1",
        port=args.port,
        log_level="warning",
        ws="websockets",
        lifespan="on",
        backlog=8192,
        timeout_keep_alive=30,
    )


if __name__ == "__main__":
    main()
