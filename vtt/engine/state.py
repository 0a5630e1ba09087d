"""The live state of one session as plain data, and the effects that change it.

The rules (``vtt.engine.rules``) read a :class:`LiveState` and answer an action with a list of
:class:`Effect` objects.  The same effects are applied twice: here, to the state in memory
(``apply_effect``), and by ``vtt.persistence.write`` to the database, so what a restart reloads is what
the running process had.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..kinds import DEFAULT_ANSWER_MODES, ClipPlayback, Phase, PlayerKind, QuestionType, RevealPolicy

AUDIENCES = ("host", "player", "juror", "stage")


@dataclass
class PlayerInfo:
    id: int
    name: str
    kind: PlayerKind
    age: int | None = None
    stage: str | None = None
    agent: dict[str, Any] | None = None  # an AI player's last status report: {status, message, at}
    # How the player takes part (text, spoken, read_aloud): the player's own page and the host only, never the
    # jury or the stage (reading aloud gives a young child away).
    answer_modes: list[str] = field(default_factory=lambda: list(DEFAULT_ANSWER_MODES))
    speech: dict[str, Any] | None = None  # a read-aloud page's last word on its voice: {notice, language, at}


@dataclass
class QuestionInfo:
    """A question placed in the session (``id`` is the session question's id)."""

    id: int
    round: int
    position: int
    qid: str
    text: str
    type: QuestionType
    choices: list[str]
    answer_index: int | None = None
    reference_answer: str = ""
    clip_source: str | None = None
    clip_start: float | None = None
    clip_end: float | None = None
    clip_kind: str | None = None
    shown_at: datetime | None = None
    clip_started_at: datetime | None = None  # the host's latest screening of the clip starts then (server time)
    answers_closed_at: datetime | None = None
    revealed_at: datetime | None = None
    reveal_order: list[str] | None = None  # aliases in the order the jury saw the answers


@dataclass
class AnswerInfo:
    player_id: int
    text: str
    choice_index: int | None
    latency_ms: int | None
    submitted_at: datetime
    redacted: bool = False
    edited: bool = False
    provenance: dict[str, Any] | None = None  # AI players: the backend, model and settings behind the answer
    entered_by_host: bool = False


@dataclass
class RecordingInfo:
    """A spoken answer's latest recording (a player may record again until answering closes): host side only."""

    player_id: int
    file: str  # its name in the recordings folder: the host's console plays it, the host's confirmation names it
    mime: str
    size: int  # bytes
    duration_ms: int | None
    ended_at: datetime  # when the child stopped speaking: a confirmed transcript's answer time
    received_at: datetime
    suggestion: TakeTranscript | None = None  # a transcription backend's, once the host asked for one


@dataclass(frozen=True)
class TakeTranscript:
    """What a transcription backend heard in a take: for the host to confirm or correct, never an answer itself."""

    text: str
    confidence: float | None  # 0 (a guess) to 1 (sure), the backend's own figure; None when it gives none
    backend: str
    level: str  # what that figure was measured to mean (TRANSCRIPT_LEVELS; "none": no speech heard)


@dataclass
class VoteInfo:
    player_id: int | None  # None: an abstention
    alias: str | None
    confidence: int | None = None
    reason: str = ""


@dataclass
class RoundInfo:
    number: int
    theme: str | None = None
    participants: list[int] | None = None  # None: every player
    aliases: dict[int, str] = field(default_factory=dict)  # player id -> alias; empty until the round starts
    vote_opened_at: datetime | None = None
    vote_closed_at: datetime | None = None
    tally: dict[str, Any] | None = None
    revealed: set[int] = field(default_factory=set)  # players whose identity the jury has been shown

    def player_of(self, alias: str) -> int | None:
        return next((pid for pid, name in self.aliases.items() if name == alias), None)


@dataclass
class LiveState:
    session_id: int
    code: str
    name: str
    seed: int
    rounds: int
    answer_seconds: int | None
    vote_seconds: int | None
    reveal_policy: RevealPolicy
    ai_votes_per_juror: int
    open_join: bool
    phase: Phase
    deadline: datetime | None
    round: int | None
    position: int | None
    state_version: int
    audience_versions: dict[str, int]
    players: dict[int, PlayerInfo]
    questions: dict[int, QuestionInfo]
    round_info: dict[int, RoundInfo]
    answers: dict[int, dict[int, AnswerInfo]] = field(default_factory=dict)  # question -> player -> answer
    recordings: dict[int, dict[int, RecordingInfo]] = field(default_factory=dict)  # question -> player -> latest
    votes: dict[int, dict[int, VoteInfo]] = field(default_factory=dict)  # current round: juror -> slot -> vote
    juror_labels: set[str] = field(default_factory=set)
    juror_ids: dict[str, int] = field(default_factory=dict)  # by label (a new juror's id arrives with its write)
    removed_jurors: set[int] = field(default_factory=set)  # removed by the host: no say, no votes
    open_jurors: int = 0  # jurors who joined openly, removed ones included (what a cap counts)
    open_join_cap: int | None = None  # at most this many open joins; None: no cap
    join_door: bool = False  # an open join needs the stage's door code
    pass_rule: str = "human-tie"  # for the tally at the close of a vote
    pass_alpha: float = 0.05
    pass_threshold_pct: float = 70.0
    clip_playback: ClipPlayback = ClipPlayback.HOST
    language: str | None = None  # the questions' language, from the design (None: each page's own)
    # Each person's latest device check, by (role, id): the host's Readiness panel (vtt.engine.readiness)
    device_checks: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)

    # --- reading ------------------------------------------------------------------------------

    def round_questions(self, number: int | None) -> list[QuestionInfo]:
        return sorted((q for q in self.questions.values() if q.round == number), key=lambda q: q.position)

    @property
    def current_question(self) -> QuestionInfo | None:
        return next((q for q in self.round_questions(self.round) if q.position == self.position), None)

    @property
    def current_round(self) -> RoundInfo | None:
        return self.round_info.get(self.round) if self.round is not None else None

    def participants(self, number: int) -> list[int]:
        chosen = self.round_info[number].participants
        return sorted(self.players) if chosen is None else sorted(chosen)

    def voted_jurors(self) -> int:
        return len(self.votes)


# --- effects ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Effect:
    """A change of state; ``vtt.persistence.write`` writes each kind to the database."""


@dataclass(frozen=True)
class SetPhase(Effect):
    phase: Phase
    round: int | None
    position: int | None
    deadline: datetime | None


@dataclass(frozen=True)
class MarkQuestion(Effect):
    question_id: int
    field: str  # shown_at | clip_started_at | answers_closed_at | revealed_at
    at: datetime
    reveal_order: tuple[str, ...] | None = None


@dataclass(frozen=True)
class MarkRound(Effect):
    round: int
    field: str  # vote_opened_at | vote_closed_at
    at: datetime


@dataclass(frozen=True)
class SetParticipants(Effect):
    round: int
    player_ids: tuple[int, ...] | None


@dataclass(frozen=True)
class DealAliases(Effect):
    round: int
    aliases: tuple[tuple[int, str], ...]  # (player id, alias)


@dataclass(frozen=True)
class SaveAnswer(Effect):
    question_id: int
    player_id: int
    text: str
    choice_index: int | None
    latency_ms: int | None
    client_key: str
    at: datetime
    provenance: dict[str, Any] | None = field(default=None, hash=False)
    entered_by_host: bool = False


@dataclass(frozen=True)
class SaveRecording(Effect):
    """A spoken answer's recording is on disk (the upload wrote it before the action): its row, a take of its own."""

    question_id: int
    player_id: int
    file: str
    mime: str
    size: int
    duration_ms: int | None
    ended_at: datetime
    client_key: str
    at: datetime


@dataclass(frozen=True)
class SaveTakeTranscript(Effect):
    """A transcription backend's suggestion for a take (its row keeps the latest)."""

    question_id: int
    player_id: int
    file: str
    suggestion: TakeTranscript


@dataclass(frozen=True)
class SetAgentStatus(Effect):
    """An AI player's agent reported its state (kept on the player: the host's screen reloads it)."""

    player_id: int
    status: str  # ready | working | answered | error
    message: str
    at: datetime


@dataclass(frozen=True)
class SetSpeechNotice(Effect):
    """A read-aloud player's page says whether it has a voice for its language (kept on the player: the host's
    console reloads it)."""

    player_id: int
    notice: str  # no_voice | voice_ok
    language: str
    at: datetime


@dataclass(frozen=True)
class SaveDeviceCheck(Effect):
    """A player's or juror's page checked the device: the report kept on their row (``vtt.engine.readiness``)."""

    role: str  # player | juror
    person_id: int
    report: dict[str, Any] = field(hash=False)


@dataclass(frozen=True)
class EditAnswer(Effect):
    question_id: int
    player_id: int
    text: str
    redacted: bool
    at: datetime


@dataclass(frozen=True)
class SaveSheet(Effect):
    juror_id: int
    question_id: int
    player_id: int
    alias: str
    note: str
    human_likeness: int | None
    looks_like_ai: bool
    client_key: str
    at: datetime


@dataclass(frozen=True)
class SaveVote(Effect):
    round: int
    juror_id: int
    slot: int
    player_id: int | None
    alias: str | None
    confidence: int | None
    reason: str
    client_key: str
    at: datetime


@dataclass(frozen=True)
class SetAttention(Effect):
    """A displaced juror answered their instructed-response line (``vtt.engine.displaced``)."""

    juror_id: int
    passed: bool


@dataclass(frozen=True)
class SetTally(Effect):
    round: int
    tally: dict[str, Any] = field(hash=False)


@dataclass(frozen=True)
class RevealIdentity(Effect):
    round: int
    player_id: int
    at: datetime


@dataclass(frozen=True)
class SetOpenJoin(Effect):
    open: bool
    cap: int | None
    door: bool


@dataclass(frozen=True)
class RemoveJuror(Effect):
    juror_id: int
    token: str  # the juror's link is replaced by one nobody has
    at: datetime


@dataclass(frozen=True)
class RenewToken(Effect):
    """A person's link replaced (the host gave them a new one): the old one stops working."""

    role: str  # player | juror
    person_id: int
    token: str


@dataclass(frozen=True)
class AddJuror(Effect):
    label: str
    token: str
    group: str


@dataclass(frozen=True)
class LogEvent(Effect):
    kind: str
    actor: str
    payload: dict[str, Any] = field(hash=False)
    client_key: str | None
    at: datetime


def agent_report(effect: SetAgentStatus) -> dict[str, Any]:
    """What ``player.details["agent"]`` holds and the host is shown: the agent's last report."""
    return {"status": effect.status, "message": effect.message, "at": effect.at.isoformat().replace("+00:00", "Z")}


def speech_report(effect: SetSpeechNotice) -> dict[str, Any]:
    """What ``player.details["speech"]`` holds and the host is shown: a read-aloud page's last notice."""
    return {"notice": effect.notice, "language": effect.language, "at": effect.at.isoformat().replace("+00:00", "Z")}


def apply_effect(state: LiveState, effect: Effect) -> None:
    """Change ``state`` in memory as ``effect`` says (the database gets the same through the store)."""
    match effect:
        case SetPhase():
            if effect.round != state.round:
                state.votes = {}  # votes kept in memory are the current round's
            state.phase, state.round, state.position, state.deadline = (
                effect.phase,
                effect.round,
                effect.position,
                effect.deadline,
            )
        case MarkQuestion():
            question = state.questions[effect.question_id]
            setattr(question, effect.field, effect.at)
            if effect.reveal_order is not None:
                question.reveal_order = list(effect.reveal_order)
        case MarkRound():
            setattr(state.round_info[effect.round], effect.field, effect.at)
        case SetParticipants():
            state.round_info[effect.round].participants = None if effect.player_ids is None else list(effect.player_ids)
        case DealAliases():
            state.round_info[effect.round].aliases = dict(effect.aliases)
        case SaveAnswer():
            state.answers.setdefault(effect.question_id, {})[effect.player_id] = AnswerInfo(
                effect.player_id,
                effect.text,
                effect.choice_index,
                effect.latency_ms,
                effect.at,
                provenance=effect.provenance,
                entered_by_host=effect.entered_by_host,
            )
        case SaveRecording():
            state.recordings.setdefault(effect.question_id, {})[effect.player_id] = RecordingInfo(
                effect.player_id, effect.file, effect.mime, effect.size, effect.duration_ms, effect.ended_at, effect.at
            )
        case SaveTakeTranscript():
            state.recordings[effect.question_id][effect.player_id].suggestion = effect.suggestion
        case SetAgentStatus():
            state.players[effect.player_id].agent = agent_report(effect)
        case SetSpeechNotice():
            state.players[effect.player_id].speech = speech_report(effect)
        case SaveDeviceCheck():
            state.device_checks[(effect.role, effect.person_id)] = effect.report
        case EditAnswer():
            answer = state.answers[effect.question_id][effect.player_id]
            answer.text, answer.redacted, answer.edited = effect.text, effect.redacted, True
            if effect.redacted:
                answer.choice_index = None
        case SaveVote():
            state.votes.setdefault(effect.juror_id, {})[effect.slot] = VoteInfo(
                effect.player_id, effect.alias, effect.confidence, effect.reason
            )
        case SetTally():
            state.round_info[effect.round].tally = effect.tally
        case RevealIdentity():
            state.round_info[effect.round].revealed.add(effect.player_id)
        case SetOpenJoin():
            state.open_join, state.open_join_cap, state.join_door = effect.open, effect.cap, effect.door
        case AddJuror():
            state.juror_labels.add(effect.label)
            state.open_jurors += effect.group == "open"
        case RemoveJuror():
            state.removed_jurors.add(effect.juror_id)
            state.votes.pop(effect.juror_id, None)
        case SaveSheet() | LogEvent() | RenewToken() | SetAttention():
            pass  # kept in the database only: the rules never need them again
        case _:
            raise TypeError(f"unknown effect {effect!r}")
