"""The wire format of every client message, validated at the boundary (pydantic v2).

``docs/protocol.md`` publishes the JSON Schema of each (``vtt protocol-schema`` prints them), so
agent authors can check their messages without running a server.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..engine.rules import HOST_ACTIONS, MAX_EXTEND_SECONDS, MAX_SHEET_LINES, MAX_TEXT

ClientId = Annotated[str, Field(min_length=1, max_length=64, description="the client's id for this action: "
                                "a replay with the same id is acknowledged again and changes nothing")]
Text = Annotated[str, Field(max_length=MAX_TEXT)]
Alias = Annotated[str, Field(min_length=1, max_length=8)]
Score = Annotated[int, Field(ge=1, le=5)]


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Auth(_Message):
    """The Socket.IO ``auth`` object of a connection: a person's token, or a session code and a role."""

    token: str | None = Field(None, max_length=64, description="a player's (or AI agent's) or juror's private token")
    code: str | None = Field(None, max_length=16, description="the session's join code")
    role: Literal["host", "stage", "juror"] | None = Field(
        None, description="with code: host (needs the host's login cookie), stage, or juror (open join)")
    nickname: str | None = Field(None, min_length=1, max_length=30, description="open join: the juror's nickname")

    @model_validator(mode="after")
    def _one_way_in(self) -> Auth:
        if self.token:
            if self.code or self.role or self.nickname:
                raise ValueError("give either a token, or a code with a role, not both")
        elif not (self.code and self.role):
            raise ValueError("give a token, or a code and a role (host, stage, juror)")
        elif self.role == "juror" and not self.nickname:
            raise ValueError("an open join needs a nickname")
        return self


class AnswerIn(_Message):
    """A player's answer to the question being answered (sent again to change it until answering closes)."""

    id: ClientId
    question: int = Field(description="the question's id, as in the question message")
    choice: int | None = Field(None, ge=0, description="multiple choice: the 0-based option")
    text: Text | None = Field(None, description="open question: the answer")


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
    lines: list[SheetLine] | None = Field(None, min_length=1, max_length=MAX_SHEET_LINES,
                                          description="several lines at once, instead of the top-level line")

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


class HostIn(_Message):
    """A move of the host; which fields matter depends on the action."""

    id: ClientId
    action: Literal[HOST_ACTIONS]  # type: ignore[valid-type]
    round: int | None = Field(None, ge=1, description="set_participants")
    players: list[int] | None = Field(None, description="set_participants: player ids, null for everyone")
    seconds: int | None = Field(None, ge=1, le=MAX_EXTEND_SECONDS, description="open_answering, open_vote, extend")
    player: int | None = Field(None, description="edit_answer: whose answer")
    text: Text | None = Field(None, description="edit_answer: the new text")
    redact: bool = Field(False, description="edit_answer: blank the answer instead")
    open: bool | None = Field(None, description="set_open_join")
    force: bool = Field(False, description="finish: stop before the last round is over")


CLIENT_MESSAGES: dict[str, type[_Message]] = {"answer": AnswerIn, "sheet": SheetIn, "vote": VoteIn, "host": HostIn}


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
    try:
        return model.model_validate(data)
    except ValidationError as error:
        problems = []
        for item in error.errors()[:5]:
            where = ".".join(str(part) for part in item["loc"]) or "message"
            problems.append(f"field '{where}': {item['msg']}")
        raise Invalid("; ".join(problems)) from None


def json_schemas() -> dict[str, dict[str, Any]]:
    return {"auth": Auth.model_json_schema(), **{name: m.model_json_schema() for name, m in CLIENT_MESSAGES.items()}}


if __name__ == "__main__":  # python -m vtt.realtime.schemas: the schemas docs/protocol.md publishes
    import json

    print(json.dumps(json_schemas(), indent=2, ensure_ascii=False))
