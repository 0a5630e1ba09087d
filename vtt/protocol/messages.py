"""The wire format of every client message, validated at the boundary (pydantic v2).

``docs/protocol.md`` publishes the JSON Schema of each (``python -m vtt.protocol.messages`` prints them), so
agent authors can check their messages without running a server.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import fields, is_dataclass
from types import SimpleNamespace, UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from . import vocabulary
from .text import first_unstorable, unstorable

ClientId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        description="the client's id for this action: "
        "a replay with the same id is acknowledged again and changes nothing",
    ),
]
Text = Annotated[str, Field(max_length=vocabulary.MAX_TEXT)]
Alias = Annotated[str, Field(min_length=1, max_length=8)]
Score = Annotated[int, Field(ge=1, le=5)]


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Auth(_Message):
    """The Socket.IO ``auth`` object of a connection: a person's token, or a session code and a role."""

    token: str | None = Field(None, max_length=64, description="a player's (or AI agent's) or juror's private token")
    code: str | None = Field(None, max_length=16, description="the session's join code")
    role: Literal["host", "stage", "juror"] | None = Field(
        None,
        description="with code: host (needs the host's login cookie), stage (needs the stage key or the host's), "
        "or juror (open join)",
    )
    nickname: str | None = Field(None, min_length=1, max_length=30, description="open join: the juror's nickname")
    host_token: str | None = Field(
        None,
        max_length=64,
        description="with code and role host (or stage): the host's API token "
        "(`vtt host-token`), instead of the host's login cookie",
    )
    door: str | None = Field(
        None,
        max_length=8,
        description="open join: the door code the stage screen shows "
        "(needed when the session's status says join_door; lifts the per-address join limit)",
    )
    key: str | None = Field(
        None,
        max_length=64,
        description="with code and role stage: the stage key of the host "
        "console's stage link (`?key=`); without it (or the host's login or API token) no stage opens",
    )

    @model_validator(mode="after")
    def _one_way_in(self) -> Auth:
        if self.host_token and self.role not in ("host", "stage"):
            raise ValueError("host_token goes with a code and role host (or stage)")
        if self.token:
            if self.code or self.role or self.nickname:
                raise ValueError("give either a token, or a code with a role, not both")
        elif not (self.code and self.role):
            raise ValueError("give a token, or a code and a role (host, stage, juror)")
        elif self.role == "juror" and not self.nickname:
            raise ValueError("an open join needs a nickname")
        return self


class Provenance(_Message):
    """Which program produced an AI player's answer (kept from the jury; in the host's view, export and reports)."""

    backend: str = Field(min_length=1, max_length=vocabulary.MAX_BACKEND, description="e.g. replay, http, python")
    model: str | None = Field(None, description="the model's name, if any")
    settings: dict[str, Any] = Field(
        default_factory=dict, description="whatever else names the setup (temperature, frames, prompt, file...)"
    )

    @model_validator(mode="after")
    def _small(self) -> Provenance:
        size = len(json.dumps(self.model_dump(), ensure_ascii=False, default=str))
        if size > vocabulary.MAX_PROVENANCE:
            raise ValueError(f"the provenance is {size} characters as JSON; at most {vocabulary.MAX_PROVENANCE}")
        return self


class AnswerIn(_Message):
    """A player's answer to the question being answered (sent again to change it until answering closes)."""

    id: ClientId
    question: int = Field(description="the question's id, as in the question message")
    choice: int | None = Field(None, ge=0, description="multiple choice: the 0-based option")
    text: Text | None = Field(None, description="open question: the answer")
    provenance: Provenance | None = Field(
        None,
        description="AI players: the backend, model and settings that "
        f"produced the answer (at most {vocabulary.MAX_PROVENANCE} characters as JSON)",
    )


class AgentIn(_Message):
    """An AI player's agent reports how it is doing; the host sees the last report (and an error prominently)."""

    id: ClientId
    status: Literal[vocabulary.AGENT_STATUSES]  # type: ignore[valid-type]
    message: str = Field("", max_length=vocabulary.MAX_AGENT_MESSAGE, description="e.g. the error, for the host")


class NoticeIn(_Message):
    """A read-aloud player's page tells the host about its voice: ``no_voice`` when the browser cannot read aloud in
    the page's language (the host then reads the questions aloud), ``voice_ok`` when it can (after all)."""

    id: ClientId
    notice: Literal[vocabulary.SPEECH_NOTICES]  # type: ignore[valid-type]
    language: str = Field(
        min_length=2,
        max_length=vocabulary.MAX_LANGUAGE_TAG,
        pattern=vocabulary.LANGUAGE_TAG,
        description="the language the page reads in (BCP 47, e.g. ko or en-GB)",
    )


class DeviceCheckIn(_Message):
    """A player's or juror's page checked the device before the event (the person's "Check this device"): the
    host's console shows each person's readiness from the latest check. Never sent to the jury or the stage."""

    id: ClientId
    sound: Literal[vocabulary.CHECK_SOUNDS] = Field(  # type: ignore[valid-type]
        description="the test clip's tone: heard, not_heard (the person said so), failed (the clip would not play)"
    )
    microphone: Literal[vocabulary.CHECK_MICROPHONES] | None = Field(  # type: ignore[valid-type]
        None,
        description="a spoken player's page only (required there, null elsewhere): ok (two seconds recorded, played "
        "back and heard), not_heard (recorded and played back, the person did not hear it), none (no microphone or no "
        "MediaRecorder), denied (permission refused), failed",
    )
    clock_offset_ms: int = Field(
        ge=-vocabulary.MAX_CLOCK_OFFSET_MS,
        le=vocabulary.MAX_CLOCK_OFFSET_MS,
        description="server time minus the page's time, from the quickest of a few clock round trips",
    )
    round_trip_ms: int = Field(
        ge=0, le=vocabulary.MAX_ROUND_TRIP_MS, description="a round trip through the socket (the median of those)"
    )
    transport: Literal[vocabulary.CHECK_TRANSPORTS] = Field(  # type: ignore[valid-type]
        description="engine.io's transport when the page measured: websocket or polling"
    )
    rendition: Literal[vocabulary.CHECK_RENDITIONS] = Field(  # type: ignore[valid-type]
        description="the test clip's rendition the page played: main, or phone (the light one)"
    )
    duration_ms: int | None = Field(None, ge=0, le=vocabulary.MAX_CHECK_MS, description="how long the check took")


class SheetLine(_Message):
    """A juror's judgment-sheet line about one answer (the whole line: the last write wins)."""

    question: int
    alias: Alias
    note: Text | None = ""
    human_likeness: Score | None = None
    looks_like_ai: bool = False


class SheetIn(_Message):
    """One sheet line (its fields at the top level), or several in ``lines``: a page saves every line typed
    since its last save in one message. All lines are saved or none."""

    id: ClientId
    question: int | None = None
    alias: Alias | None = None
    note: Text | None = ""
    human_likeness: Score | None = None
    looks_like_ai: bool = False
    lines: list[SheetLine] | None = Field(
        None,
        min_length=1,
        max_length=vocabulary.MAX_SHEET_LINES,
        description="several lines at once, instead of the top-level line",
    )

    @model_validator(mode="after")
    def _one_line_or_lines(self) -> SheetIn:
        single = self.question is not None or self.alias is not None
        if self.lines is not None and single:
            raise ValueError("give either one line (question, alias, ...) or lines, not both")
        if self.lines is None and (self.question is None or self.alias is None):
            raise ValueError("a sheet line needs question and alias (or give lines)")
        return self


class VoteIn(_Message):
    """A juror's "who is the AI?" pick for one slot of the open round; alias null abstains."""

    id: ClientId
    round: int = Field(ge=1)
    slot: int = Field(1, ge=1)
    alias: Alias | None
    confidence: Score | None = None
    reason: Text | None = Field(None, description="why (optional)")


class AttentionIn(_Message):
    """A displaced juror's answer to their instructed-response line (the rating it asks for, 1-5)."""

    id: ClientId
    value: Score


class HostIn(_Message):
    """A move of the host; which fields matter depends on the action."""

    id: ClientId
    action: Literal[vocabulary.HOST_ACTIONS]  # type: ignore[valid-type]
    round: int | None = Field(None, ge=1, description="set_participants")
    players: list[int] | None = Field(None, description="set_participants: player ids, null for everyone")
    seconds: int | None = Field(
        None, ge=1, le=vocabulary.MAX_EXTEND_SECONDS, description="open_answering, open_vote, extend"
    )
    duration: float | None = Field(
        None,
        gt=0,
        le=vocabulary.MAX_CLIP_SECONDS,
        description="play_clip: how many seconds the "
        "clip plays (its span, or the file's length from the start); answering opens "
        "when it has played. Default: the span's length when it has both ends",
    )
    player: int | None = Field(
        None, description="edit_answer, enter_answer, confirm_spoken: whose answer; new_link: the player"
    )
    text: Text | None = Field(
        None, description="edit_answer: the new text; enter_answer, confirm_spoken: an open answer"
    )
    choice: int | None = Field(
        None, ge=0, description="enter_answer, confirm_spoken: a multiple-choice answer, the 0-based option"
    )
    question: int | None = Field(
        None, description="enter_answer, confirm_spoken: the question's id (refused unless it is the current one)"
    )
    source: Literal[vocabulary.ANSWER_SOURCES] | None = Field(  # type: ignore[valid-type]
        None, description="enter_answer: typed (the default) or import (from a predictions file)"
    )
    file: str | None = Field(
        None,
        max_length=vocabulary.MAX_FILE_NAME,
        description="enter_answer: the imported file's name; confirm_spoken: the recording heard (its file, as the "
        "recording event gave it; refused as stale_recording when the player has recorded again since)",
    )
    transcribed_by: str | None = Field(
        None,
        max_length=vocabulary.MAX_TRANSCRIBER,
        description="confirm_spoken: who or what turned the recording into text (default host; the transcription "
        "backend's name when its suggestion was kept)",
    )
    redact: bool = Field(False, description="edit_answer: blank the answer instead")
    open: bool | None = Field(None, description="set_open_join")
    cap: int | None = Field(
        None,
        ge=0,
        le=vocabulary.MAX_OPEN_JOIN_CAP,
        description="set_open_join: at most this many open joins (0: no cap); unchanged when absent",
    )
    door: bool | None = Field(
        None, description="set_open_join: open joins need the stage's door code; unchanged when absent"
    )
    juror: str | None = Field(
        None, min_length=1, max_length=40, description="remove_juror, new_link: the juror's label"
    )
    force: bool = Field(False, description="finish: stop before the last round is over")


CLIENT_MESSAGES: dict[str, type[_Message]] = {
    "answer": AnswerIn,
    "sheet": SheetIn,
    "vote": VoteIn,
    "attention": AttentionIn,
    "host": HostIn,
    "agent": AgentIn,
    "notice": NoticeIn,
    "device_check": DeviceCheckIn,
}


class Invalid(ValueError):
    """A message that does not fit its schema; ``message`` names the field."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def as_error(self) -> dict[str, str]:
        return {"code": "invalid", "message": self.message}


def parse(model: type[_Message], data: Any) -> _Message:
    if not isinstance(data, dict):
        raise Invalid(f"expected a JSON object, got {type(data).__name__}")
    problem = first_unstorable(data)  # before the model: a text the database would refuse is this message's alone
    if problem:
        raise Invalid(problem)
    try:
        return model.model_validate(data)
    except ValidationError as error:
        problems = []
        for item in error.errors()[:5]:
            where = ".".join(str(part) for part in item["loc"]) or "message"
            problems.append(f"field '{where}': {item['msg']}")
        raise Invalid("; ".join(problems)) from None


# --- the hot messages without pydantic ---------------------------------------------------------------
#
# Jurors' ``vote`` and ``sheet`` messages are most of a loaded server's messages, and validating a
# model then dumping it cost ~10-20 us of the loop each.  A message that is plainly valid (exact
# JSON types, within bounds, no unknown field, its model's validators content) is read without the
# model into exactly the dict its ``model_dump`` gives; anything else (and every error message) goes
# through the model.  The plain reader is made from the model's own fields: the schema is stated once.

_BIG = 1 << 62  # beyond this, leave integers to pydantic
_NOT_FIELDS = frozenset({"id", "action"})
_NO = object()  # a value the plain reader leaves to the model
Check = Callable[[Any], Any]  # the value as read, or _NO


def _bounds(metadata: list[Any], low: int, high: int) -> tuple[int, int] | None:
    """The inclusive bounds the constraints ``metadata`` set (None: a constraint this reader does not know)."""
    for constraint in metadata:
        given = (
            {each.name: getattr(constraint, each.name) for each in fields(constraint)}
            if is_dataclass(constraint)
            else {}
        )
        if given.keys() == {"ge"} or given.keys() == {"min_length"}:
            low = max(low, *given.values())
        elif given.keys() == {"le"} or given.keys() == {"max_length"}:
            high = min(high, *given.values())
        else:
            return None
    return low, high


def _check(annotation: Any, metadata: list[Any]) -> tuple[bool, Check] | None:
    """Whether one field may be null, and the plain check of its other values (None: leave it to the model)."""
    if get_origin(annotation) in (Union, UnionType):
        inner = [each for each in get_args(annotation) if each is not type(None)]
        found = _check(inner[0], metadata) if len(inner) == 1 else None
        return None if found is None else (True, found[1])
    if get_origin(annotation) is Annotated:
        base, *infos = get_args(annotation)
        return _check(base, [*metadata, *(m for info in infos if isinstance(info, FieldInfo) for m in info.metadata)])
    if annotation is bool and not metadata:
        return False, lambda value: value if type(value) is bool else _NO
    bounds = _bounds(metadata, -_BIG + 1, _BIG - 1)
    if bounds is None:
        return None
    low, high = bounds
    if annotation is int:
        return False, lambda value: value if type(value) is int and low <= value <= high else _NO
    if annotation is str:
        return (
            False,
            lambda value: (
                value if type(value) is str and low <= len(value) <= high and unstorable(value) is None else _NO
            ),
        )
    item = get_args(annotation)[0] if get_origin(annotation) is list and len(get_args(annotation)) == 1 else None
    read = plain_reader(item, leave_out=frozenset()) if item is not None else None
    if read is None:
        return None

    def check_list(value: Any) -> Any:
        if type(value) is not list or not low <= len(value) <= high:
            return _NO
        items = [read(each) for each in value]
        return _NO if None in items else items

    return False, check_list


def plain_reader(
    model: Any, *, leave_out: frozenset[str] = _NOT_FIELDS
) -> Callable[[Any], dict[str, Any] | None] | None:
    """A reader of ``model``'s plainly valid messages: the message's ``model_dump`` without the fields
    ``leave_out``, or None for the model to decide.  None when a field of the model is beyond it."""
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return None
    decorators = model.__pydantic_decorators__
    if decorators.field_validators or decorators.model_serializers or decorators.field_serializers:
        return None
    after = [each.func for each in decorators.model_validators.values() if each.info.mode == "after"]
    if len(after) != len(decorators.model_validators):
        return None
    plan = []
    for name, info in model.model_fields.items():
        found = _check(info.annotation, info.metadata)
        if found is None:
            return None
        default = PydanticUndefined if info.is_required() else info.get_default(call_default_factory=True)
        plan.append((name, default, *found, name not in leave_out))
    known = frozenset(model.model_fields)

    def read(data: Any) -> dict[str, Any] | None:
        if type(data) is not dict or not data.keys() <= known:
            return None
        read_as = {}
        for name, default, nullable, check, kept in plan:
            if name in data:
                value = data[name]
                if value is not None or not nullable:
                    value = check(value)
                    if value is _NO:
                        return None
            elif default is PydanticUndefined:
                return None
            else:
                value = default
            if kept:
                read_as[name] = value
        if after:
            values = SimpleNamespace(**read_as, **{name: data.get(name) for name in leave_out})
            try:
                for validate in after:
                    validate(values)
            except ValueError:
                return None
        return read_as

    return read


# The hot actions read without the model when their data is plainly valid (None otherwise: the model decides);
# a test holds them to the model's values and errors.
PLAIN_READERS = {"vote": plain_reader(VoteIn), "sheet": plain_reader(SheetIn)}


def parse_action(event: str, data: Any) -> tuple[str, dict[str, Any], str]:
    """A client action's name, its fields (``model_dump`` without ``id`` and ``action``) and its client id;
    raises :class:`Invalid` as :func:`parse` does."""
    plain = PLAIN_READERS.get(event)
    if plain is not None:
        fields = plain(data)
        if fields is not None:
            return event, fields, data["id"]
    model = CLIENT_MESSAGES[event]
    message = parse(model, data)
    # only the host's message names its action (asking a model for a field it lacks costs as much as validating it)
    action = message.action if "action" in model.model_fields else event
    return action, message.model_dump(exclude=_NOT_FIELDS), message.id


def carried_by(model: type[BaseModel]) -> tuple[str, ...]:
    """The actions a client message carries: a message with an ``action`` field the actions it names (the host's
    moves), any other the action of its own event's name (as :func:`parse_action` reads them)."""
    if "action" in model.model_fields:
        return get_args(model.model_fields["action"].annotation)
    return tuple(event for event, each in CLIENT_MESSAGES.items() if each is model)


def json_schemas() -> dict[str, dict[str, Any]]:
    return {"auth": Auth.model_json_schema(), **{name: m.model_json_schema() for name, m in CLIENT_MESSAGES.items()}}


if __name__ == "__main__":  # python -m vtt.protocol.messages: the schemas docs/protocol.md publishes
    import json

    print(json.dumps(json_schemas(), indent=2, ensure_ascii=False))
