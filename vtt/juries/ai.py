"""AI jurors: a model judges a finished session's rounds as a juror of the ``ai`` jury (``vtt jury ai``).

* **What the model sees** is what the live jury saw of a round and nothing else: the prompt is built only from
  :func:`vtt.engine.audiences.judged_round` (the blinding allowlist), and from it only the round's number, theme and
  aliases, each revealed question's text, type and choices, and each alias's answer text in the order shown
  (:func:`round_document`). With ``frames`` N, N frames of each question's clip follow as images.
* **Data, never instructions**: the round goes into the user message as one JSON document between ``<round_data>``
  tags, with ``<``, ``>`` and ``&`` written as JSON escapes, so that no answer can close the tag; the system message
  says that everything inside it is data to judge.
* **One call per round**, at most ``concurrency`` at once. The reply is read as one JSON object ``{"alias",
  "confidence", "reason"}`` (:func:`read_reply`); a reply that names no alias of the round is kept as an unread
  ``JurorReply`` and makes no vote, never a guess. A confidence outside 1-5 (or none) is stored as None.
* **Stored** as the votes of one juror per (session, model) with ``jury`` AI (slot 1 per round: the alias, the player
  it stands for, confidence and reason) and one ``JurorReply`` per call, its provenance (model, endpoint without
  credentials, prompt SHA-256, temperature, frames, the raw reply). A call that failed (HTTP error, timeout, a clip
  that could not be read) stores nothing.
* **Resumable**: a round already read for this model and prompt (its SHA-256, which covers the number of frames) is
  not asked again; unread and failed rounds are. A read reply to another prompt replaces the juror's vote of that
  round (the earlier reply stays in ``juror_reply``).
* **Never twice at once**: each round is claimed in the database before it is asked (:mod:`vtt.juries.claims`), so
  two runs of one model on one session share the rounds out; a dead run's claims lapse.
* **No reply crashes a run**: replies and their HTTP bodies are read with :mod:`vtt.protocol.strict_json`; NaN,
  Infinity, 1e999 or nesting thousands deep make a reply unread, with the reason, and it is stored.
* The live jury's figures never see these votes (only ``jury == live`` jurors are counted). No Flask here: the CLI
  and the worker process (``python -m vtt.workers.ai_jury``) run it, never the server's event loop.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
import secrets
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ..engine.audiences import judgeable_rounds, judged_round
from ..kinds import Jury, PlayerKind
from ..model_calls.replies import UnreadReply, ends_at, said_of, shown
from ..model_calls.runs import ModelSettings, RunSummary, Said, ask_model, call_all
from ..models import Event, Juror, JurorReply, Vote, VttSession, utcnow
from ..persistence.locks import lock_session
from ..protocol.strict_json import JsonRefused, decode_at
from .claims import claim_round, lease, let_go, let_go_all, new_run
from .rounds import JuryError, offered_rounds

PROMPTS_FILE = Path(__file__).with_name("prompts.toml")
MAX_REASON = 2000  # characters of a reason kept on the vote
MAX_FIELD = 4000  # characters of a question, choice or answer put in a prompt
MAX_FRAMES = 32  # frames per question's clip
LABEL_LENGTH = Juror.__table__.c.label.type.length
MODEL_LENGTH = Juror.__table__.c.model.type.length
RUN_EVENT = "jury.ai.run"


@dataclass(frozen=True)
class JurySettings(ModelSettings):
    """Where and how to ask (:class:`vtt.model_calls.runs.ModelSettings`), and the frames shown."""

    timeout: float = 120.0
    concurrency: int = 2
    frames: int = 0  # frames of each question's clip sent as images
    frame_size: int = 768
    media_dir: Path | None = None  # where a clip's relative src is (the server's /media/)

    @classmethod
    def refused(cls, message: str, setting: str) -> Exception:
        return JuryError(message, f"bad_{setting}")

    def check(self) -> None:
        if len(self.model) > MODEL_LENGTH:
            raise self.refused(f"a model's name has at most {MODEL_LENGTH} characters", "model")
        if not 0 <= self.frames <= MAX_FRAMES:
            raise self.refused(f"from 0 to {MAX_FRAMES} frames per clip", "frames")


# --- the prompt -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JuryPrompt:
    system: str
    user: str  # with {round} {frames} {aliases}
    frames_line: str  # with {count}

    def sha256(self, frames: int) -> str:
        """The prompt's identity: its template, with the frames line when frames are shown (and their number)."""
        template = [self.system, self.user, self.frames_line.format(count=frames) if frames else ""]
        return hashlib.sha256(json.dumps(template).encode()).hexdigest()

    def text(self, seen: dict[str, Any], frames: int = 0) -> str:
        """The user message's text for the round ``seen`` (:func:`judged_round`'s output)."""
        document = round_document(seen)
        return self.user.format(
            round=data_json(document),
            frames=self.frames_line.format(count=frames) + "\n" if frames else "",
            aliases=", ".join(document["aliases"]),
        )

    def messages(
        self, seen: dict[str, Any], frames: int = 0, images: list[tuple[int, list[tuple[str, bytes]]]] | None = None
    ) -> list[dict[str, Any]]:
        """System and user messages; ``images``: (question number, its clip's frames) as image_url parts."""
        from ..agents.frames import data_url

        text = self.text(seen, frames)
        content: Any = text
        if images:
            content = [{"type": "text", "text": text}]
            for number, shown in images:
                content.append({"type": "text", "text": f"Question {number}:"})
                content += [{"type": "image_url", "image_url": {"url": data_url(mime, data)}} for mime, data in shown]
        return [{"role": "system", "content": self.system}, {"role": "user", "content": content}]


def load_prompt(path: Path = PROMPTS_FILE) -> JuryPrompt:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    if not all(isinstance(data.get(key), str) for key in ("system", "user", "frames")):
        raise ValueError(f"{path}: needs system, user and frames")
    return JuryPrompt(data["system"], data["user"], data["frames"])


def round_document(seen: dict[str, Any]) -> dict[str, Any]:
    """The round as the model reads it, field by field from what the live jury saw (no ids, no clip file names)."""
    questions = []
    for number, item in enumerate(seen["questions"], 1):
        question: dict[str, Any] = {"number": number, "text": _field(item["text"]), "type": item["type"]}
        if item["choices"]:
            question["choices"] = [_field(choice) for choice in item["choices"]]
        question["answers"] = [
            {"alias": row["alias"], "answer": _field(row["text"]) if row["answered"] else None}
            for row in item["answers"]
        ]
        questions.append(question)
    document: dict[str, Any] = {"round": seen["round"], "aliases": list(seen["aliases"])}
    if seen.get("theme"):
        document["theme"] = _field(seen["theme"])
    document["questions"] = questions
    return document


def data_json(document: dict[str, Any]) -> str:
    """``document`` as JSON that cannot close a tag: <, > and & escaped (JSON reads them back unchanged)."""
    text = json.dumps(document, ensure_ascii=False, indent=1)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _field(text: str | None) -> str:
    return (text or "")[:MAX_FIELD]


# --- reading a reply ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    alias: str
    confidence: int | None
    reason: str


def read_reply(reply: str, aliases: Iterable[str]) -> Verdict:
    """The JSON object ending ``reply`` (after a ``<think>`` block or prose, perhaps in a code fence) with an alias
    of the round; UnreadReply otherwise. A confidence that is not a whole number from 1 to 5 is None. The JSON is
    read strictly (:mod:`vtt.protocol.strict_json`): an object holding NaN, Infinity, a number such as 1e999 or
    nesting thousands deep is refused, and when it is the reply's last, the reply is unread for that reason."""
    aliases = list(aliases)
    said = said_of(reply)
    found: tuple[dict, int] | None = None
    refused: tuple[int, str] | None = None  # the last object the strict reader refused: where, and why
    for match in re.finditer(r"\{", said):
        if found is not None and match.start() < found[1]:
            continue  # inside the object found
        try:
            value, end = decode_at(said, match.start())
        except JsonRefused as refusal:
            refused = (match.start(), str(refusal))
            continue
        except ValueError:
            continue
        if isinstance(value, dict) and "alias" in value:
            found = (value, end)
    if refused is not None and (found is None or refused[0] >= found[1]):
        raise UnreadReply(f"the reply's JSON is refused: {refused[1]}")
    if found is None:
        raise UnreadReply(f'no {{"alias": ...}} object in the reply {shown(said)}')
    value, end = found
    if not ends_at(said, end):
        raise UnreadReply(f"the reply does not end with its JSON object: {shown(said)}")
    named = value["alias"].strip() if isinstance(value["alias"], str) else None
    alias = next((a for a in aliases if named is not None and a.casefold() == named.casefold()), None)
    if alias is None:
        raise UnreadReply(f"{value['alias']!r} is not an alias of the round ({', '.join(aliases)})")
    reason = value.get("reason")
    return Verdict(alias, _confidence(value.get("confidence")), reason[:MAX_REASON] if isinstance(reason, str) else "")


def _confidence(value: Any) -> int | None:
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return int(value) if value == int(value) and 1 <= value <= 5 else None


# --- the session's rounds and its AI jurors ------------------------------------------------------------------------


@dataclass(frozen=True)
class Ask:
    round: int
    seen: dict[str, Any]  # judged_round's output
    players: dict[str, int]  # alias -> player id (never in the prompt)


def rounds_to_judge(
    db: Session, session_id: int, rounds: Iterable[int] | None = None, *, cut_short: bool = False
) -> list[Ask]:
    """What a juror saw of each chosen round of a finished session; JuryError when it has not finished or a round
    cannot be judged (no aliases dealt, no answer revealed, or cut short and not offered with ``cut_short``)."""
    vtt_session = db.get(VttSession, session_id)
    if vtt_session is None:
        raise JuryError(f"no session with id {session_id}", "no_session")
    state, chosen = offered_rounds(db, vtt_session, rounds, cut_short)
    if chosen is None:
        chosen = judgeable_rounds(state)
    return [
        Ask(number, judged_round(state, number), {a: p for p, a in state.round_info[number].aliases.items()})
        for number in chosen
    ]


def ai_juror(db: Session, session_id: int, model: str, rounds: Iterable[int] = ()) -> Juror:
    """The session's AI juror of ``model``, made on first use ("AI " + the model, cut to fit, numbered when taken);
    its ``rounds`` grow by ``rounds``. Flushes."""
    juror = db.scalar(select(Juror).where(Juror.session_id == session_id, Juror.jury == Jury.AI, Juror.model == model))
    if juror is None:
        taken = set(db.scalars(select(Juror.label).where(Juror.session_id == session_id)))
        juror = Juror(
            session_id=session_id,
            label=ai_label(model, taken),
            token=secrets.token_urlsafe(18),  # no live link: the live socket refuses a juror of another jury
            jury=Jury.AI,
            model=model,
            juror_group="ai",
        )
        db.add(juror)
    juror.rounds = sorted(set(juror.rounds or []) | set(rounds)) or None
    db.flush()
    return juror


def made_juror(db_factory: Callable[[], Session], session_id: int, model: str, rounds: list[int]) -> tuple[int, str]:
    """The id and label of the session's AI juror of ``model`` (:func:`ai_juror`), committed: when another run makes
    it at the same moment, its insert fails on the label's unique key and the juror it made is found again."""
    failed = 0
    while True:
        with db_factory() as db:
            try:
                # Runs that start together queue here: unlocked, one could find no juror of the model, then see
                # the other's label taken and make a second juror ("AI m 2") whose claims the first never sees.
                lock_session(db, session_id)
                juror = ai_juror(db, session_id, model, rounds)
                db.commit()
                return juror.id, juror.label
            except IntegrityError:
                failed += 1
                if failed == 3:  # not a race: a label taken over and over
                    raise


def ai_label(model: str, taken: set[str]) -> str:
    base = " ".join(f"AI {model}".split())[:LABEL_LENGTH].rstrip()
    label, number = base, 1
    while label in taken:
        number += 1
        suffix = f" {number}"
        label = base[: LABEL_LENGTH - len(suffix)].rstrip() + suffix
    return label


def judged_before(db: Session, juror_id: int, sha256: str) -> set[int]:
    """The rounds ``juror_id`` has a read reply for with the prompt ``sha256``."""
    return set(
        db.scalars(
            select(JurorReply.round).where(
                JurorReply.juror_id == juror_id, JurorReply.prompt_sha256 == sha256, JurorReply.read.is_(True)
            )
        )
    )


def answered_since(db: Session, juror_id: int, number: int, sha256: str, since: datetime) -> bool:
    """Whether round ``number`` has a read reply to the prompt ``sha256``, or any reply to it stored since ``since``
    (another run asked it while this one was under way)."""
    return (
        db.scalar(
            select(JurorReply.id)
            .where(
                JurorReply.juror_id == juror_id,
                JurorReply.round == number,
                JurorReply.prompt_sha256 == sha256,
                JurorReply.read.is_(True) | (JurorReply.asked_at >= since),
            )
            .limit(1)
        )
        is not None
    )


# --- asking ---------------------------------------------------------------------------------------------------------


class JurorSaid(Said):
    """What one call gave (:class:`vtt.model_calls.runs.Said`): a verdict, or a reply without one (``problem``),
    or a failure (``failed``)."""

    @property
    def verdict(self) -> Verdict | None:
        return self.value


async def ask_all(
    settings: JurySettings,
    prompt: JuryPrompt,
    asks: list[Ask],
    heard: Callable[[JurorSaid], bool],
    take: Callable[[Ask], bool] | None = None,
) -> None:
    """Every round, ``settings.concurrency`` at a time (:func:`vtt.model_calls.runs.call_all`); ``heard`` returns
    False to stop the run; ``take``, when given, is asked first whether this run asks the round (False: another run
    does)."""
    import aiohttp

    from ..agents.frames import Clips

    async with aiohttp.ClientSession() as http:
        clips = Clips(http)
        try:
            await call_all(asks, settings.concurrency, partial(ask_one, http, clips, settings, prompt), heard, take)
        finally:
            clips.close()


async def ask_one(http: Any, clips: Any, settings: JurySettings, prompt: JuryPrompt, ask: Ask) -> JurorSaid:
    from ..agents.frames import ClipError

    try:
        images = await round_frames(clips, settings, ask.seen) if settings.frames else None
    except ClipError as error:
        return JurorSaid(ask, problem=str(error), failed=True)
    body = request_body(settings, prompt, ask.seen, images)
    return await ask_model(http, settings, body, ask, lambda reply: read_reply(reply, ask.seen["aliases"]), JurorSaid)


def request_body(
    settings: JurySettings, prompt: JuryPrompt, seen: dict[str, Any], images: list[tuple[int, list]] | None = None
) -> dict[str, Any]:
    """One round's chat-completions request body (docs/juries.md shows one, made here: vtt.juries.request_example)."""
    return settings.body(prompt.messages(seen, settings.frames, images))


async def round_frames(clips: Any, settings: JurySettings, seen: dict[str, Any]) -> list[tuple[int, list]]:
    """``settings.frames`` frames of each question's clip over the span the players saw: (question number, frames)."""
    from ..agents.frames import ClipError, sample_frames

    found = []
    for number, item in enumerate(seen["questions"], 1):
        clip = item.get("clip") or {}
        if not clip.get("src"):
            raise ClipError(f"question {number} of round {seen['round']} has no clip to take frames from")
        path = await clip_path(clips, settings, clip["src"])
        frames = await asyncio.to_thread(
            sample_frames, path, settings.frames, clip.get("start"), clip.get("end"), size=settings.frame_size
        )
        found.append((number, frames))
    return found


async def clip_path(clips: Any, settings: JurySettings, src: str) -> Path:
    """A clip on this machine: an http(s) URL fetched once, a path under the media folder (``/media/...`` or
    relative) as it is."""
    from ..agents.frames import ClipError

    if src.startswith(("http://", "https://")):
        return await clips.local(src, settings.timeout)
    if settings.media_dir is None:
        raise ClipError(f"no media folder to find the clip {src} in")
    relative = src.removeprefix("/media/").lstrip("/")
    folder = settings.media_dir.resolve()
    path = (folder / relative).resolve()
    if not path.is_relative_to(folder) or not path.is_file():
        raise ClipError(f"the clip {src} is not in the media folder {folder}")
    return path


# --- storing --------------------------------------------------------------------------------------------------------


def store(
    db: Session, juror: Juror, settings: JurySettings, sha256: str, said: JurorSaid, run: str | None = None
) -> None:
    """One reply (and, read, the juror's vote of the round); a failure keeps nothing. ``run``'s claim of the round
    is let go in the same transaction. Commits."""
    ask, verdict = said.ask, said.verdict
    if run is not None:
        let_go(db, juror.id, ask.round, run)
    if said.failed:
        db.commit()
        return
    db.add(
        JurorReply(
            session_id=juror.session_id,
            juror_id=juror.id,
            round=ask.round,
            model=settings.model,
            endpoint=settings.endpoint[:500],
            prompt_sha256=sha256,
            temperature=settings.temperature,
            frames=settings.frames,
            reply=said.reply,
            read=verdict is not None,
            asked_at=utcnow(),
        )
    )
    if verdict is not None:
        vote = db.scalar(
            select(Vote).where(
                Vote.session_id == juror.session_id, Vote.round == ask.round, Vote.juror_id == juror.id, Vote.slot == 1
            )
        )
        if vote is None:
            vote = Vote(session_id=juror.session_id, round=ask.round, juror_id=juror.id, slot=1)
            db.add(vote)
        vote.alias, vote.player_id = verdict.alias, ask.players[verdict.alias]
        vote.confidence, vote.reason = verdict.confidence, verdict.reason
        vote.cast_at, vote.client_key = utcnow(), secrets.token_hex(16)
    db.commit()


# --- a run ----------------------------------------------------------------------------------------------------------


@dataclass
class JuryRunSummary(RunSummary):
    """What a run did (:class:`vtt.model_calls.runs.RunSummary`: asked, unread, failed, stopped, first_failure,
    problems), and what of it the AI jury counts."""

    juror: str = ""  # the AI juror's label
    model: str = ""
    rounds: list[int] = field(default_factory=list)  # the rounds chosen
    read: int = 0  # replies that named an alias: a vote each (unread: those that named none)
    skipped: int = 0  # rounds judged before by this model and prompt (or meanwhile, by another run)
    votes: int = 0  # the juror's votes in the chosen rounds after the run
    named_ai: int = 0  # of those, how many name an AI player
    prompt_sha256: str = ""
    busy: int = 0  # rounds another run of this model was asking (left to it)

    @property
    def nothing_read(self) -> str | None:
        """Why the run read nothing although it asked: calls failed and no reply was read (None otherwise)."""
        return self.nothing_done(self.read, "no round could be read")


def judge_session(
    db_factory: Callable[[], Session],
    session_id: int,
    settings: JurySettings,
    rounds: Iterable[int] | None = None,
    *,
    cut_short: bool = False,
    started: Callable[[int], None] | None = None,
    progress: Callable[[JurorSaid], None] | None = None,
) -> JuryRunSummary:
    """Ask ``settings.model`` to judge every chosen round not yet read with this prompt (``cut_short``: a round cut
    short too); what happened. JuryError (nothing written) when the session has not finished or a round cannot be
    judged."""
    prompt = load_prompt()
    sha256 = prompt.sha256(settings.frames)
    summary = JuryRunSummary(model=settings.model, prompt_sha256=sha256)
    run, held, began = new_run(), lease(settings.timeout), utcnow()
    with db_factory() as db:
        every = rounds_to_judge(db, session_id, rounds, cut_short=cut_short)
    summary.rounds = [ask.round for ask in every]
    juror_id, summary.juror = made_juror(db_factory, session_id, settings.model, summary.rounds)
    with db_factory() as db:
        done = judged_before(db, juror_id, sha256)
    asks = [ask for ask in every if ask.round not in done]
    summary.skipped = len(every) - len(asks)
    if started is not None:
        started(len(asks))

    def take(ask: Ask) -> bool:
        """Claim the round before asking it (vtt.juries.claims); a round another run holds, or read meanwhile, is
        left alone."""
        if not claim_round(db_factory, session_id, juror_id, ask.round, run, held):
            summary.busy += 1
            return False
        with db_factory() as db:
            if not answered_since(db, juror_id, ask.round, sha256, began):
                return True
            let_go(db, juror_id, ask.round, run)
            db.commit()
        summary.skipped += 1
        return False

    def heard(said: JurorSaid) -> bool:
        go_on = summary.heard(said, f"round {said.ask.round}", settings.max_failures)
        summary.read += said.verdict is not None
        with db_factory() as db:
            store(db, db.get(Juror, juror_id), settings, sha256, said, run)
        if progress is not None:
            progress(said)
        return go_on

    try:
        if asks:
            asyncio.run(ask_all(settings, prompt, asks, heard, take))
    finally:
        let_go_all(db_factory, juror_id, run)
    with db_factory() as db:
        summary.votes, summary.named_ai = _named(db, session_id, juror_id, summary.rounds)
        db.add(
            Event(
                session_id=session_id,
                kind=RUN_EVENT,
                actor=settings.model[:120],
                payload={
                    "endpoint": settings.endpoint,
                    "temperature": settings.temperature,
                    "frames": settings.frames,
                    **{k: v for k, v in summary.as_dict().items() if k != "problems"},
                },
            )
        )
        db.commit()
    return summary


def _named(db: Session, session_id: int, juror_id: int, rounds: list[int]) -> tuple[int, int]:
    """The juror's votes in ``rounds``, and how many of them name an AI player."""
    from ..models import Player

    kinds = db.execute(
        select(Player.kind)
        .join(Vote, (Vote.player_id == Player.id) & (Vote.session_id == Player.session_id))
        .where(Vote.session_id == session_id, Vote.juror_id == juror_id, Vote.round.in_(rounds or [0]))
    ).scalars()
    kinds = list(kinds)
    return len(kinds), sum(kind is PlayerKind.AI for kind in kinds)


# --- what the results page shows ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AiJurorCard:
    label: str
    model: str
    votes: int
    named_ai: int
    unread: int  # rounds whose latest reply was unread and that have no vote


def ai_jurors(db: Session, session_id: int) -> list[AiJurorCard]:
    """The session's AI jurors with their votes (how many name an AI) and rounds left unread."""
    cards = []
    for juror in db.scalars(
        select(Juror).where(Juror.session_id == session_id, Juror.jury == Jury.AI).order_by(Juror.id)
    ):
        voted = set(db.scalars(select(Vote.round).where(Vote.juror_id == juror.id)))
        replied = set(db.scalars(select(JurorReply.round).where(JurorReply.juror_id == juror.id)))
        votes, named_ai = _named(db, session_id, juror.id, sorted(voted))
        cards.append(AiJurorCard(juror.label, juror.model or "", votes, named_ai, len(replied - voted)))
    return cards


def last_run(db: Session, session_id: int) -> Event | None:
    return db.scalar(
        select(Event).where(Event.session_id == session_id, Event.kind == RUN_EVENT).order_by(Event.id.desc()).limit(1)
    )
