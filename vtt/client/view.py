"""A client's picture of a live session, kept as ``docs/protocol.md`` says: a snapshot, then events.

The bots and ``vtt agent`` use it. The pages keep theirs with ``static/js/view.js``: the same rules, one module
per language, both run over the cases of ``tests/data/view_cases.json`` (the version rules are in
``docs/protocol.md``, "Versions and gaps"; what each event carries, in "Events from the server").
"""

from __future__ import annotations

from typing import Any

VERSION_KEYS = ("state_version", "prev_version")
VOTE_FIELDS = ("round", "slot", "alias", "confidence", "reason")
SHEET_FIELDS = ("question", "alias", "note", "human_likeness", "looks_like_ai")


def _bare(payload: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in payload.items() if key not in VERSION_KEYS}


def _pick(source: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {key: source.get(key) for key in keys}


def _replace_round(rows: list[dict[str, Any]] | None, row: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per round: a round's later tally or reveal (``finish`` reveals again) replaces its earlier one."""
    return [item for item in rows or [] if item["round"] != row["round"]] + [row]


def apply_own(data: dict[str, Any], payload: dict[str, Any]) -> None:
    """A person's own accepted action (``mine``), put into the view as its ack put it there."""
    fields = {key: value for key, value in payload.items() if key != "action"}
    action = payload.get("action")
    status = data.get("status")
    if action == "vote" and status is not None and fields.get("round") == status.get("round"):
        votes = [vote for vote in data.get("votes") or [] if vote["slot"] != fields.get("slot")]
        data["votes"] = [*votes, _pick(fields, VOTE_FIELDS)]
    elif action == "sheet":
        lines = fields.get("lines") or [fields]
        keys = {(line.get("question"), line.get("alias")) for line in lines}
        kept = [row for row in data.get("sheet") or [] if (row["question"], row["alias"]) not in keys]
        data["sheet"] = kept + [_pick(line, SHEET_FIELDS) for line in lines]
    elif action == "answer":
        data["answer"] = {
            "question": fields.get("question"),
            "text": fields.get("text") or "",
            "choice": fields.get("choice"),
        }


class View:
    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        self.known = -1  # the version last applied; -1 until the first snapshot
        self.stale = True  # until the first snapshot, and after a missed event until the next one
        self.revoked: str | None = None  # why this link no longer works (``link_revoked``)
        self._from_snapshot = True
        self._newest = -1  # the newest version this view has held: a snapshot older than it is behind

    def snapshot(self, snapshot: dict[str, Any]) -> None:
        """Replace the view, even with an older one: a snapshot and its version go together (``playing`` is known
        from snapshots only). One older than a version already held was read before events that arrived first:
        the view is stale, and its owner asks again (no later event may come to show the gap)."""
        self.data = dict(snapshot)
        self.known = snapshot["state_version"]
        self.stale = self.known < self._newest
        self._newest = max(self._newest, self.known)
        self._from_snapshot = True

    def event(self, name: str, payload: Any) -> bool:
        """Apply one server event (a snapshot too); True when it was applied."""
        if name == "link_revoked":
            self.revoked = (payload.get("reason") if isinstance(payload, dict) else None) or name
            return True
        if not isinstance(payload, dict):
            return False
        if name == "snapshot":
            self.snapshot(payload)
            return True
        if self.known < 0:
            return False  # before the first snapshot there is no view to change
        if name == "presence":  # not versioned: the latest wins
            self.data["connected"] = payload
            return True
        if name == "mine":  # not versioned: applied as it comes
            apply_own(self.data, payload)
            return True
        version, previous = payload.get("state_version"), payload.get("prev_version") or 0
        if type(version) not in (int, float):  # as JSON numbers go: not a bool
            return False
        if version < self.known:
            return False  # old: the snapshot already holds it
        if version == self.known and (self._from_snapshot or previous != self.known):
            return False  # one action can send several events with one version: only a sibling of the last applies
        if previous > self.known:
            self.stale = True  # something was missed: the owner asks for a snapshot
            return False
        self.known = version
        self._newest = max(self._newest, version)
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
        # a player's answer, and a spoken player's recording, were to the question before
        self.data.update(question=question, answer=None, recorded=None)

    def _on_answers(self, shown: dict[str, Any]) -> None:
        revealed = [item for item in self.data.get("revealed") or [] if item["question"] != shown["question"]]
        self.data["revealed"] = [*revealed, shown]

    def _on_answer(self, answer: dict[str, Any]) -> None:  # the host's: an answer as it arrives (or edited)
        answers = self.data["answers"] = self.data.get("answers") or {}
        question = str(answer["question"])
        rows = [row for row in answers.get(question) or [] if row["player"]["id"] != answer["player"]["id"]]
        answers[question] = [*rows, answer]

    def _on_agent(self, report: dict[str, Any]) -> None:  # the host's: an AI player's agent's last report
        agents = self.data["agents"] = self.data.get("agents") or {}
        agents[str(report["player"])] = {key: value for key, value in report.items() if key != "player"}

    def _on_notice(self, report: dict[str, Any]) -> None:  # the host's: a read-aloud page's word on its voice
        notices = self.data["notices"] = self.data.get("notices") or {}
        notices[str(report["player"])] = {key: value for key, value in report.items() if key != "player"}

    def _on_readiness(self, check: dict[str, Any]) -> None:  # the host's: a person's latest device check
        readiness = self.data["readiness"] = self.data.get("readiness") or {"players": {}, "jurors": {}}
        if check["role"] == "juror":
            readiness.setdefault("jurors", {})[check["juror"]] = check
        else:
            readiness.setdefault("players", {})[str(check["player"])] = check

    def _on_recording(self, take: dict[str, Any]) -> None:  # the host's: a spoken answer's latest recording
        recordings = self.data["recordings"] = self.data.get("recordings") or {}
        question = str(take["question"])
        rows = [row for row in recordings.get(question) or [] if row["player"] != take["player"]]
        recordings[question] = [*rows, take]

    def _on_tells(self, tells: dict[str, Any]) -> None:  # the host's: the closed question's answers with tells
        self.data["tells"] = tells

    def _on_juror(self, juror: dict[str, Any]) -> None:  # the host's: a juror joined openly, or was removed
        rows = self.data.get("jurors") or []
        before = next((row for row in rows if row["label"] == juror["label"]), {})
        self.data["jurors"] = [row for row in rows if row["label"] != juror["label"]] + [{**before, **juror}]

    def _on_votes(self, count: dict[str, Any]) -> None:  # the host's and the stage's live count
        self.data["votes"] = count

    def _on_tally(self, tally: dict[str, Any]) -> None:
        self.data["tallies"] = _replace_round(self.data.get("tallies"), tally)

    def _on_identities(self, shown: dict[str, Any]) -> None:
        self.data["identities"] = _replace_round(self.data.get("identities"), shown)

    # --- reading it ------------------------------------------------------------------------------

    @property
    def status(self) -> dict[str, Any]:
        return self.data.get("status") or {}

    @property
    def phase(self) -> str | None:
        return self.status.get("phase")
