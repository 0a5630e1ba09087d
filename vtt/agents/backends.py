"""What answers a question: ``replay:FILE``, ``http:URL``, ``python:MODULE:FUNCTION``, or a composite by type.

A backend gets an :class:`Asked` (the question as the server sent it, where its clip is, the
deadline, the seconds it may take) and returns a :class:`Reply`: the option or the text, and the
provenance the answer carries (``{"backend", "model", "settings"}``: kept from the jury, shown in the
host's export and the reports, so a paper can name exactly what played).  A backend that cannot
answer raises :class:`BackendError` with a sentence for the host; a bad ``--backend`` argument is a
:class:`SpecError`, raised before the agent connects.
"""

from __future__ import annotations

import asyncio
import difflib
import hashlib
import importlib
import importlib.util
import inspect
import json
import random
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model_calls.endpoints import chat_endpoint, is_http_url, public_url
from ..model_calls.http import CallFailed, chat_body, chat_completion
from ..protocol.vocabulary import MAX_BACKEND, MAX_PROVENANCE, MAX_TEXT
from .choices import LETTERS, NoOption, lettered, normalised, option_in_reply, option_index
from .frames import ClipError, clip_url, data_url, sample_frames

ON_UNPARSED = ("skip", "first", "random", "text")
ROUTES = ("mcq", "open")
DEFAULT_SYSTEM = (
    "You are a player in a quiz about short video clips. Answer each question briefly and "
    "naturally, the way a person who has just watched the clip would."
)


class BackendError(RuntimeError):
    """A question the backend could not answer; ``str(error)`` is the sentence for the host."""


class SpecError(ValueError):
    """A ``--backend`` SPEC (or an option of it) that cannot be used; the message names the problem."""


@dataclass
class Asked:
    """A question to answer, with what a backend needs around it."""

    question: dict[str, Any]
    server: str
    deadline: str | None = None  # ISO, once answering is open
    timeout: float = 60.0  # seconds this backend may take (bounded by the deadline)

    @property
    def id(self) -> int:
        return self.question["id"]

    @property
    def qid(self) -> str | None:
        return self.question.get("qid")

    @property
    def mcq(self) -> bool:
        return self.question.get("type") == "mcq"

    @property
    def choices(self) -> list[str]:
        return list(self.question.get("choices") or [])

    @property
    def clip_url(self) -> str | None:
        return clip_url(self.server, self.question.get("clip"))

    def as_dict(self) -> dict[str, Any]:
        """What a Python backend gets: the question as sent, plus ``clip.url`` (absolute) and ``deadline``."""
        clip = dict(self.question.get("clip") or {})
        clip["url"] = self.clip_url
        return {**self.question, "clip": clip, "deadline": self.deadline}


@dataclass
class Reply:
    choice: int | None
    text: str | None
    provenance: dict[str, Any]
    note: str = ""  # for the log: how an unparsed reply was handled, ...

    def shown(self, choices: list[str]) -> str:
        if self.choice is not None:
            label = LETTERS[self.choice] if self.choice < 26 else str(self.choice)
            option = choices[self.choice] if self.choice < len(choices) else ""
            return f"{label} {json.dumps(option, ensure_ascii=False)}"
        return json.dumps(self.text, ensure_ascii=False)

    def content(self) -> dict[str, Any]:
        return {"choice": self.choice} if self.choice is not None else {"text": self.text}


@dataclass
class Options:
    """The ``vtt agent`` options the backends share."""

    model: str | None = None
    temperature: float | None = 0.0
    system: str | None = None
    timeout: float = 60.0
    api_key: str | None = None
    frames: int = 0
    frame_size: int = 768
    frame_format: str = "jpeg"
    max_tokens: int | None = None
    on_unparsed: str = "skip"
    seed: int = 0


@dataclass
class Services:
    """What the runner lends its backends: one HTTP client and the clip cache."""

    http: Any = None  # aiohttp.ClientSession
    clips: Any = None  # frames.Clips


class Backend:
    kind = "?"

    def __init__(self, spec: str):
        self.spec = spec
        self.services = Services()

    def describe(self) -> str:
        return self.spec

    def provenance(self) -> dict[str, Any]:
        raise NotImplementedError

    def needs_http(self) -> bool:
        return False

    def attach(self, services: Services) -> None:
        self.services = services

    async def answer(self, asked: Asked) -> Reply:
        raise NotImplementedError

    def route(self, asked: Asked) -> Backend:
        return self


# --- answers given as data (replay, python) -------------------------------------------------------


def reply_from(value: Any, asked: Asked, provenance: dict[str, Any], source: str) -> Reply:
    """A backend's value as an answer: mcq an option index, letter or text (as ``vtt analyze`` reads them),
    open a text; a dict ``{"choice": ...}`` or ``{"text": ...}`` is taken as it says."""
    if isinstance(value, dict):
        known = {key: value[key] for key in ("choice", "text") if value.get(key) is not None}
        if len(known) != 1:
            raise BackendError(f"{source} returned {value!r}: give one of choice or text")
        value = next(iter(known.values()))
    if value is None:
        raise BackendError(f"{source} gave no answer")
    if asked.mcq:
        try:
            return Reply(option_index(value, asked.choices), None, provenance)
        except NoOption as problem:
            raise BackendError(f"{source}: {problem}") from None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise BackendError(f"{source} returned {type(value).__name__} {value!r}, not a text answer")
    text = str(value).strip()
    if not text:
        raise BackendError(f"{source} gave an empty answer")
    return Reply(None, text[:MAX_TEXT], provenance, note="cut to 4000 characters" if len(text) > MAX_TEXT else "")


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class ReplayBackend(Backend):
    """Answers from a predictions file keyed by qid (CSV, JSON or JSONL, read as ``vtt analyze`` reads them)."""

    kind = "replay"

    def __init__(self, spec: str, path: Path):
        super().__init__(spec)
        from analysis.predictions import PredictionsError, read_predictions

        if not path.is_file():
            raise SpecError(f"replay: no file {str(path)!r}")
        try:
            table = read_predictions(path)
        except (PredictionsError, ValueError, OSError) as error:
            raise SpecError(f"replay: {error}") from None
        self.path = path
        self.predictions: dict[str, str] = {}
        for qid, answer in zip(table["qid"], table["answer"], strict=True):
            earlier = self.predictions.setdefault(qid, answer)
            if earlier != answer:
                raise SpecError(f"replay: {path.name} has two predictions for qid {qid!r}: {earlier!r} and {answer!r}")
        if not self.predictions:
            raise SpecError(f"replay: {path.name} holds no predictions")
        self.sha256 = file_sha256(path)

    def provenance(self) -> dict[str, Any]:
        return {
            "backend": "replay",
            "model": self.path.name,
            "settings": {"file": self.path.name, "sha256": self.sha256, "predictions": len(self.predictions)},
        }

    async def answer(self, asked: Asked) -> Reply:
        if not asked.qid:
            raise BackendError("the question came without its qid: a replay backend needs it")
        if asked.qid not in self.predictions:
            raise BackendError(f"qid {asked.qid!r} is not in {self.path.name}")
        value = self.predictions[asked.qid]
        if value == "":
            raise BackendError(f"{self.path.name} has an empty prediction for qid {asked.qid!r}")
        return reply_from(value, asked, self.provenance(), f"the prediction for qid {asked.qid!r} in {self.path.name}")


class PythonBackend(Backend):
    """``python:MODULE:FUNCTION`` (or ``python:path/to/file.py:FUNCTION``): a callable, sync or async, that gets
    the question (a dict) and returns an option index, an option's text or letter, or a text."""

    kind = "python"

    def __init__(self, spec: str, target: str):
        super().__init__(spec)
        self.function, self.label, self.source = load_callable(target)
        self.sha256 = file_sha256(self.source) if self.source else None

    def provenance(self) -> dict[str, Any]:
        settings = {"source": self.source.name, "sha256": self.sha256} if self.source else {}
        return {"backend": "python", "model": self.label, "settings": settings}

    async def answer(self, asked: Asked) -> Reply:
        source = f"{self.label}"
        try:
            if inspect.iscoroutinefunction(self.function):
                value = await self.function(asked.as_dict())
            else:
                value = await asyncio.to_thread(self.function, asked.as_dict())
            if inspect.isawaitable(value):
                value = await value
        except (asyncio.CancelledError, BackendError):
            raise
        except Exception as error:
            raise BackendError(f"{source} raised {type(error).__name__}: {error}") from error
        return reply_from(value, asked, self.provenance(), source)


def load_callable(target: str) -> tuple[Callable[..., Any], str, Path | None]:
    module_name, _, name = target.rpartition(":")
    if not module_name or not name:
        raise SpecError(f"python:{target}: give python:MODULE:FUNCTION (or python:FILE.py:FUNCTION)")
    try:
        if module_name.endswith(".py"):
            path = Path(module_name)
            if not path.is_file():
                raise SpecError(f"python: no file {module_name!r}")
            spec = importlib.util.spec_from_file_location(f"vtt_agent_{path.stem}", path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
            label = f"{path.name}:{name}"
        else:
            if "" not in sys.path and str(Path.cwd()) not in sys.path:
                sys.path.insert(0, str(Path.cwd()))  # as `python -m` would: the current folder's modules
            module = importlib.import_module(module_name)
            label = f"{module_name}:{name}"
    except SpecError:
        raise
    except Exception as error:
        raise SpecError(f"python: cannot import {module_name}: {type(error).__name__}: {error}") from None
    function = getattr(module, name, None)
    if not callable(function):
        raise SpecError(f"python: {module_name} has no function {name!r}")
    source = getattr(module, "__file__", None)
    return function, label, Path(source) if source else None


# --- an OpenAI-compatible chat-completions endpoint -------------------------------------------------


class HttpBackend(Backend):
    """Asks an OpenAI-compatible chat-completions endpoint (vLLM, Ollama, llama.cpp, ...), with ``frames`` frames
    of the clip as images when asked to."""

    kind = "http"

    def __init__(self, spec: str, url: str, options: Options):
        super().__init__(spec)
        if not is_http_url(url):
            raise SpecError(f"http: {url!r} is not an http:// or https:// URL")
        if not options.model:
            raise SpecError("http backends need --model NAME (the model the endpoint serves)")
        self.url = chat_endpoint(url)
        self.options = options
        self.system = options.system if options.system is not None else DEFAULT_SYSTEM

    def needs_http(self) -> bool:
        return True

    def describe(self) -> str:
        return f"http:{public_url(self.url)} model {self.options.model}"

    def provenance(self) -> dict[str, Any]:
        o = self.options
        settings = {
            "endpoint": public_url(self.url),
            "temperature": o.temperature,
            "frames": o.frames,
            "system": self.system,
            "system_sha256": hashlib.sha256(self.system.encode()).hexdigest(),
            "timeout": o.timeout,
            "on_unparsed": o.on_unparsed,
        }
        if o.frames:
            settings.update(frame_size=o.frame_size, frame_format=o.frame_format)
        if o.max_tokens is not None:
            settings["max_tokens"] = o.max_tokens
        return {"backend": "http", "model": o.model, "settings": settings}

    def prompt(self, asked: Asked, frames: int) -> str:
        lines = [f"Question: {asked.question.get('text', '')}"]
        if asked.mcq:
            lines += ["Options:", lettered(asked.choices), "Reply with the letter of one option only."]
        else:
            lines.append("Answer in one or two short sentences.")
        clip = asked.question.get("clip") or {}
        if asked.clip_url:
            span = ""
            if clip.get("start") is not None or clip.get("end") is not None:
                span = f", from {_seconds(clip.get('start') or 0)} to {_seconds(clip.get('end'))}"
            lines.append(f"The clip: {asked.clip_url}{span}.")
        if frames:
            lines.append(f"Here are {frames} frames taken evenly from the clip, in order.")
        return "\n".join(lines)

    async def _frames(self, asked: Asked) -> list[tuple[str, bytes]]:
        o = self.options
        if not o.frames:
            return []
        url = asked.clip_url
        if url is None:
            raise BackendError("the question has no clip to take frames from (--frames)")
        try:
            path = await self.services.clips.local(url, asked.timeout)
            clip = asked.question.get("clip") or {}
            return await asyncio.to_thread(
                sample_frames, path, o.frames, clip.get("start"), clip.get("end"), size=o.frame_size, fmt=o.frame_format
            )
        except ClipError as error:
            raise BackendError(str(error)) from None

    def request(self, asked: Asked, frames: list[tuple[str, bytes]]) -> dict[str, Any]:
        text = self.prompt(asked, len(frames))
        if frames:
            content: Any = [{"type": "text", "text": text}] + [
                {"type": "image_url", "image_url": {"url": data_url(mime, data)}} for mime, data in frames
            ]
        else:
            content = text
        messages = [{"role": "system", "content": self.system}, {"role": "user", "content": content}]
        return chat_body(self.options.model, messages, self.options.temperature, self.options.max_tokens)

    async def answer(self, asked: Asked) -> Reply:
        frames = await self._frames(asked)
        body = self.request(asked, frames)
        try:
            said, data = await chat_completion(self.services.http, self.url, body, self.options.api_key, asked.timeout)
        except CallFailed as failure:  # an unreadable body too: the question goes unanswered
            raise BackendError(str(failure)) from None
        provenance = self.provenance()
        if frames:  # what the model saw: the players' clip and span (the question as the server sent it)
            clip = asked.question.get("clip") or {}
            provenance["settings"]["clip"] = {
                "src": clip.get("src"),
                "start": clip.get("start"),
                "end": clip.get("end"),
                "frames_sent": len(frames),
            }
        served = data.get("model") if isinstance(data, dict) else None
        if served and served != self.options.model:
            provenance["settings"]["served_model"] = str(served)[:200]
        return self.read(said, asked, provenance)

    def read(self, said: str, asked: Asked, provenance: dict[str, Any]) -> Reply:
        """The model's reply as an answer: an mcq reply parsed to an option (else ``--on-unparsed``)."""
        said = re.sub(r"<think>.*?</think>", "", said or "", flags=re.S | re.I).strip()
        if not asked.mcq:
            if not said:
                raise BackendError(f"{self.options.model} replied with an empty answer")
            return Reply(None, said[:MAX_TEXT], provenance)
        chosen = option_in_reply(said, asked.choices)
        if chosen is not None:
            return Reply(chosen, None, provenance)
        how = self.options.on_unparsed
        shown = json.dumps(" ".join(said.split())[:200], ensure_ascii=False)
        if how == "skip" or not asked.choices:
            raise BackendError(f"{self.options.model}'s reply names no option: {shown} (--on-unparsed skip)")
        if how == "first":
            chosen = 0
        elif how == "random":
            chosen = random.Random(f"{self.options.seed}:{asked.id}").randrange(len(asked.choices))
        else:  # text: the option whose text is most like the reply
            said_text = normalised(said)
            chosen = max(
                range(len(asked.choices)),
                key=lambda index: difflib.SequenceMatcher(None, said_text, normalised(asked.choices[index])).ratio(),
            )
        provenance["settings"]["unparsed_reply"] = how
        return Reply(chosen, None, provenance, note=f"the reply {shown} names no option: answered as {how}")


def _seconds(value: Any) -> str:
    return "the end" if value is None else f"{float(value):g} s"


# --- one player, a backend per question type ------------------------------------------------------


class Composite(Backend):
    """Routes mcq and open questions to different backends; plays as one player."""

    kind = "composite"

    def __init__(self, routes: dict[str, Backend], default: Backend | None):
        super().__init__(", ".join(f"{kind}={backend.spec}" for kind, backend in routes.items()))
        self.routes, self.default = routes, default
        if default is not None:
            self.spec = ", ".join([default.spec, self.spec])

    def backends(self) -> list[Backend]:
        return [*self.routes.values(), *([self.default] if self.default else [])]

    def needs_http(self) -> bool:
        return any(backend.needs_http() for backend in self.backends())

    def attach(self, services: Services) -> None:
        for backend in self.backends():
            backend.attach(services)

    def describe(self) -> str:
        parts = [f"{kind}={backend.describe()}" for kind, backend in self.routes.items()]
        return ", ".join(([self.default.describe()] if self.default else []) + parts)

    def route(self, asked: Asked) -> Backend:
        kind = "mcq" if asked.mcq else "open"
        backend = self.routes.get(kind, self.default)
        if backend is None:
            raise BackendError(f"no backend answers {kind} questions (give --backend {kind}=SPEC)")
        return backend

    def provenance(self) -> dict[str, Any]:
        return {
            "backend": "composite",
            "model": None,
            "settings": {kind: backend.provenance() for kind, backend in self.routes.items()},
        }

    async def answer(self, asked: Asked) -> Reply:
        reply = await self.route(asked).answer(asked)
        reply.provenance.setdefault("settings", {})["route"] = "mcq" if asked.mcq else "open"
        return reply


# --- --backend SPEC ... ----------------------------------------------------------------------------


def backend_from(spec: str, options: Options) -> Backend:
    kind, _, rest = spec.partition(":")
    if kind == "replay" and rest:
        return ReplayBackend(spec, Path(rest).expanduser())
    if kind == "http" and rest:
        return HttpBackend(spec, rest, options)
    if kind == "python" and rest:
        return PythonBackend(spec, rest)
    raise SpecError(
        f"unknown backend {spec!r}: give replay:FILE, http:URL or python:MODULE:FUNCTION (or mcq=SPEC and open=SPEC)"
    )


def build(specs: list[str] | tuple[str, ...], options: Options) -> Backend:
    """One backend from the ``--backend`` values: one SPEC, or ``mcq=SPEC`` / ``open=SPEC`` routes (with at most
    one unrouted SPEC for the rest)."""
    if not specs:
        raise SpecError("give --backend SPEC")
    if options.on_unparsed not in ON_UNPARSED:
        raise SpecError(f"--on-unparsed must be one of {', '.join(ON_UNPARSED)}")
    routes: dict[str, Backend] = {}
    default: Backend | None = None
    for spec in specs:
        routed = re.match(r"^(mcq|open)=(.+)$", spec.strip())
        if routed:
            kind, inner = routed.groups()
            if kind in routes:
                raise SpecError(f"--backend {kind}=... is given twice")
            routes[kind] = backend_from(inner.strip(), options)
        else:
            if default is not None:
                raise SpecError("give one --backend SPEC, or route by type: --backend mcq=SPEC --backend open=SPEC")
            default = backend_from(spec.strip(), options)
    if not routes:
        return default
    if default is None and len(routes) < len(ROUTES):
        missing = next(kind for kind in ROUTES if kind not in routes)
        raise SpecError(f"no backend for {missing} questions: add --backend {missing}=SPEC (or an unrouted SPEC)")
    if default is not None and len(routes) == len(ROUTES):
        raise SpecError(f"--backend {default.spec} would answer nothing: mcq= and open= already route every question")
    return Composite(routes, default)


def fit(provenance: dict[str, Any]) -> dict[str, Any]:
    """The provenance within the protocol's bounds (backend <= 60 characters, JSON <= 4,000): long settings are
    shortened, never dropped silently (``truncated`` says so)."""
    result = {
        "backend": str(provenance.get("backend") or "?")[:MAX_BACKEND],
        "model": provenance.get("model"),
        "settings": dict(provenance.get("settings") or {}),
    }
    if result["model"] is not None:
        result["model"] = str(result["model"])[:200]
    limit = 1000
    while len(json.dumps(result, ensure_ascii=False)) > MAX_PROVENANCE and limit >= 50:
        result["settings"] = _shorten(result["settings"], limit)
        result["settings"]["truncated"] = True
        limit //= 2
    if len(json.dumps(result, ensure_ascii=False)) > MAX_PROVENANCE:
        result["settings"] = {"truncated": True}
    return result


def _shorten(value: Any, limit: int) -> Any:
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit] + "..."
    if isinstance(value, dict):
        return {key: _shorten(item, limit) for key, item in value.items()}
    if isinstance(value, list):
        return [_shorten(item, limit) for item in value[:20]]
    return value


__all__ = [
    "Asked",
    "Backend",
    "BackendError",
    "Composite",
    "HttpBackend",
    "Options",
    "PythonBackend",
    "Reply",
    "ReplayBackend",
    "Services",
    "SpecError",
    "build",
    "fit",
]
