"""The domain's vocabulary: question types, player kinds, phases, policies (enums by value).

Pure Python, at the bottom of the house: the engine reads them without loading SQLAlchemy, and ``vtt.models`` stores
them by value.
"""

from __future__ import annotations

import enum


class QuestionType(enum.StrEnum):
    MCQ = "mcq"
    OPEN = "open"


class ClipKind(enum.StrEnum):
    SHOT = "shot"
    SCENE = "scene"


class PlayerKind(enum.StrEnum):
    HUMAN = "human"
    AI = "ai"


class Jury(enum.StrEnum):
    """Who a juror judges with: only the live jury's votes and sheet lines make the live tally, stage and verdicts."""

    LIVE = "live"  # in the room, during the session
    DISPLACED = "displaced"  # people judging a finished session's material later, online
    AI = "ai"  # a model judging it


class SessionStatus(enum.StrEnum):
    DRAFT = "draft"  # configured, nobody admitted yet
    LOBBY = "lobby"  # players and jurors may join
    RUNNING = "running"
    FINISHED = "finished"


class Phase(enum.StrEnum):
    """Where the live flow of a session stands (see ``vtt.engine.rules`` for the moves between them)."""

    DRAFT = "draft"  # configured, nobody admitted yet
    LOBBY = "lobby"  # players and jurors join and wait
    ROUND = "round"  # a round has begun: aliases dealt, no question on screen yet
    CLIP = "clip"  # a question and its clip are shown
    ANSWERING = "answering"  # players answer (until the deadline, if any)
    ANSWERS_CLOSED = "answers_closed"  # the host checks the answers before the jury sees them
    JUDGING = "judging"  # the answers are revealed to the jury, who fill their sheets
    VOTING = "voting"  # "who is the AI?" for this round
    VOTE_CLOSED = "vote_closed"  # the tally is computed, not yet shown
    TALLY = "tally"  # the tally is on screen
    IDENTITIES = "identities"  # identities revealed after the round (per-round reveal policy)
    FINISHED = "finished"


class AnswerMode(enum.StrEnum):
    """How a human player takes part (a player's ``answer_modes``, several at once): ``text`` and ``spoken`` are
    how the player answers, ``read_aloud`` only adds reading (the page reads the question and options aloud)."""

    TEXT = "text"  # the player types or picks an option (the default)
    SPOKEN = "spoken"  # the player says the answer: the page records it, the host confirms a transcript
    READ_ALOUD = "read_aloud"  # the page reads the question and each option aloud; options are big numbered buttons


DEFAULT_ANSWER_MODES = (AnswerMode.TEXT.value,)  # a design without answer_modes, and every AI player


class ClipPlayback(enum.StrEnum):
    HOST = "host"  # the host plays the clip for everyone at once: the stage and every player's page
    DEVICE = "device"  # each player plays it on their own device


class RevealPolicy(enum.StrEnum):
    PER_ROUND = "per-round"  # the most-voted player's identity after each round (2021 public event)
    END = "end"  # identities only when the session ends


class PassRule(enum.StrEnum):
    HUMAN_TIE = "human-tie"
    CHANCE = "chance"
    THRESHOLD = "threshold"


class ScoringMethod(enum.StrEnum):
    UNIFORM = "uniform"
    COGSCI2024 = "cogsci2024"
    FRONTIERS2022 = "frontiers2022"


class RoundStatus(enum.StrEnum):
    PENDING = "pending"
    ASKING = "asking"  # questions being shown, answered and judged
    VOTING = "voting"
    CLOSED = "closed"
