"""What each credential reaches in each phase of a session: the one table that docs/security.md prints ("Who can
reach what") and tests/test_reach.py asserts, by walking every HTTP route of the app and every socket role with
each credential in each phase.

A credential is what a person holds; a phase is before the session (its lobby), during it (a round under way, an
earlier round revealed) and after it (finished).  Pages anyone can open (the login form, static files, clips,
``/healthz``) are no one's reach and are left out.
"""

from __future__ import annotations

CREDENTIALS = (
    "host login",
    "host token",
    "player link",
    "juror link",
    "displaced link",
    "open link",
    "join code",
    "stage link",
)
PHASES = ("before", "during", "after")

# What can be reached, and how the walk sees it.
REACHES = {
    "host": "every host page and form (`/host/...`: names, kinds, ages, answers, exports) and the host's connection",
    "host socket": "the host's connection (control of the session, names and kinds); not the host's pages",
    "stage": "the stage screen (`/stage/CODE?key=KEY`) and its connection, which shows the door code",
    "player": "the player's own page and connection (`/play/TOKEN`)",
    "juror": "the live juror's own page and connection (`/jury/TOKEN`)",
    "judge": "the displaced juror's page and connection: the finished session's rounds to judge (before the "
    "finish the page only says to come back), and once every round is voted the way back to the crowd platform "
    "with their completion code (`/jury/TOKEN/complete`)",
    "open link": "the open link's page, whose Start makes a displaced juror (`/jury/open/TOKEN`)",
    "join page": "the open join's page and its QR code (`/join/CODE`; after the finish it only says so)",
    "join": "open join, when the host allows it: a nickname makes a live juror (over the page or the socket)",
    "identities": "on connecting, it is sent who was who in every revealed round: the AI's alias, each human "
    "player's age and stage (the host: names and kinds from the start)",
}

_HOST = frozenset({"host", "stage", "identities", "join page", "join"})
_CODE = frozenset({"join page", "join"})
_AFTER_CODE = frozenset({"join page"})  # finished: the join page says so, and nobody joins

# REACH[credential][phase]: what the credential reaches (the sessions of the walk allow open join).
REACH: dict[str, dict[str, frozenset[str]]] = {
    "host login": {"before": _HOST, "during": _HOST, "after": _HOST - {"join"} | {"join page"}},
    "host token": {phase: frozenset({"host socket", "stage", "identities"}) for phase in PHASES},
    "player link": {phase: frozenset({"player"}) for phase in PHASES},
    "juror link": {
        "before": frozenset({"juror"}),
        "during": frozenset({"juror", "identities"}),
        "after": frozenset({"juror", "identities"}),
    },
    "displaced link": {"before": frozenset(), "during": frozenset(), "after": frozenset({"judge"})},
    "open link": {"before": frozenset(), "during": frozenset(), "after": frozenset({"open link"})},
    # during: the juror an open join makes is told the rounds the room has seen revealed, like every live juror;
    # after the finish nobody joins, and the join code opens nothing that names who was who
    "join code": {"before": _CODE, "during": _CODE | {"identities"}, "after": _AFTER_CODE},
    "stage link": {
        "before": frozenset({"stage"}) | _CODE,
        "during": frozenset({"stage", "identities"}) | _CODE,
        "after": frozenset({"stage", "identities"}) | _AFTER_CODE,
    },
}


def markdown_table() -> str:
    """The table as docs/security.md prints it: a row per credential, a column per phase."""
    lines = ["| credential | before | during | after |", "|---|---|---|---|"]
    for credential in CREDENTIALS:
        cells = [", ".join(sorted(REACH[credential][phase], key=list(REACHES).index)) or "nothing" for phase in PHASES]
        lines.append(f"| {credential} | " + " | ".join(cells) + " |")
    lines += ["", *(f"- **{name}**: {meaning}" for name, meaning in REACHES.items())]
    return "\n".join(lines)
