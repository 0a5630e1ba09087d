"""docs/protocol.md publishes the JSON Schemas the server validates with: they must not drift apart."""

from __future__ import annotations

from pathlib import Path

from tests.support.live import published_schemas
from vtt.protocol.messages import json_schemas

DOC = Path(__file__).resolve().parent.parent / "docs" / "protocol.md"


def test_the_published_schemas_are_the_ones_the_server_uses():
    assert published_schemas(DOC) == json_schemas(), "regenerate: python -m vtt.protocol.messages"


def test_every_host_move_is_documented():
    from vtt.protocol.vocabulary import HOST_ACTIONS

    text = DOC.read_text(encoding="utf-8")
    assert [name for name in HOST_ACTIONS if f"`{name}`" not in text] == []
