"""A spoken player's session: a young child who answers aloud, and a take uploaded as the player's page sends it."""

from __future__ import annotations

import io

CHILD = {"name": "Mina", "kind": "human", "age": 4, "stage": "pre-operational", "answer_modes": ["spoken"]}
PLAYERS = [CHILD, {"name": "Grace", "kind": "human", "age": 31}, {"name": "Agent", "kind": "ai"}]


def upload(client, token: str, question: int, data: bytes, *, action: str = "take-1", mime="audio/webm", **form):
    """The player's take ``data`` posted to the recording endpoint as the page sends it (ended 250 ms ago)."""
    fields = {"id": action, "question": str(question), "duration_ms": "1000", "ended_ms_ago": "250", **form}
    fields["audio"] = (io.BytesIO(data), "answer.webm", mime)
    return client.post(f"/play/{token}/recording", data=fields, content_type="multipart/form-data")
