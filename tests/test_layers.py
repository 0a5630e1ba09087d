"""Layers that must stay light, checked in a fresh interpreter (this one has long since imported everything).

- The session engine is pure code: importing it loads no web stack, no database layer and no pandas.
- The protocol (message words, limits and schemas) is neutral ground: it imports nothing of the server.
- Clients (the protocol client, the bots, ``vtt agent``) depend on the protocol, never on the server.
- Calling a model (:mod:`vtt.model_calls`) is shared by the AI players, the AI jurors, the judge and the
  transcription client: it imports none of them, nothing of the server, and aiohttp only when a call is made.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.paths import ROOT

ENGINE = (
    "vtt.engine.rules",
    "vtt.engine.state",
    "vtt.engine.audiences",
    "vtt.engine.tells",
    "vtt.kinds",
    "vtt.protocol.text",
    "vtt.protocol.vocabulary",
)
CLIENTS = (
    "vtt.client.connection",
    "vtt.client.view",
    "vtt.client.cast",
    "vtt.bots.simulate",
    "vtt.bots.roles",
    "vtt.agents.runner",
    "vtt.agents.backends",
    "vtt.agents.schemas",
    "vtt.protocol.messages",
    "vtt.protocol.strict_json",
    "vtt.model_calls.endpoints",
    "vtt.model_calls.http",
    "vtt.model_calls.replies",
    "vtt.model_calls.runs",
)
MODEL_CALLS = tuple(name for name in CLIENTS if name.startswith("vtt.model_calls."))
ITS_CALLERS = ("vtt.agents", "vtt.juries", "vtt.judge", "vtt.transcribe", "aiohttp")
WEB_AND_DATA = ("flask", "flask_socketio", "pandas", "sqlalchemy")  # a client may use socketio's client
SERVER = (
    "vtt.engine",
    "vtt.realtime",
    "vtt.persistence",
    "vtt.models",
    "vtt.sessions",
    "vtt.views",
    "vtt.app",
    "vtt.db",
    "vtt.extensions",
    "vtt.results",
)


def loaded_after_importing(modules: tuple[str, ...]) -> dict[str, list[str]]:
    probe = (
        f"import importlib, json, sys\nfor name in {modules!r}: importlib.import_module(name)\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], check=False, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def under(loaded: list[str], roots: tuple[str, ...]) -> list[str]:
    return sorted(m for m in loaded if any(m == root or m.startswith(root + ".") for root in roots))


def test_the_engine_imports_no_web_stack_no_database_and_no_pandas():
    loaded = loaded_after_importing(ENGINE)
    assert set(ENGINE) <= set(loaded)
    assert under(loaded, WEB_AND_DATA + ("socketio", "engineio")) == []
    assert under(loaded, ("vtt.sessions", "vtt.models", "vtt.persistence", "vtt.realtime")) == []


@pytest.mark.parametrize("client", CLIENTS)
def test_a_client_module_loads_nothing_of_the_server(client):
    loaded = loaded_after_importing((client,))
    assert under(loaded, SERVER) == [], f"{client} pulls in server code"
    assert under(loaded, WEB_AND_DATA) == [], f"{client} pulls in the web stack or the database layer"


def test_calling_a_model_imports_none_of_its_callers():
    loaded = loaded_after_importing(MODEL_CALLS)
    assert under(loaded, ITS_CALLERS) == []
