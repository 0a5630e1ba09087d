"""A client's picture of a live session, kept as ``docs/protocol.md`` says: a snapshot, then events.

The bots use it; it is also the reference for what a page or an agent must do with what the
server sends (the rules are in ``docs/protocol.md``, "Versions and gaps").
"""

from __future__ import annotations

from typing import Any

VERSION_KEYS = ("state_version", "prev_version")


def _bare(payload: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in payload.items() if key not in VERSION_KEYS}


class View:
    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        self.known = -1
        self.stale = True  # until the first snapshot
        self._from_snapshot = True

    def snapshot(self, snapshot: dict[str, Any]) -> None:
        self.data = dict(snapshot)
        self.known = snapshot["state_version"]
        self.stale = False
        self._from_snapshot = True

    def event(self, name: str, payload: Any) -> bool:
        """Apply one server event; True when it changed the view."""
        if not isinstance(payload, dict) or "state_version" not in payload:
            return False
        version, previous = payload["state_version"], payload.get("prev_version", 0)
        if version < self.known:
            return False  # old: the snapshot already holds it
        if version == self.known and (self._from_snapshot or previous != self.known):
            return False  # one action can send several events with one version: only a sibling of the last applies
        if previous > self.known:
            self.stale = True  # something was missed: the owner asks for a snapshot
            return False
        self.known = version
        self._from_snapshot = False
        apply = getattr(self, f"_on_{name}", None)
        if apply is not None:
            apply(_bare(payload))
        return True

    # --- what each event changes ----------------------------------------------------------------

    def _on_status(self, status: dict[str, Any]) -> None:
        self.data["status"] = status

    def _on_round(self, card: dict[str, Any]) -> None:
        self.data.update(round=card, revealed=[], sheet=[], votes=[], question=None)

    def _on_question(self, question: dict[str, Any]) -> None:
        self.data["question"] = question

    def _on_answers(self, shown: dict[str, Any]) -> None:
        revealed = [item for item in self.data.get("revealed", []) if item["question"] != shown["question"]]
        self.data["revealed"] = [*revealed, shown]

    def _on_answer(self, answer: dict[str, Any]) -> None:  # the host's: an answer as it arrives (or edited)
        rows = self.data.setdefault("answers", {}).setdefault(str(answer["question"]), [])
        rows[:] = [row for row in rows if row["player"]["id"] != answer["player"]["id"]] + [answer]

    def _on_agent(self, report: dict[str, Any]) -> None:  # the host's: an AI player's agent's last report
        self.data.setdefault("agents", {})[str(report["player"])] = {
            key: value for key, value in report.items() if key != "player"}

    def _on_votes(self, count: dict[str, Any]) -> None:  # the host's and the stage's live count
        self.data["votes"] = count

    def _on_tally(self, tally: dict[str, Any]) -> None:
        self.data.setdefault("tallies", []).append(tally)

    # --- reading it ------------------------------------------------------------------------------

    @property
    def status(self) -> dict[str, Any]:
        return self.data.get("status") or {}

    @property
    def phase(self) -> str | None:
        return self.status.get("phase")
