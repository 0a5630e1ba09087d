"""``vtt agent`` against a real server on 127.0.0.1 (gevent, as in production), the host driven over its socket.

Each test runs the agent as its own process (``python -m vtt.cli agent``), as a lab would, and reads
back what the server recorded: one answer per question, with the provenance of what produced it.
"""

from __future__ import annotations

import asyncio
import json
import string
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.support.agent import (
    CLIP,
    AgentProcess,
    Host,
    agent_answers,
    answer_events,
    make_clip,
    make_sitting,
)


@pytest.fixture
def served_env(tmp_path) -> dict[str, str]:
    """The served app's media folder, with the test clip."""
    media = tmp_path / "media"
    make_clip(media / CLIP)
    return {"VTT_MEDIA_DIR": str(media)}


def agent(tmp_path, served, sitting, *backend_args: str, env=None, name="agent") -> AgentProcess:
    return AgentProcess(
        tmp_path, "--server", served.url, "--token", sitting.agent_token, *backend_args, env=env, name=name
    )


def predictions_file(tmp_path, sitting, shapes=("letter", "text", "index")) -> tuple:
    """A predictions CSV for every question: mcq by letter, option text or 0-based index in turn; the choices."""
    expected, rows = {}, []
    mcq = [q for q in sitting.questions.values() if q["type"] == "mcq"]
    for turn, question in enumerate(sorted(mcq, key=lambda q: q["id"])):
        choice = (turn + 1) % len(question["choices"])
        shape = shapes[turn % len(shapes)]
        value = {
            "letter": string.ascii_uppercase[choice],
            "text": question["choices"][choice].upper(),
            "index": str(choice),
        }[shape]
        rows.append((question["qid"], value))
        expected[question["id"]] = {"choice": choice}
    for question in sitting.questions.values():
        if question["type"] == "open":
            text = f"I think it changes colour ({question['qid']})."
            rows.append((question["qid"], text))
            expected[question["id"]] = {"text": text}
    path = tmp_path / "model_preds.csv"
    path.write_text("qid,prediction\n" + "".join(f'{qid},"{value}"\n' for qid, value in rows), encoding="utf-8")
    return path, expected


def test_a_replay_agent_plays_a_whole_round(served, db_factory, tmp_path):
    sitting = make_sitting(db_factory, tmp_path)
    preds, expected = predictions_file(tmp_path, sitting)
    process = agent(tmp_path, served, sitting, "--backend", f"replay:{preds}").start()

    async def host() -> None:
        async with Host(served.url, sitting) as driver:
            answers = await driver.play_round(1)
            assert len(answers) == 3
            reports = driver.agent_reports(sitting.agent_id)
            assert reports and reports[0]["status"] == "ready", reports
            assert {"working", "answered"} <= {r["status"] for r in reports}

    drive_beside(host, process)
    rows = agent_answers(db_factory, sitting)
    assert set(rows) == set(expected)
    for number, row in rows.items():
        want = expected[number]
        assert (row.choice_index if "choice" in want else row.text) == next(iter(want.values())), (row, want)
        assert row.provenance["backend"] == "replay" and row.provenance["model"] == "model_preds.csv"
        assert len(row.provenance["settings"]["sha256"]) == 64
        assert not row.entered_by_host
    assert len(answer_events(db_factory, sitting)) == 3
    log = process.log()
    for question in sitting.questions.values():
        assert f"qid={question['qid']} question={question['id']} backend=replay answer=" in log, log


PYTHON_AGENT = '''
import asyncio, os, pathlib

async def answer(question):
    """An async backend: mcq by the option's letter, open by a sentence naming the clip."""
    await asyncio.sleep(0.05)
    if question["type"] == "mcq":
        return "c" if len(question["choices"]) > 2 else 0
    return f"It is about {question['clip']['url'].rsplit('/', 1)[-1]} from {question['clip']['start']:g} s"


def slow_once(question):
    """Sleeps (long) the first time it is ever called, then answers at once: a process killed mid-question."""
    mark = pathlib.Path(os.environ["AGENT_MARK"])
    if not mark.exists():
        mark.write_text("started")
        import time
        time.sleep(300)  # a model still thinking when its process is killed: the sleep is the test
    return 1 if question["type"] == "mcq" else "Red, then green, then blue."


def slow(question):
    import time
    time.sleep(1.5)  # a slow model, so that two agents on one token both ask: the sleep is the test
    return 2 if question["type"] == "mcq" else "It goes from red to blue."


def crash_on_open(question):
    if question["type"] == "open":
        raise RuntimeError("the model crashed")
    return 0
'''


@pytest.fixture
def module(tmp_path):
    path = tmp_path / "my_agent.py"
    path.write_text(PYTHON_AGENT, encoding="utf-8")
    return path


def test_a_python_agent_plays_a_whole_round(served, db_factory, tmp_path, module):
    sitting = make_sitting(db_factory, tmp_path)
    play_with_agent(tmp_path, served, sitting, "--backend", "python:my_agent:answer", env={"PYTHONPATH": str(tmp_path)})
    rows = agent_answers(db_factory, sitting)
    assert set(rows) == set(sitting.questions)
    for number, row in rows.items():
        question = sitting.questions[number]
        if question["type"] == "mcq":
            assert row.choice_index == 2
        else:
            assert row.text == "It is about colours.mp4 from 0 s"
        assert row.provenance["backend"] == "python" and row.provenance["model"] == "my_agent:answer"
        assert row.provenance["settings"]["source"] == "my_agent.py"
    assert len(answer_events(db_factory, sitting)) == 3


def drive_beside(host, *processes: AgentProcess, also=()) -> None:
    """Run the ``host`` coroutine function while the agent ``processes`` play; each must then exit 0.
    Every process (and those in ``also``, e.g. one killed on purpose) is stopped whatever happens."""
    try:
        asyncio.run(host())
        codes = [process.wait(30) for process in processes]
        assert codes == [0] * len(processes), [process.log() for process in processes]
    finally:
        for process in (*processes, *also):
            process.stop()


def play_with_agent(tmp_path, served, sitting, *backend_args: str, env=None) -> None:
    """The host plays a round while ``vtt agent`` plays the AI player; the agent exits 0 at the end."""
    process = agent(tmp_path, served, sitting, *backend_args, env=env).start()
    drive_beside(lambda: _play(served, sitting), process)


async def _play(served, sitting, rounds: int = 1) -> Host:
    async with Host(served.url, sitting) as driver:
        for number in range(1, rounds + 1):
            await driver.play_round(number, last=number == rounds)
        return driver


def test_an_agent_killed_mid_question_and_restarted_answers_once(served, db_factory, tmp_path, module):
    sitting = make_sitting(db_factory, tmp_path)
    mark = tmp_path / "mark"
    args = ("--backend", f"python:{module}:slow_once")
    first = agent(tmp_path, served, sitting, *args, env={"AGENT_MARK": str(mark)}, name="first").start()
    second = agent(tmp_path, served, sitting, *args, env={"AGENT_MARK": str(mark)}, name="second")

    async def host() -> None:
        async with Host(served.url, sitting) as driver:
            await driver.start_round(1)
            question = await driver.ask()
            await driver.until(mark.exists, 30, "the backend to start")
            first.kill()  # mid-question: the backend is still thinking
            second.start()
            answer = await driver.wait_agent_answer(question["id"])
            assert answer["choice"] == 1 or answer["text"]
            await asyncio.sleep(1.0)  # time for a stray second answer to show up: none within it is the test
            assert len(driver.answers_of(question["id"], sitting.agent_id)) == 1
            await driver.close_and_reveal()
            for _ in range(2):
                following = await driver.ask()
                await driver.wait_agent_answer(following["id"])
                await driver.close_and_reveal()
            await driver.end_round(last=True)

    drive_beside(host, second, also=[first])
    rows = agent_answers(db_factory, sitting)
    assert set(rows) == set(sitting.questions)
    events = answer_events(db_factory, sitting)
    assert len(events) == 3, [(e.client_key, e.payload) for e in events]
    assert {e.client_key for e in events} == {f"agent-{number}" for number in sitting.questions}
    assert "the session has finished" in second.log()


def test_two_agents_on_one_token_send_one_answer_per_question(served, db_factory, tmp_path, module):
    """The answer's id is the question's: the same answer sent twice (a resend, a second process) counts once."""
    sitting = make_sitting(db_factory, tmp_path)
    args = ("--backend", f"python:{module}:slow")
    twins = [agent(tmp_path, served, sitting, *args, name=f"twin{n}").start() for n in (1, 2)]

    async def host() -> None:
        async with Host(served.url, sitting) as driver:
            await driver.until(
                lambda: len([r for r in driver.agent_reports(sitting.agent_id) if r["status"] == "ready"]) == 2,
                30,
                "both agents ready",
            )
            await driver.start_round(1)
            question = await driver.ask()
            await driver.wait_agent_answer(question["id"])
            # each process logs its answer once the server has acknowledged it, or, when the other's answer reached
            # it first (the player's view shows it saved), that it sends none: both are done with the question
            await driver.until(
                lambda: all(
                    "backend=python answer=" in twin.log() or "already answered: not sent again" in twin.log()
                    for twin in twins
                ),
                30,
                "both processes to have their answer acknowledged, or to have seen it saved",
            )
            await driver.move("finish", force=True)  # acknowledged after anything the answers made the host hear
            assert len(driver.answers_of(question["id"], sitting.agent_id)) == 1

    drive_beside(host, *twins)
    assert len(answer_events(db_factory, sitting)) == 1
    logs = "".join(twin.log() for twin in twins)
    # both sent and the second was told it was a duplicate, or the second saw the first's answer saved before its
    # own was ready and sent none (the player's view is shared by the two processes of one token)
    both_sent = logs.count("backend=python answer=") == 2 and "(already saved: a duplicate)" in logs
    one_sent = logs.count("backend=python answer=") == 1 and "already answered: not sent again" in logs
    assert both_sent or one_sent, logs


def test_a_composite_routes_mcq_and_open_questions_to_different_backends(served, db_factory, tmp_path, module):
    sitting = make_sitting(db_factory, tmp_path)
    preds, expected = predictions_file(tmp_path, sitting)
    play_with_agent(
        tmp_path, served, sitting, "--backend", f"mcq=replay:{preds}", "--backend", f"open=python:{module}:answer"
    )
    rows = agent_answers(db_factory, sitting)
    assert set(rows) == set(sitting.questions)
    for number, row in rows.items():
        if sitting.questions[number]["type"] == "mcq":
            assert row.provenance["backend"] == "replay" and row.choice_index == expected[number]["choice"]
            assert row.provenance["settings"]["route"] == "mcq"
        else:
            assert row.provenance["backend"] == "python" and row.text.startswith("It is about")
            assert row.provenance["settings"]["route"] == "open"


def test_a_backend_that_raises_tells_the_host_and_the_session_goes_on(served, db_factory, tmp_path, module):
    sitting = make_sitting(db_factory, tmp_path)
    process = agent(tmp_path, served, sitting, "--backend", f"python:{module}:crash_on_open").start()
    entered = {}

    async def host() -> None:
        async with Host(served.url, sitting) as driver:
            async for question, shown in driver.each_question(1):
                assert shown["id"] == question["id"]
                if question["type"] == "mcq":
                    await driver.wait_agent_answer(question["id"])
                else:
                    report = await driver.until(
                        lambda: [r for r in driver.agent_reports(sitting.agent_id) if r["status"] == "error"],
                        30,
                        "the agent's error",
                    )
                    assert "RuntimeError: the model crashed" in report[-1]["message"], report
                    assert question["qid"] in report[-1]["message"]
                    await driver.move(
                        "enter_answer", player=sitting.agent_id, question=question["id"], text="Red, green, blue."
                    )
                    entered.update(await driver.wait_agent_answer(question["id"]))
                await driver.close_and_reveal()
            await driver.end_round(last=True)

    drive_beside(host, process)
    assert entered["text"] == "Red, green, blue."
    rows = agent_answers(db_factory, sitting)
    assert set(rows) == set(sitting.questions)
    for number, row in rows.items():
        if sitting.questions[number]["type"] == "open":
            assert row.entered_by_host and row.provenance["backend"] == "host"
        else:
            assert not row.entered_by_host and row.provenance["backend"] == "python"
    log = process.log()
    assert 'backend=python error="my_agent.py:crash_on_open raised RuntimeError: the model crashed"' in log, log


def test_a_typing_wait_cut_short_by_the_host_sends_nothing_and_tells_the_host_at_once(
    served, db_factory, tmp_path, module
):
    """--typing human waits before sending; when the host closes answering meanwhile, the agent sends nothing
    (no late refusal once the next question is up) and tells the host then, not when the wait would have ended."""
    sitting = make_sitting(db_factory, tmp_path)
    process = agent(tmp_path, served, sitting, "--backend", f"python:{module}:answer", "--typing", "human").start()
    cut: dict = {}

    def reports(driver, status: str, qid: str) -> list:
        return [r for r in driver.agent_reports(sitting.agent_id) if r["status"] == status and qid in r["message"]]

    async def host() -> None:
        async with Host(served.url, sitting) as driver:
            async for question, shown in driver.each_question(1):
                if question["type"] == "open" and not cut:  # its answer takes seconds to "type"
                    qid = question["qid"]
                    await driver.until(lambda qid=qid: reports(driver, "working", qid), 10, "working")
                    await asyncio.sleep(0.5)  # the backend replies in 0.05 s: the agent is now in its typing wait
                    await driver.move("close_answering")
                    found = await driver.until(lambda qid=qid: reports(driver, "error", qid), 4, "the error")
                    cut.update(found[-1], question=shown["id"])
                    await driver.move("reveal")
                else:
                    await driver.wait_agent_answer(shown["id"])
                    await driver.close_and_reveal()
            await driver.end_round(last=True)

    drive_beside(host, process)
    assert "answering closed before the answer was ready" in cut["message"], cut
    assert cut["question"] not in agent_answers(db_factory, sitting)
    assert "wrong_question" not in process.log() and "answering_closed" not in process.log(), process.log()


# --- http: an OpenAI-compatible chat-completions endpoint ---------------------------------------------------


class ChatCompletions(BaseHTTPRequestHandler):
    """Speaks the chat-completions JSON shape: an mcq prompt gets "The answer is (B).", others a sentence."""

    seen: list[dict] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append({"path": self.path, "authorization": self.headers.get("Authorization"), "body": body})
        content = body["messages"][-1]["content"]
        text = content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)
        said = "The answer is **(B)**." if "Options:" in text else "The screen goes red, green, then blue."
        reply = json.dumps(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": said}}],
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *_args) -> None:
        pass


@pytest.fixture
def chat_server():
    ChatCompletions.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), ChatCompletions)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", ChatCompletions.seen
    server.shutdown()
    server.server_close()


def test_the_http_backend_sends_frames_of_the_clip_and_parses_the_reply(served, db_factory, tmp_path, chat_server):
    import base64
    import io

    from PIL import Image

    from tests.support.agent import COLOURS

    url, seen = chat_server
    sitting = make_sitting(db_factory, tmp_path)
    play_with_agent(
        tmp_path,
        served,
        sitting,
        "--backend",
        f"http:{url}/v1",
        "--model",
        "tiny-vlm",
        "--temperature",
        "0.3",
        "--frames",
        "3",
        "--api-key",
        "sk-test-secret",
    )
    assert len(seen) == 3
    spans = {
        "What colour fills": (0, 3),
        "What happens": (0, 3),
        "Which colour comes": (0, 3),
        "What colour is last": (0, 3),
        "Describe": (3, 4),
        "How many": (0, 4),
    }
    for request in seen:
        assert request["path"] == "/v1/chat/completions"
        assert request["authorization"] == "Bearer sk-test-secret"
        body = request["body"]
        assert body["model"] == "tiny-vlm" and body["temperature"] == 0.3
        system, user = body["messages"]
        assert system["role"] == "system" and user["role"] == "user"
        text = user["content"][0]["text"]
        images = [part["image_url"]["url"] for part in user["content"] if part["type"] == "image_url"]
        assert len(images) == 3 and all(u.startswith("data:image/jpeg;base64,") for u in images)
        start, end = next(span for key, span in spans.items() if key in text)
        for index, image_url in enumerate(images):
            moment = start + (index + 0.5) * (end - start) / 3
            colour = COLOURS[int(moment)] if int(moment) < len(COLOURS) else (255, 255, 255)
            image = Image.open(io.BytesIO(base64.b64decode(image_url.split(",", 1)[1])))
            pixel = image.convert("RGB").getpixel((32, 24))
            assert all(abs(a - b) < 40 for a, b in zip(pixel, colour)), (text, index, pixel, colour)
        assert f"{CLIP}" in text
    rows = agent_answers(db_factory, sitting)
    assert set(rows) == set(sitting.questions)
    for number, row in rows.items():
        if sitting.questions[number]["type"] == "mcq":
            assert row.choice_index == 1  # "The answer is **(B)**."
        else:
            assert row.text == "The screen goes red, green, then blue."
        provenance = row.provenance
        assert provenance["backend"] == "http" and provenance["model"] == "tiny-vlm"
        assert provenance["settings"]["temperature"] == 0.3 and provenance["settings"]["frames"] == 3
        # the frames came from the clip and span the players were shown
        seen_clip = provenance["settings"]["clip"]
        assert seen_clip["frames_sent"] == 3 and CLIP.endswith(seen_clip["src"])
        assert (seen_clip["start"] or 0, seen_clip["end"]) in {(0, 3), (3, 4), (0, 4), (0, None)}
        assert provenance["settings"]["endpoint"] == f"{url}/v1/chat/completions"
        assert "sk-test-secret" not in json.dumps(provenance)


def test_an_answer_whose_ack_is_lost_with_the_connection_is_resent_and_counted_once(served, db_factory, tmp_path):
    """In-process: the first answer reaches the server, then the websocket drops before the ack is read; the agent
    reconnects by itself and resends the same id: the server acknowledges a duplicate, and the round goes on."""
    from vtt.agents.backends import Options, build
    from vtt.agents.runner import Agent, AgentConnection

    sitting = make_sitting(db_factory, tmp_path)
    preds, expected = predictions_file(tmp_path, sitting)
    lines: list[str] = []

    class LosesTheFirstAck(AgentConnection):
        lost = 0

        async def open(self):
            await super().open()
            call = self._client.call

            async def losing_the_first_answers_ack(event, data=None, **options):
                reply = await call(event, data, **options)  # the server has saved it...
                if event == "answer" and not LosesTheFirstAck.lost:
                    LosesTheFirstAck.lost += 1
                    await self.drop()  # ... but the connection drops before the ack is read
                    raise TimeoutError
                return reply

            self._client.call = losing_the_first_answers_ack

    player = Agent(served.url, sitting.agent_token, build([f"replay:{preds}"], Options()), log=lines.append)
    player.connection = LosesTheFirstAck(served.url, {"token": sitting.agent_token}, player.connection.ledger, "t")

    async def both() -> Host:
        driver = asyncio.create_task(_play(served, sitting))
        await asyncio.wait_for(player.run(), 60)
        return await driver

    host = asyncio.run(both())
    assert LosesTheFirstAck.lost == 1 and player.connection.ledger.reconnects == 1
    first = min(sitting.questions)
    assert len(host.answers_of(first, sitting.agent_id)) == 1
    assert len(answer_events(db_factory, sitting)) == 3
    assert any(
        f"question={first} backend=replay answer=" in line and "(already saved: a duplicate)" in line for line in lines
    ), lines
    assert lines[-1] == "the session has finished"
    assert set(agent_answers(db_factory, sitting)) == set(expected)


def test_an_agent_with_a_wrong_token_stops_with_one_line(served, db_factory, tmp_path, module):
    sitting = make_sitting(db_factory, tmp_path)
    with db_factory() as db:
        from sqlalchemy import select

        from vtt.models import Juror, Player

        human = db.scalar(select(Player.token).where(Player.id == sitting.human_id))
        juror = db.scalar(select(Juror.token).where(Juror.session_id == sitting.session_id))
    for token, message in [
        ("no-such-token", "error: the server refused the token: this link is not valid"),
        (juror, "error: the token is a juror's, not a player's"),
        (human, "error: the token is a human player's"),
    ]:
        process = AgentProcess(
            tmp_path, "--server", served.url, "--token", token, "--backend", f"python:{module}:answer"
        ).start()
        try:
            assert process.wait(30) == 1, process.log()
        finally:
            process.stop()
        assert message in process.log() and "Traceback" not in process.log(), process.log()
        if token == juror:  # refused before it says it is connected or reports to the host
            assert "connected to" not in process.log() and "not_allowed" not in process.log(), process.log()
