"""``vtt agent``'s parts without a server: reading options, backends, provenance, frames, the typing delay."""

from __future__ import annotations

import asyncio
import io
import json
from datetime import UTC

import pytest

from tests.support.agent import COLOURS, make_clip
from vtt.agents.backends import (
    Asked,
    BackendError,
    HttpBackend,
    Options,
    Services,
    SpecError,
    build,
    fit,
)
from vtt.agents.choices import NoOption, option_in_reply, option_index
from vtt.agents.delay import HumanTyping
from vtt.agents.frames import clip_url, sample_frames
from vtt.model_calls.endpoints import chat_endpoint

CHOICES = ["A grey hoodie", "b", "A navy blazer", "3", "A white lab coat"]


def question(kind: str = "mcq", **extra) -> dict:
    base = {
        "id": 7,
        "qid": "q01",
        "round": 1,
        "position": 1,
        "text": "What is she wearing?",
        "type": kind,
        "choices": CHOICES if kind == "mcq" else [],
        "clip": {"src": "clips/ep 01.mp4", "start": 4.0, "end": 9.5, "type": "shot"},
    }
    return {**base, **extra}


def test_an_answer_names_an_option_as_vtt_analyze_reads_it():
    assert option_index("a navy   BLAZER", CHOICES) == 2  # the text, case- and space-insensitive
    assert option_index("b", CHOICES) == 1  # an option that reads "b" is chosen by its text...
    assert option_index("B", CHOICES) == 1
    assert option_index("3", CHOICES) == 3  # ... and "3" too (the option's text, not index 3: the same here)
    assert option_index("E", CHOICES) == 4 and option_index("4", CHOICES) == 4 and option_index(0, CHOICES) == 0
    for bad, why in (
        ("F", "beyond the 5 options"),
        ("7", "beyond"),
        ("a red dress", "none of the 5 options"),
        (5, "beyond"),
        (True, "not bool"),
        ("", "empty"),
    ):
        with pytest.raises(NoOption, match=why.split()[0] if why != "not bool" else "expected"):
            option_index(bad, CHOICES)


@pytest.mark.parametrize(
    "reply, chosen",
    [
        ("B", 1),
        ("(c)", 2),
        ("C.", 2),
        ("**D**", 3),
        ("The answer is (E).", 4),
        ("Answer: C", 2),
        ("C. A navy blazer", 2),
        ("a navy blazer", 2),
        ("She wears a white lab coat.", 4),
        ("<think>maybe A? or B</think>E", 4),
        ("2", 1),
        ("The answer is a grey hoodie", 0),
        ("I cannot tell.", None),
        ("Z", None),
        ("A grey hoodie or a navy blazer", None),
        ("", None),
    ],
)
def test_a_model_reply_is_read_as_an_option(reply, chosen):
    assert option_in_reply(reply, CHOICES) == chosen


def test_bad_backend_specs_are_refused_with_the_problem_named(tmp_path):
    options = Options()
    for specs, message in [
        ((), "give --backend SPEC"),
        (("gpt4",), "unknown backend 'gpt4'"),
        (("replay:nowhere.csv",), "replay: no file 'nowhere.csv'"),
        (("http:localhost:8000",), "is not an http:// or https:// URL"),
        (("http:http://127.0.0.1:9/v1",), "http backends need --model NAME"),
        (("python:no_such_module_here:f",), "python: cannot import no_such_module_here: ModuleNotFoundError"),
        (("python:json:no_function",), "python: json has no function 'no_function'"),
        (("python:justone",), "give python:MODULE:FUNCTION"),
        (("mcq=python:json:dumps", "mcq=python:json:loads"), "--backend mcq=... is given twice"),
        (("mcq=python:json:dumps",), "no backend for open questions: add --backend open=SPEC"),
        (("python:json:dumps", "python:json:loads"), "give one --backend SPEC, or route by type"),
        (
            ("mcq=python:json:dumps", "open=python:json:dumps", "python:json:loads"),
            "--backend python:json:loads would answer nothing",
        ),
    ]:
        with pytest.raises(SpecError, match=message.replace("(", r"\(").replace(".", r"\.")):
            build(specs, options)
    twice = tmp_path / "preds.csv"
    twice.write_text("qid,prediction\nq01,A\nq01,B\n", encoding="utf-8")
    with pytest.raises(SpecError, match="two predictions for qid 'q01': 'A' and 'B'"):
        build([f"replay:{twice}"], options)
    broken = tmp_path / "preds.jsonl"
    broken.write_text('{"qid": "q01", "pred": "A"}\n{oops\n', encoding="utf-8")
    with pytest.raises(SpecError, match="line 2: not valid JSON"):
        build([f"replay:{broken}"], options)


def test_vtt_agent_refuses_bad_arguments_with_one_line(run, tmp_path):
    preds = tmp_path / "p.json"
    preds.write_text('{"q01": "B"}', encoding="utf-8")
    for args, message in [
        (["--server", "127.0.0.1:5000", "--backend", f"replay:{preds}"], "--server '127.0.0.1:5000' is not an http"),
        (["--server", "http://127.0.0.1:9", "--backend", "nope"], "unknown backend 'nope'"),
        (
            ["--server", "http://127.0.0.1:9", "--backend", f"replay:{preds}", "--frames", "3"],
            "--frames only apply to http: backends",
        ),
    ]:
        result = run("agent", "--token", "t0k3n", *args)
        assert result.exit_code == 1, result.output
        assert f"error: {message}" in result.output and "Traceback" not in result.output, result.output


def run_backend(backend, asked):
    return asyncio.run(backend.answer(asked))


def test_replay_answers_by_qid_and_reports_what_it_cannot(tmp_path):
    preds = tmp_path / "model.jsonl"
    preds.write_text(
        '{"qid": "q01", "prediction": "a navy blazer"}\n{"qid": "q02", "pred": "F"}\n'
        '{"qid": "q03", "answer": "She is sad."}\n',
        encoding="utf-8",
    )
    backend = build([f"replay:{preds}"], Options())
    reply = run_backend(backend, Asked(question(), "http://x"))
    assert reply.choice == 2
    assert reply.provenance == {
        "backend": "replay",
        "model": "model.jsonl",
        "settings": {"file": "model.jsonl", "sha256": reply.provenance["settings"]["sha256"], "predictions": 3},
    }
    assert run_backend(backend, Asked(question("open", qid="q03"), "http://x")).text == "She is sad."
    with pytest.raises(BackendError, match="the prediction for qid 'q02' in model.jsonl: 'F' is beyond the 5 options"):
        run_backend(backend, Asked(question(qid="q02"), "http://x"))
    with pytest.raises(BackendError, match="qid 'q09' is not in model.jsonl"):
        run_backend(backend, Asked(question(qid="q09"), "http://x"))


def test_a_python_backend_gets_the_question_with_its_clip_url(tmp_path, monkeypatch):
    (tmp_path / "seen_agent.py").write_text(
        "seen = []\n"
        "def answer(question):\n    seen.append(question)\n    return {'choice': 4}\n"
        "async def text(question):\n    return 42\n"
        "def nothing(question):\n    return None\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    backend = build(["python:seen_agent:answer"], Options())
    asked = Asked(question(), "http://127.0.0.1:5000", deadline="2030-01-01T00:00:00Z")
    assert run_backend(backend, asked).choice == 4
    import seen_agent

    given = seen_agent.seen[0]
    assert given["clip"]["url"] == "http://127.0.0.1:5000/media/clips/ep%2001.mp4"
    assert given["deadline"] == "2030-01-01T00:00:00Z" and given["qid"] == "q01"
    assert run_backend(build(["python:seen_agent:text"], Options()), Asked(question("open"), "http://x")).text == "42"
    with pytest.raises(BackendError, match="seen_agent:nothing gave no answer"):
        run_backend(build(["python:seen_agent:nothing"], Options()), asked)


def test_an_unparsed_mcq_reply_is_handled_as_configured():
    def read(how: str, said: str = "Hmm, hard to say."):
        backend = HttpBackend("http:x", "http://127.0.0.1:9", Options(model="m", on_unparsed=how, seed=3))
        return backend.read(said, Asked(question(), "http://x"), backend.provenance())

    with pytest.raises(BackendError, match='m\'s reply names no option: "Hmm, hard to say." \\(--on-unparsed skip\\)'):
        read("skip")
    assert read("first").choice == 0 and read("first").provenance["settings"]["unparsed_reply"] == "first"
    assert read("random").choice == read("random").choice  # seeded by --seed and the question
    assert read("text", "Probably the navy one, a blazer").choice == 2
    assert "names no option: answered as first" in read("first").note
    assert read("skip", "<think>A or C?</think>\nC").choice == 2


def test_the_chat_completions_request_holds_the_question_options_and_clip():
    backend = HttpBackend("http:x", "http://127.0.0.1:9/v1/", Options(model="llava", temperature=0.7, max_tokens=20))
    asked = Asked(question(), "http://192.168.1.5:5000")
    body = backend.request(asked, [("image/png", b"\x89PNG")])
    assert backend.url == "http://127.0.0.1:9/v1/chat/completions"
    assert chat_endpoint("http://h/v1/chat/completions") == "http://h/v1/chat/completions"
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("llava", 0.7, 20)
    text = body["messages"][1]["content"][0]["text"]
    assert "Question: What is she wearing?" in text and "C. A navy blazer" in text
    assert "http://192.168.1.5:5000/media/clips/ep%2001.mp4, from 4 s to 9.5 s" in text
    assert "1 frames" in text
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw=="}}
    assert body["messages"][1]["content"][1] == image
    assert isinstance(backend.request(asked, [])["messages"][1]["content"], str)  # no frames: plain text


def test_the_provenance_fits_the_servers_schema():
    from vtt.protocol.messages import AnswerIn

    backend = HttpBackend(
        "http:x", "http://user:pw@127.0.0.1:9/v1?key=secret", Options(model="m" * 300, system="Be a child. " * 1000)
    )
    provenance = fit(backend.provenance())
    assert "pw" not in json.dumps(provenance) and "secret" not in json.dumps(provenance)
    assert len(json.dumps(provenance, ensure_ascii=False)) <= 4000 and provenance["settings"]["truncated"]
    assert len(provenance["settings"]["system_sha256"]) == 64
    AnswerIn.model_validate({"id": "agent-7", "question": 7, "choice": 1, "provenance": provenance})
    assert fit({"backend": "x" * 80, "model": None, "settings": {}})["backend"] == "x" * 60


def test_clip_sources_resolve_as_the_player_page_resolves_them():
    server = "http://127.0.0.1:5000"
    assert clip_url(server, {"src": "clips/a b.mp4"}) == "http://127.0.0.1:5000/media/clips/a%20b.mp4"
    assert clip_url(server, {"src": "/media/x.mp4"}) == "http://127.0.0.1:5000/media/x.mp4"
    assert clip_url(server, {"src": "https://cdn.example/x.mp4"}) == "https://cdn.example/x.mp4"
    assert clip_url(server, {"src": None}) is None and clip_url(server, None) is None


def test_frames_are_sampled_evenly_from_the_span(tmp_path):
    from PIL import Image

    video = make_clip(tmp_path / "colours.mp4")

    def colours(count, start, end, **options):
        return [
            Image.open(io.BytesIO(data)).convert("RGB").getpixel((4, 4))
            for _mime, data in sample_frames(video, count, start, end, **options)
        ]

    def near(seen, wanted):
        return all(abs(a - b) < 40 for pixel, colour in zip(seen, wanted, strict=True) for a, b in zip(pixel, colour))

    assert near(colours(3, 0, 3), COLOURS)  # at 0.5, 1.5 and 2.5 s
    assert near(colours(2, 1, 2), [COLOURS[1]] * 2)
    assert near(colours(2, 3.5, 60), [(255, 255, 255)] * 2)  # the span runs past the end: up to the end
    assert near(colours(1, None, None, fmt="png"), [COLOURS[2]])  # the whole video: its middle (2 s: blue)
    mime, data = sample_frames(video, 1, 0, 1, size=16)[0]
    assert mime == "image/jpeg" and max(Image.open(io.BytesIO(data)).size) <= 16


class FakeEndpoint:
    """An aiohttp-like client whose chat-completions endpoint always answers "B"; keeps the requests."""

    status = 200

    def __init__(self):
        self.requests = []

    def post(self, url, **request):
        self.requests.append(request["json"])
        return self

    async def __aenter__(self):
        return self

    async def __aexit__(self, *_exc):
        return False

    async def text(self):
        return json.dumps({"choices": [{"message": {"content": "B"}}]})


@pytest.mark.parametrize(
    "start, end, colours",
    [
        (1.0, 2.0, [COLOURS[1]] * 2),  # a shot: its span only (at 1.25 and 1.75 s)
        (None, None, [COLOURS[1], (255, 255, 255)]),  # a whole scene: the whole clip (at 1 and 3 s)
    ],
)
def test_the_model_sees_the_players_clip_and_span_and_the_provenance_says_so(tmp_path, start, end, colours):
    import base64

    from PIL import Image

    video = make_clip(tmp_path / "colours.mp4")
    fetched = []

    class Clips:
        async def local(self, url, timeout):
            fetched.append(url)
            return video

    endpoint = FakeEndpoint()
    backend = HttpBackend("http:x", "http://127.0.0.1:9/v1", Options(model="vlm", frames=2, frame_size=32))
    backend.attach(Services(http=endpoint, clips=Clips()))
    shown = {"src": "clips/ep 01.mp4", "start": start, "end": end, "type": "scene"}  # as the server sent it
    reply = run_backend(backend, Asked(question(clip=shown), "http://127.0.0.1:5000"))
    assert fetched == ["http://127.0.0.1:5000/media/clips/ep%2001.mp4"]  # the file the player page plays
    parts = endpoint.requests[0]["messages"][1]["content"]
    seen = [
        Image.open(io.BytesIO(base64.b64decode(part["image_url"]["url"].split(",", 1)[1])))
        .convert("RGB")
        .getpixel((4, 4))
        for part in parts
        if part["type"] == "image_url"
    ]
    assert all(abs(a - b) < 40 for pixel, colour in zip(seen, colours, strict=True) for a, b in zip(pixel, colour))
    settings = reply.provenance["settings"]
    assert settings["frames"] == 2
    assert settings["clip"] == {"src": "clips/ep 01.mp4", "start": start, "end": end, "frames_sent": 2}
    assert fit(reply.provenance) == reply.provenance  # within the protocol's bounds as it is


def test_without_frames_the_provenance_names_no_clip_seen():
    backend = HttpBackend("http:x", "http://127.0.0.1:9/v1", Options(model="llm"))
    backend.attach(Services(http=FakeEndpoint()))
    settings = run_backend(backend, Asked(question(), "http://127.0.0.1:5000")).provenance["settings"]
    assert settings["frames"] == 0 and "clip" not in settings


def test_the_humanlike_delay_is_seeded_and_grows_with_the_answer():
    typing = HumanTyping(seed=4)
    short, long = typing.seconds(7, "Red.", mcq=False), typing.seconds(7, "Red. " * 40, mcq=False)
    assert short == HumanTyping(seed=4).seconds(7, "Red.", mcq=False)  # the same after a restart
    assert 0.5 < short < long and long - short > 20
    tap = [typing.seconds(n, "", mcq=True) for n in range(50)]
    assert 0.5 < min(tap) and sorted(tap)[25] < 6  # a few seconds, as a person taps an option


def agent_in_answering(seconds_left: float, backend=None):
    """An Agent (not connected) whose view says answering is open with ``seconds_left`` before the deadline."""
    from datetime import datetime, timedelta

    from vtt.agents.runner import Agent

    deadline = (datetime.now(UTC) + timedelta(seconds=seconds_left)).isoformat().replace("+00:00", "Z")
    player = Agent("http://127.0.0.1:9", "t", backend or build(["python:json:dumps"], Options()), log=lambda _: None)
    player.connection.view.snapshot(
        {
            "role": "player",
            "state_version": 1,
            "playing": True,
            "question": question(),
            "answer": None,
            "status": {"phase": "answering", "round": 1, "deadline": deadline},
        }
    )
    return player


def test_the_typing_delay_and_a_slow_backend_are_bounded_by_the_deadline():
    import time

    from vtt.agents.backends import Backend, Reply

    player = agent_in_answering(3.0)
    player.typing = HumanTyping(seed=1)
    began = time.monotonic()
    asyncio.run(player.type_out(question("open"), Reply(None, "Red. " * 60, {}), began))
    assert 1.0 < time.monotonic() - began < 2.2  # ~40 s of typing, capped: 3 s left less the sending margin

    class Slow(Backend):
        kind = "python"

        async def answer(self, asked):
            assert asked.timeout < 2.1  # the backend's own timeout is bounded by the deadline too
            await asyncio.sleep(30)

    player = agent_in_answering(2.0, Slow("python:slow:f"))
    began = time.monotonic()
    with pytest.raises(BackendError, match="gave no answer before the deadline"):
        asyncio.run(player.ask(player.backend, question()))
    assert time.monotonic() - began < 2.0


def test_the_agent_modules_import_neither_flask_nor_the_database():
    import subprocess
    import sys

    code = (
        "import sys, vtt.agents.runner, vtt.agents.backends, vtt.agents.frames, vtt.cli.agent; "
        "print(sorted(m for m in ('flask', 'flask_socketio', 'sqlalchemy', 'av') if m in sys.modules))"
    )
    from tests.support.paths import ROOT

    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert result.stdout.strip() == "[]"  # PyAV loads only with --frames
