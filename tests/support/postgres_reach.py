"""What the tests reach on PostgreSQL, counted over one run: every HTTP route (each method of each rule of the app's
url map), every socket event the server handles and every engine action, answered without a server error by an app
of the test process on a PostgreSQL database.

``install`` (tests/conftest.py, at the start of the run) hooks every app made on PostgreSQL; the last test of the
run (tests/test_postgres_reach.py) lists what no test reached.  An app served in a process of its own (the
``served`` fixture, the cluster tests) is not counted: what it serves is reached in this process too.
"""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask, request, request_finished

from vtt.engine import answers, displaced, flow, jury, page_reports, voting  # noqa: F401  (they declare the actions)
from vtt.engine.actions import ACTIONS
from vtt.protocol.messages import CLIENT_MESSAGES
from vtt.realtime.hub import Hub

# The socket events: connecting and leaving, the reads anyone may ask (handlers.attach), and the client messages.
SOCKET_EVENTS = ("connect", "disconnect", "snapshot", "clock", "door", *CLIENT_MESSAGES)
SKIPPED_METHODS = {"HEAD", "OPTIONS"}  # answered by Flask itself for every route

WHOLE_RUN = pytest.StashKey[bool]()  # whether this run collected the whole suite, nothing left out
LAST = "test_postgres_reach.py::test_every_route_socket_event_and_action_was_reached_on_postgresql"

REACHED: dict[str, set[str]] = {"route": set(), "event": set(), "action": set()}
ROUTES: set[str] = set()  # every route of the apps made (on any database), as "METHOD /rule"
_installed = False


def on_postgresql(url: str) -> bool:
    return url.startswith("postgresql")


def route_names(app: Flask) -> set[str]:
    rules = app.url_map.iter_rules()
    return {f"{method} {rule.rule}" for rule in rules for method in sorted(rule.methods - SKIPPED_METHODS)}


def unreached() -> dict[str, list[str]]:
    """What no test reached on PostgreSQL so far: routes, socket events, actions."""
    every = {"route": ROUTES, "event": set(SOCKET_EVENTS), "action": set(ACTIONS)}
    return {kind: sorted(every[kind] - REACHED[kind]) for kind in every}


def install() -> None:
    """Count from now on, in this process (once)."""
    global _installed
    if _installed:
        return
    _installed = True
    request_finished.connect(_request_finished)
    made = Hub.__init__

    def counted_hub(hub: Hub, app: Flask, *args: Any, **kwargs: Any) -> None:
        made(hub, app, *args, **kwargs)
        ROUTES.update(route_names(app))
        if on_postgresql(hub.database_url):
            _count_hub(hub)

    Hub.__init__ = counted_hub


def _request_finished(app: Flask, response, **_extra: Any) -> None:
    rule = request.url_rule
    if rule is not None and response.status_code < 500 and on_postgresql(app.config.get("DATABASE_URL", "")):
        REACHED["route"].add(f"{request.method} {rule.rule}")


def _count_hub(hub: Hub) -> None:
    """Wrap this hub's funnels: every action (sockets, views, paper and imports) goes through ``act``; every socket
    event but connect and disconnect is acknowledged through ``outbox.record_ack``."""
    act, record_ack, arrive, depart = hub.act, hub.outbox.record_ack, hub.arrive, hub.depart

    def counted_act(session_id: int, actor, name: str, args: dict, client_key: str | None = None, **how) -> dict:
        reply = act(session_id, actor, name, args, client_key, **how)
        if reply.get("ok"):
            REACHED["action"].add(name)
        return reply

    def counted_ack(sid: str, audience: str, event: str, reply: dict) -> dict:
        if reply.get("ok"):
            REACHED["event"].add(event)
        return record_ack(sid, audience, event, reply)

    def counted_arrive(sid: str, who) -> None:
        arrive(sid, who)
        REACHED["event"].add("connect")

    def counted_depart(sid: str):
        who = depart(sid)
        if who is not None:
            REACHED["event"].add("disconnect")
        return who

    hub.act, hub.outbox.record_ack, hub.arrive, hub.depart = counted_act, counted_ack, counted_arrive, counted_depart
