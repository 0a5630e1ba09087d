"""Who may join a session openly (with its join code and a nickname), over HTTP or the socket alike.

Three defences, each against a different stuffer (docs/security.md, "Open join"):

* **Rates.**  At most ``JOINS_PER_ADDRESS`` open joins a minute from one address and ``JOINS_PER_SESSION`` into
  one session, counted in the rate limiter's storage (Redis when several processes serve).  A venue's phones
  often share one address (its Wi-Fi's NAT), so an open join that gives the door code is not counted per
  address: the per-address limit only holds back joins from outside the hall.
* **The door code** (``join_door``): four digits the stage screen shows (and puts in its QR code), changing
  every ``DOOR_SECONDS``; the code of the window before still works.  Derived from the installation's secret,
  so every process agrees without storing anything; only the host and the stage (opened with the stage key) see it.
  A remote script that has the join code does not have the door code.
* **The cap** (``open_join_cap``): at most this many open joins in all (the engine's rule), and the host
  removes a juror or closes join from the console.

An open displaced link (a finished session judged again online) has its cap, and its arrivals are counted per
address (``ARRIVALS_PER_ADDRESS``): :func:`admit_arrival`.
"""

from __future__ import annotations

import hashlib
import hmac
import time

from flask import current_app
from limits import parse

from ..engine.actions import Refusal
from ..extensions import limiter

JOINS_PER_ADDRESS = parse("20/minute")
JOINS_PER_SESSION = parse("300/minute")
ARRIVALS_PER_ADDRESS = parse("20/minute")  # arrivals at an open displaced link (vtt.juries.displaced.arrive)
DOOR_SECONDS = 120


def _digest(secret_key: str, *parts: object) -> bytes:
    message = "\0".join(str(part) for part in parts).encode()
    return hmac.new(secret_key.encode(), message, hashlib.sha256).digest()


def door_code(secret_key: str, session_id: int, at: float | None = None) -> str:
    """The session's door code at ``at`` (seconds since the epoch; default now)."""
    window = int((time.time() if at is None else at) // DOOR_SECONDS)
    return f"{int.from_bytes(_digest(secret_key, 'door', session_id, window)[:4], 'big') % 10_000:04d}"


def door_expires(at: float | None = None) -> float:
    """When the door code shown now changes (seconds since the epoch)."""
    now = time.time() if at is None else at
    return (now // DOOR_SECONDS + 1) * DOOR_SECONDS


def door_valid(given: str | None, secret_key: str, session_id: int, at: float | None = None) -> bool:
    """``given`` is this window's door code or the last one's (a phone that scanned just before it changed)."""
    now = time.time() if at is None else at
    given = (given or "").strip()
    return len(given) == 4 and any(
        hmac.compare_digest(given, door_code(secret_key, session_id, moment)) for moment in (now, now - DOOR_SECONDS)
    )


def stage_key(secret_key: str, session_id: int) -> str:
    """The stage screen's credential, which its link carries (``/stage/CODE?key=KEY``, the host console's stage link):
    without it (or the host's login) no stage opens, as a finished session's stage names who was the AI; the join
    code alone is public in the room (docs/security.md, "Who can reach what")."""
    return _digest(secret_key, "stage", session_id).hex()[:24]


def stage_key_valid(given: str | None, key: str) -> bool:
    """Whether ``given`` is the stage ``key`` (:func:`stage_key`), compared in constant time."""
    return bool(given) and hmac.compare_digest(given.encode(), key.encode())


def session_route(secret_key: str, session_id: int) -> str:
    """What a displaced juror's page names on the Socket.IO URL (``?session=``) so that nginx routes a session's
    displaced jurors together: not the join code, which a displaced juror is never given (it is public in the room,
    and once led to the stage)."""
    return "d" + _digest(secret_key, "route", session_id).hex()[:15]


def admit(address: str, session_id: int, door: str | None) -> bool:
    """Count one open-join attempt; raises :class:`Refusal` ``too_many_joins`` over a rate.  Returns whether the
    door code was given (the engine requires it when the session says so)."""
    door_ok = door_valid(door, current_app.config["SECRET_KEY"], session_id)
    rates = limiter.limiter
    if not rates.hit(JOINS_PER_SESSION, "open-join-session", str(session_id)):
        raise Refusal("too_many_joins", "too many jurors are joining this session right now: try again in a minute")
    if not door_ok and not rates.hit(JOINS_PER_ADDRESS, "open-join-address", address):
        raise Refusal(
            "too_many_joins",
            "too many joins from your network: try again in a minute, or enter the door code shown on the stage screen",
        )
    return door_ok


def admit_arrival(address: str) -> None:
    """Count one arrival at an open displaced link from ``address``; raises :class:`Refusal` ``too_many_joins`` over
    its rate (a crowd's workers come from addresses of their own: one address making jurors fast is a script)."""
    if not limiter.limiter.hit(ARRIVALS_PER_ADDRESS, "displaced-arrival-address", address):
        raise Refusal("too_many_joins", "too many arrivals from your network: try again in a minute")
