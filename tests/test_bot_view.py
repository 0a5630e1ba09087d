"""The client view rules (docs/protocol.md, "Versions and gaps" and "Events from the server") as the bots and
``vtt agent`` apply them: vtt/client/view.py over the cases of tests/data/view_cases.json, which
tests/js/view_cases.test.mjs runs through the pages' static/js/view.js too.

A case: ``start``, a snapshot applied first (none: a view that has had no snapshot); ``events``, ``[name,
payload]`` pairs given in order to ``View.event`` (snapshots too); ``expect``: ``applied``, what each call
returned; ``known``, ``stale``, ``revoked`` when given; ``data``, top-level keys of the view and their whole
values; ``absent``, keys the view must not have.
"""

import json
from pathlib import Path

import pytest

from vtt.client.view import View

CASES = json.loads((Path(__file__).parent / "data" / "view_cases.json").read_text(encoding="utf-8"))
MISSING = object()


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_view_case(case):
    view = View()
    if "start" in case:
        view.snapshot(case["start"])
    applied = [view.event(name, payload) for name, payload in case["events"]]
    expect = case["expect"]
    assert applied == expect["applied"]
    for attribute in ("known", "stale", "revoked"):
        if attribute in expect:
            assert getattr(view, attribute) == expect[attribute], attribute
    for key, value in expect.get("data", {}).items():
        assert view.data.get(key, MISSING) == value, key
    assert [key for key in expect.get("absent", []) if key in view.data] == []


def test_the_cases_cover_every_event_the_rules_know():
    named = {name for case in CASES for name, _ in case["events"]}
    rules = {name.removeprefix("_on_") for name in vars(View) if name.startswith("_on_")}
    assert rules | {"snapshot", "presence", "mine", "link_revoked"} <= named
