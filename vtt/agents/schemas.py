"""The JSON Schemas of the messages an agent sends, as the server validates them (``docs/agents.md`` publishes them).

``python -m vtt.agents.schemas`` prints them: the connection's ``auth``, ``answer`` and ``agent``
(the ``snapshot`` request has no payload).  They are the server's own (:mod:`vtt.protocol.messages`),
picked, not copied, so they cannot drift apart.
"""

from __future__ import annotations

from typing import Any

AGENT_MESSAGES = ("auth", "answer", "agent")


def agent_schemas() -> dict[str, dict[str, Any]]:
    from ..protocol.messages import json_schemas

    every = json_schemas()
    return {name: every[name] for name in AGENT_MESSAGES}


if __name__ == "__main__":
    import json

    print(json.dumps(agent_schemas(), indent=2, ensure_ascii=False))
