"""What each audience may see: the only place payloads for jurors and the stage are built.

Blinding is an allowlist, not a filter: every juror/stage payload below is assembled field by
field from plain values.  No model object and no player record is ever serialised, so a player's
name, id, kind, token, age, stage, answer modes (a page that reads aloud is a young child's), recordings
(a child's voice tells her age: the jury reads the confirmed transcript like any other answer) and answer time
cannot reach the jury by accident.  After a round's reveal the jury learns what the
host chose to reveal (:func:`identities`), by alias.

Host payloads (names, kinds, latencies, tells) are built here too, so one module says who sees what.
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Any

from ..kinds import Phase, PlayerKind, QuestionType
from .readiness import host_readiness_all
from .state import AnswerInfo, LiveState, QuestionInfo, RecordingInfo
from .tells import identity_tells

# Phases in which the current round's tally is on screen (or was, and the round is over).
TALLY_SHOWN = (Phase.TALLY, Phase.IDENTITIES, Phase.FINISHED)
# The juror pages together save sheets at most this many times a second (each save is a message for the one
# writer: a third of the messages one process took at 5,000 jurors in bench/bench_load.py, leaving room for
# votes)...
SHEET_SAVES_PER_SECOND = 500
MAX_SHEET_SAVE_SECONDS = 10  # ...up to this spacing of one page's saves (its drafts are safe in the browser meanwhile)


def protocol_timestamp(moment: datetime | None, timespec: str = "auto") -> str | None:
    """A time as the live protocol sends it: ISO 8601 ending in ``Z`` (the engine's times are UTC), to the time's
    own precision, or ``timespec`` (milliseconds where a browser's clock reads it); None stays None.  (The export
    writes its times otherwise: always to the microsecond.)"""
    return moment.isoformat(timespec=timespec).replace("+00:00", "Z") if moment else None


# --- shared by every audience ------------------------------------------------------------------


def status(state: LiveState) -> dict[str, Any]:
    """Where the flow stands: the same for everyone (the host's adds its moves: :func:`host_status`)."""
    current = state.current_round
    return {
        "phase": state.phase.value,
        "round": state.round,
        "rounds": state.rounds,
        "position": state.position,
        "questions_in_round": len(state.round_questions(state.round)) if state.round else 0,
        "deadline": protocol_timestamp(state.deadline),
        "theme": current.theme if current else None,
        "vote_slots": state.ai_votes_per_juror,
        # whether anyone may join openly now: never once the session has finished (the design's setting is kept)
        "open_join": state.open_join and state.phase is not Phase.FINISHED,
        "join_door": state.join_door,  # whether an open join needs the stage's door code (never the code)
        "sheet_save_seconds": sheet_save_seconds(len(state.juror_labels)),
        "clip_playback": state.clip_playback.value,
        "screening": screening(state),
    }


def screening(state: LiveState) -> dict[str, Any] | None:
    """The host's latest play of the current question's clip: which question, and when it starts (server time,
    to the millisecond); None before the host plays it (and always with clip_playback ``device``)."""
    current = state.current_question
    if current is None or current.clip_started_at is None:
        return None
    return {"question": current.id, "starts_at": protocol_timestamp(current.clip_started_at, "milliseconds")}


def sheet_save_seconds(jurors: int) -> int:
    """How long a juror page waits at least between two sheet saves: with thousands of jurors each save
    is a message the one writer must take, so pages save less often (1 s up to 500 jurors, one more per 500,
    10 s from 4,501)."""
    return min(MAX_SHEET_SAVE_SECONDS, max(1, -(-jurors // SHEET_SAVES_PER_SECOND)))


def question(item: QuestionInfo) -> dict[str, Any]:
    """A question as players, jurors and the stage see it: no key."""
    return {
        "id": item.id,
        "round": item.round,
        "position": item.position,
        "text": item.text,
        "type": item.type.value,
        "choices": list(item.choices),
        "clip": {"src": item.clip_source, "start": item.clip_start, "end": item.clip_end, "type": item.clip_kind},
    }


def player_question(item: QuestionInfo) -> dict[str, Any]:
    """A question as players see it: plus the bank's ``qid`` (an agent replaying a benchmark's predictions
    looks its answer up by it).  Never for jurors or the stage."""
    return {**question(item), "qid": item.qid}


def round_card(state: LiveState, number: int | None) -> dict[str, Any] | None:
    """A round's aliases, sorted (which alias is whom is never part of it)."""
    if number is None:
        return None
    info = state.round_info[number]
    return {"round": number, "theme": info.theme, "aliases": sorted(info.aliases.values())}


# --- jury and stage ---------------------------------------------------------------------------


def revealed_answers(state: LiveState, item: QuestionInfo) -> dict[str, Any]:
    """All answers to one question, in the recorded shuffled order, every one the same shape."""
    by_alias = state.round_info[item.round].aliases
    answers = state.answers.get(item.id, {})
    rows = []
    for alias in item.reveal_order or []:
        player = next(pid for pid, name in by_alias.items() if name == alias)
        answer = answers.get(player)
        rows.append(_blind_answer(alias, item, answer))
    return {"question": item.id, "round": item.round, "position": item.position, "answers": rows}


def _blind_answer(alias: str, item: QuestionInfo, answer: AnswerInfo | None) -> dict[str, Any]:
    choice = answer.choice_index if answer else None
    choice_text = item.choices[choice] if choice is not None and choice < len(item.choices) else None
    text = answer.text if answer else ""
    if item.type is QuestionType.MCQ and choice_text is not None:
        text = choice_text
    return {"alias": alias, "text": text, "choice": choice, "answered": bool(answer and (text or choice is not None))}


def blind_tally(tally: dict[str, Any]) -> dict[str, Any]:
    """A round's tally by alias only: counts, abstentions, who had a majority."""
    return {
        "round": tally["round"],
        "votes": [{"alias": row["alias"], "votes": row["votes"]} for row in tally["players"]],
        "cast": tally["cast"],
        "abstentions": tally["abstentions"],
        "majority": tally["majority_alias"],
    }


def identities(state: LiveState, number: int) -> dict[str, Any]:
    """What the jury is told about a round's revealed players: alias -> AI or human (age, stage)."""
    info = state.round_info[number]
    rows = []
    for player_id in sorted(info.revealed, key=lambda pid: info.aliases.get(pid, "")):
        player = state.players[player_id]
        rows.append(
            {
                "alias": info.aliases.get(player_id),
                "is_ai": player.kind is PlayerKind.AI,
                "age": player.age if player.kind is PlayerKind.HUMAN else None,
                "stage": player.stage if player.kind is PlayerKind.HUMAN else None,
            }
        )
    return {"round": number, "revealed": rows}


def vote_count(state: LiveState) -> dict[str, Any]:
    """How many jurors have voted in the round (not for whom)."""
    return {
        "round": state.round,
        "voted": state.voted_jurors(),
        "jurors": len(state.juror_labels) - len(state.removed_jurors),
    }


def jury_view(state: LiveState) -> dict[str, Any]:
    """Everything the jury (and the stage) may see now, for snapshots."""
    current = state.current_question
    revealed = [revealed_answers(state, q) for q in state.round_questions(state.round) if q.revealed_at]
    shown_tallies = []
    for number, info in sorted(state.round_info.items()):
        if info.tally and (number < (state.round or 0) or state.phase in TALLY_SHOWN):
            shown_tallies.append(blind_tally(info.tally))
    return {
        "status": status(state),
        "round": round_card(state, state.round),
        "question": question(current) if current and current.shown_at else None,
        "revealed": revealed,
        "tallies": shown_tallies,
        "identities": [identities(state, n) for n, info in sorted(state.round_info.items()) if info.revealed],
    }


def stage_snapshot(state: LiveState) -> dict[str, Any]:
    return {
        "role": "stage",
        "session": {"code": state.code, "title": state.name},
        **jury_view(state),
        "votes": vote_count(state) if state.phase is Phase.VOTING else None,
    }


def juror_snapshot(
    state: LiveState, label: str, sheet: list[dict[str, Any]], votes: list[dict[str, Any]]
) -> dict[str, Any]:
    """``sheet`` and ``votes`` are the juror's own rows of the current round (alias, never player)."""
    mine_sheet = [
        {
            "question": row["question"],
            "alias": row["alias"],
            "note": row["note"],
            "human_likeness": row["human_likeness"],
            "looks_like_ai": row["looks_like_ai"],
        }
        for row in sheet
    ]
    mine_votes = [
        {
            "round": row["round"],
            "slot": row["slot"],
            "alias": row["alias"],
            "confidence": row["confidence"],
            "reason": row["reason"],
        }
        for row in votes
    ]
    return {
        "role": "juror",
        "session": {"code": state.code, "title": state.name},
        "me": {"label": label},
        **jury_view(state),
        "sheet": mine_sheet,
        "votes": mine_votes,
    }


def judgeable_rounds(state: LiveState, *, cut_short: bool = False) -> list[int]:
    """A finished session's rounds that a displaced or AI juror can judge: dealt aliases, a revealed answer and a vote
    the live jury was given; with ``cut_short``, also the rounds cut short (:func:`cut_short_rounds`), which the host
    offers only explicitly: the live jury never judged them."""
    cut = set(cut_short_rounds(state))
    return [
        number
        for number, info in sorted(state.round_info.items())
        if info.aliases
        and any(q.revealed_at for q in state.round_questions(number))
        and (cut_short or number not in cut)
    ]


def cut_short_rounds(state: LiveState) -> list[int]:
    """The rounds begun (aliases dealt) whose vote never opened: the host stopped the session inside them."""
    return [number for number, info in sorted(state.round_info.items()) if info.aliases and info.vote_opened_at is None]


def judged_round(state: LiveState, number: int) -> dict[str, Any]:
    """What the live jury saw of one round, for a displaced or AI juror judging it later: the round's aliases, and
    each revealed question as shown (no key) with its answers under the aliases in the recorded order."""
    questions = [
        {**question(item), "answers": revealed_answers(state, item)["answers"]}
        for item in state.round_questions(number)
        if item.revealed_at
    ]
    return {**round_card(state, number), "questions": questions}


def displaced_snapshot(
    state: LiveState,
    label: str,
    rounds: list[dict[str, Any]],
    sheet: list[dict[str, Any]],
    votes: list[dict[str, Any]],
    *,
    attention: dict[str, Any] | None = None,
    completion_code: str | None = None,
    route: str | None = None,
) -> dict[str, Any]:
    """A displaced juror's snapshot: the rounds to judge as the live jury saw them (``rounds``: :func:`judged_round`
    of each, which the server keeps while the session's state lasts), their own sheet lines and votes (alias, never
    player), the instructed-response line if any, and the completion code once everything is voted.  Never the join
    code (it once opened the stage, which names who was the AI): ``route`` names the session to nginx instead
    (``vtt.access.admission.session_route``)."""
    mine = juror_snapshot(state, label, sheet, votes)
    return {
        "role": "juror",
        "jury": "displaced",
        "session": {"title": state.name, "route": route},
        "me": {**mine["me"], "completion_code": completion_code},
        "vote_slots": state.ai_votes_per_juror,
        "rounds": rounds,
        "sheet": mine["sheet"],
        "votes": mine["votes"],
        "attention": attention,
    }


# --- players -----------------------------------------------------------------------------------


def player_snapshot(state: LiveState, player_id: int) -> dict[str, Any]:
    current = state.current_question
    playing = state.round is not None and player_id in state.participants(state.round)
    mine = state.answers.get(current.id, {}).get(player_id) if current else None
    take = state.recordings.get(current.id, {}).get(player_id) if current else None
    return {
        "role": "player",
        # language: the questions' language, which the page reads aloud in (null: the page's own)
        "session": {"code": state.code, "title": state.name, "language": state.language},
        # answer_modes: this player's page reads aloud, takes spoken answers... (the player's own, never the jury's)
        "me": {"name": state.players[player_id].name, "answer_modes": list(state.players[player_id].answer_modes)},
        "status": status(state),
        "playing": playing,
        "question": player_question(current) if current and current.shown_at and playing else None,
        "answer": {"question": current.id, "text": mine.text, "choice": mine.choice_index} if mine else None,
        # a spoken answer's latest recording of the current question reached the server (the page may record again)
        "recorded": {"question": current.id, "ended_at": protocol_timestamp(take.ended_at, "milliseconds")}
        if take
        else None,
    }


# --- host ------------------------------------------------------------------------------------------


def host_question(item: QuestionInfo) -> dict[str, Any]:
    return {
        **question(item),
        "qid": item.qid,
        "answer_index": item.answer_index,
        "reference_answer": item.reference_answer,
    }


def host_answer(state: LiveState, item: QuestionInfo, answer: AnswerInfo) -> dict[str, Any]:
    player = state.players[answer.player_id]
    alias = state.round_info[item.round].aliases.get(answer.player_id)
    return {
        "question": item.id,
        "player": {"id": player.id, "name": player.name, "kind": player.kind.value},
        "alias": alias,
        "text": answer.text,
        "choice": answer.choice_index,
        "latency_ms": answer.latency_ms,
        "redacted": answer.redacted,
        "edited": answer.edited,
        "tells": identity_tells(answer.text),
        "provenance": answer.provenance,
        "entered_by_host": answer.entered_by_host,
    }


def host_recording(state: LiveState, item: QuestionInfo, player_id: int) -> dict[str, Any]:
    """A spoken answer's latest recording, for the host's console to play (``file`` in the recordings route)."""
    take: RecordingInfo = state.recordings[item.id][player_id]
    return {
        "question": item.id,
        "player": player_id,
        "file": take.file,
        "mime": take.mime,
        "size": take.size,
        "duration_ms": take.duration_ms,
        "ended_at": protocol_timestamp(take.ended_at, "milliseconds"),
        "received_at": protocol_timestamp(take.received_at, "milliseconds"),
        # a transcription backend's suggestion, once the host asked: {text, confidence (0-1 or null), backend, level}
        "suggestion": None if take.suggestion is None else asdict(take.suggestion),
    }


def host_agent(state: LiveState, player_id: int) -> dict[str, Any]:
    """An AI player's agent's last status report and what was answered for the player, for the host's Agents
    panel: the event's payload (``player`` is the id)."""
    return {"player": player_id, **agent_summary(state, player_id)}


def agent_summary(state: LiveState, player_id: int) -> dict[str, Any]:
    """The agent's last report (``status``, ``message``, ``at``; absent when it never reported) with ``answered``
    (the player's answers its agent sent, the whole session) and ``entered`` (those the host entered for it): an
    agent offline after answering is told apart from one that never played."""
    answered = entered = 0
    for answers in state.answers.values():
        answer = answers.get(player_id)
        if answer is not None:
            entered += answer.entered_by_host
            answered += not answer.entered_by_host
    return {**(state.players[player_id].agent or {}), "answered": answered, "entered": entered}


def host_notice(state: LiveState, player_id: int) -> dict[str, Any]:
    """A read-aloud player's page's last word on its voice (no_voice: the host reads the questions aloud)."""
    return {"player": player_id, **(state.players[player_id].speech or {})}


def host_tells(state: LiveState, item: QuestionInfo) -> dict[str, Any]:
    """Answers of a question that would give their player away, for the host to redact or edit."""
    warnings = [
        host_answer(state, item, answer)
        for answer in state.answers.get(item.id, {}).values()
        if identity_tells(answer.text)
    ]
    return {"question": item.id, "warnings": warnings}


def host_status(state: LiveState, moves: list[str]) -> dict[str, Any]:
    """The status plus ``moves`` (``rules.host_moves``: the moves of the flow that fit now, the usual one first;
    the console's buttons). The host's only: the other audiences get :func:`status`."""
    return {**status(state), "moves": moves}


def host_snapshot(state: LiveState, moves: list[str], connected: dict[str, Any] | None = None) -> dict[str, Any]:
    current = state.current_question
    round_answers = {}
    for item in state.round_questions(state.round):
        round_answers[item.id] = [host_answer(state, item, a) for a in state.answers.get(item.id, {}).values()]
    return {
        "role": "host",
        "session": {
            "id": state.session_id,
            "code": state.code,
            "name": state.name,
            "seed": state.seed,
            "reveal_policy": state.reveal_policy.value,
        },
        "status": host_status(state, moves),
        "players": [
            {
                "id": p.id,
                "name": p.name,
                "kind": p.kind.value,
                "age": p.age,
                "stage": p.stage,
                "answer_modes": list(p.answer_modes),
            }
            for p in state.players.values()
        ],
        "rounds": [
            {
                "round": n,
                "theme": info.theme,
                "participants": state.participants(n),
                "aliases": {str(pid): alias for pid, alias in info.aliases.items()},
                "tally": info.tally,
                "revealed": sorted(info.revealed),
            }
            for n, info in sorted(state.round_info.items())
        ],
        "questions": [host_question(q) for q in sorted(state.questions.values(), key=lambda q: (q.round, q.position))],
        "question": host_question(current) if current else None,
        "answers": round_answers,
        "votes": vote_count(state),
        "connected": connected or {},
        "agents": {str(p.id): agent_summary(state, p.id) for p in state.players.values() if p.kind is PlayerKind.AI},
        "notices": {str(p.id): p.speech for p in state.players.values() if p.speech},
        # each person's latest device check: {"players": {"<id>": ...}, "jurors": {"<label>": ...}}; absent: not checked
        "readiness": host_readiness_all(state),
        # the current round's spoken answers: question -> the latest recording of each player who sent one
        "recordings": {
            str(item.id): [host_recording(state, item, player) for player in state.recordings.get(item.id, {})]
            for item in state.round_questions(state.round)
        },
    }
