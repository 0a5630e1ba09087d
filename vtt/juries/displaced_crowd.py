"""An open displaced link on a crowd platform: who pressed Start, and where the end of the task sends them.

A platform (Prolific, MTurk, CloudResearch ...) opens the link with its ids in the query string; the link names the
parameters (:class:`IdParams`, Prolific's by default).  The participant id says who someone is on any device; without
one, the browser's key (the link's cookie) does.  Every id is checked here before anything is read or written: they
come from the address bar, and anyone can type one.

The completion URL is the host's, checked when the link is made (:func:`check_complete_url`): the end of the task
sends the juror there with their code in place of ``{code}``, and nowhere else.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from .rounds import JuryError

PARAM_NAME = re.compile(r"[A-Za-z0-9_.-]{1,40}")
PLATFORM_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")  # Prolific's 24 hex digits, MTurk's A1B2..., CloudResearch's
BROWSER_KEY = re.compile(r"[A-Za-z0-9_-]{32,64}")
CODE_PLACEHOLDER = "{code}"
MAX_COMPLETE_URL = 2000
ID_RULE = "up to 64 letters, digits, '.', '_' or '-'"


@dataclass(frozen=True)
class IdParams:
    """The query parameters a crowd platform passes its participant, study and session ids in (None: not read)."""

    participant: str | None = "PROLIFIC_PID"
    study: str | None = "STUDY_ID"
    session: str | None = "SESSION_ID"

    def checked(self) -> IdParams:
        """These names, empty ones as None; raises :class:`JuryError` ``bad_params`` for a name that a query string
        cannot carry as it is, or a name given twice."""
        names = [(name or "").strip() or None for name in (self.participant, self.study, self.session)]
        for name in names:
            if name is not None and not PARAM_NAME.fullmatch(name):
                raise JuryError(
                    f"parameter names are up to 40 letters, digits, '.', '_' or '-' ({name[:60]!r} is not)",
                    "bad_params",
                )
        given = [name for name in names if name is not None]
        if len(set(given)) != len(given):
            raise JuryError(
                f"the parameter names must differ ({', '.join(given)})",
                "bad_params",
            )
        return IdParams(*names)

    def as_dict(self) -> dict[str, str | None]:
        return {"participant": self.participant, "study": self.study, "session": self.session}


PROLIFIC = IdParams()


@dataclass(frozen=True)
class Arrival:
    """Who pressed Start on an open link: the platform's ids on the link, and the browser's key (its cookie)."""

    participant_id: str | None = None
    study_id: str | None = None
    session_id: str | None = None
    browser_key: str | None = None


class BadPlatformId(JuryError):
    """An id on the link that is not one (``parameter`` names it): refused, nothing written."""

    def __init__(self, parameter: str):
        super().__init__(f"the participant id on this link ({parameter}) is not valid: {ID_RULE}", "bad_participant")
        self.parameter = parameter


def read_arrival(params: IdParams, query: Mapping[str, str], browser_key: str | None) -> Arrival:
    """The arrival a request describes: the ids of ``params`` in ``query`` (an empty one is absent), and the
    browser's key when it is one (a forged or damaged cookie is no key: the browser is then a new one).  Raises
    :class:`BadPlatformId` for an id that is not one."""
    ids = [_platform_id(name, query.get(name)) for name in (params.participant, params.study, params.session)]
    key = browser_key if browser_key and BROWSER_KEY.fullmatch(browser_key) else None
    return Arrival(*ids, browser_key=key)


def check_arrival(params: IdParams, arrival: Arrival) -> None:
    """Raises :class:`BadPlatformId` if an id of ``arrival`` is not one (an arrival built by a program)."""
    for name, value in zip(
        (params.participant, params.study, params.session),
        (arrival.participant_id, arrival.study_id, arrival.session_id),
        strict=True,
    ):
        if value is not None:
            _platform_id(name or "participant id", value)


def _platform_id(name: str | None, value: str | None) -> str | None:
    if name is None or value is None or value == "":
        return None
    if not PLATFORM_ID.fullmatch(value):
        raise BadPlatformId(name)
    return value


def new_browser_key() -> str:
    return secrets.token_urlsafe(32)


def check_complete_url(url: str) -> str:
    """``url`` (stripped) if the end of a task may send jurors there: an http or https address of a named host, with
    ``{code}`` in its path, query or fragment and no other braces, no user name (``https://platform@elsewhere``
    reads as the platform and is not), no spaces; raises :class:`JuryError` ``bad_complete_url`` saying why."""
    url = url.strip()

    def refuse(why: str):
        raise JuryError(f"completion URL: {why}", "bad_complete_url")

    if len(url) > MAX_COMPLETE_URL:
        refuse(f"at most {MAX_COMPLETE_URL:,} characters")
    if any(not 0x21 <= ord(char) <= 0x7E for char in url):
        refuse("no spaces or control characters (write other characters %-encoded)")
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https"):
        refuse("an http or https address (https://example.org/done?cc={code})")
    if "@" in parts.netloc:
        refuse("no user name before the host (the address would read as one site and go to another)")
    if not parts.hostname:
        refuse("the address must name a host")
    if CODE_PLACEHOLDER not in url or CODE_PLACEHOLDER in parts.netloc:
        refuse("put {code} in the address's path or query, where the completion code goes")
    if "{" in url.replace(CODE_PLACEHOLDER, "") or "}" in url.replace(CODE_PLACEHOLDER, ""):
        refuse("no braces other than {code}")
    return url


def completion_url(template: str, code: str) -> str:
    """Where a juror who finished goes: the host's URL with their code (encoded) in place of ``{code}``."""
    return template.replace(CODE_PLACEHOLDER, quote(code, safe=""))
