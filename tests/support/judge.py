"""A local stand-in for an OpenAI-compatible chat-completions judge: it reads the prompt as vtt.judge sends it and
answers by the player's name at the start of the answer (tests/support/review.answer_text: "Mina thinks ...")."""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from vtt.judge.suggest import JudgeSettings

MODEL = "judge-7b"

# What the judge says per player: a dimension's reply text; a dimension missing: {'score': 1} for the verdict
# (correct), {'score': 3} for the rest.
WELL_FORMED = {
    "Mina": {"verdict": "{'score': 1}", "accuracy": "Score: {'score': 4}"},
    "Grace": {"verdict": '```json\n{"score": 0}\n```', "accuracy": "{'score': 1}"},
    "Agent": {"verdict": "{'score': 1}", "accuracy": "<think>hmm, {'score': 5}?</think>{'score': 2}"},
}
DIMENSION_WORDS = {
    "Is the player's answer correct": "verdict",
    "Score the ACCURACY": "accuracy",
    "Score the COMPREHENSIVENESS": "comprehensiveness",
    "Score the DEPTH OF REASONING": "depth",
    "Score the EVIDENCE": "evidence",
    "Score the COHERENCE": "coherence",
}


def player_of(user: str) -> str:
    """The first word of the player's answer in a prompt's user text."""
    return re.search(r"<player_answer>(\w+)", user).group(1)


class FakeJudge:
    """``replies[player][dimension]``: the reply text, or ``("status", N)`` for an HTTP error, or ``("sleep", s)``
    to answer {'score': 1} after ``s`` seconds, or ``("bytes", n)`` for a chat completion of about ``n`` bytes, or
    ``("body", text)`` for an HTTP 200 whose body is ``text`` as it is (a chat completion that is not JSON as it
    should be).
    Every request is kept (``requests``: the parsed JSON bodies).  ``respond``, when given, answers every request
    instead: the reply text (or one of the tuples above) for the request's body (the AI jurors' tests)."""

    def __init__(self, replies: dict[str, dict[str, object]] | None = None, respond=None):
        self.replies = WELL_FORMED if replies is None else replies
        self.respond = respond
        self.requests: list[dict] = []
        self.requests_lock = threading.Lock()  # held while a request is kept
        judge = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with judge.requests_lock:
                    judge.requests.append(body)
                status, text = judge.reply(body)
                data = (
                    text.encode()
                    if status == "raw"
                    else json.dumps(
                        {"model": body["model"], "choices": [{"message": {"role": "assistant", "content": text}}]}
                        if status == 200
                        else {"error": {"message": "the judge is down"}}
                    ).encode()
                )
                self.send_response(200 if status == "raw" else status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def reply(self, body: dict) -> tuple[int, str]:
        if self.respond is not None:
            said = self.respond(body)
        else:
            user = body["messages"][1]["content"]
            player = player_of(user)
            dimension = next(name for words, name in DIMENSION_WORDS.items() if words in user)
            default = "{'score': 1}" if dimension == "verdict" else "{'score': 3}"
            said = self.replies.get(player, {}).get(dimension, default)
        if isinstance(said, tuple) and said[0] == "status":
            return said[1], ""
        if isinstance(said, tuple) and said[0] == "body":
            return "raw", said[1]
        if isinstance(said, tuple) and said[0] == "bytes":  # a chat completion padded to ``n`` bytes
            padding = said[1] - len(json.dumps({"choices": [{"message": {"content": ""}}], "x": ""}))
            return "raw", json.dumps({"choices": [{"message": {"content": "{'score': 3}"}}], "x": " " * padding})
        if isinstance(said, tuple) and said[0] == "sleep":
            time.sleep(said[1])  # a slow judge: the sleep is what the test times out on
            return 200, "{'score': 1}"
        return 200, str(said)

    def asked(self) -> list[tuple[str, str]]:
        """(player, dimension) of every request so far."""
        with self.requests_lock:
            bodies = list(self.requests)
        found = []
        for body in bodies:
            user = body["messages"][1]["content"]
            player = player_of(user)
            found.append((player, next(name for words, name in DIMENSION_WORDS.items() if words in user)))
        return found

    def __enter__(self) -> FakeJudge:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def settings(judge: FakeJudge, **options) -> JudgeSettings:
    """The judge's settings for ``judge`` (its URL, MODEL)."""
    return JudgeSettings.from_spec(f"http:{judge.url}", MODEL, **options)


# Ana's and Ben's marks (ANA and BEN in tests/support/review.py); the judge (WELL_FORMED) says Mina and Agent correct,
# Grace not: in the order Mina q05, Grace q05, Agent q05, Mina q11, Grace q11, Agent q11
#   judge 1 0 1 1 0 1 | Ana 1 0 1 1 1 0 | Ben 1 0 0 1 0 0
# Ana: p_o = 4/6, p_e = (4/6)(4/6) + (2/6)(2/6) = 5/9, kappa = (2/3 - 5/9) / (4/9) = 0.25
# Ben: p_o = 4/6, p_e = (2/6)(4/6) + (4/6)(2/6) = 4/9, kappa = (2/3 - 4/9) / (5/9) = 0.4
# Final marks where both agree (Mina q05 1, Grace q05 0, Mina q11 1, Agent q11 0), judge 1 0 1 1:
#   p_o = 3/4, p_e = (2/4)(3/4) + (2/4)(1/4) = 1/2, kappa = 0.5
ANA_AND_BEN = {
    "Ana": {("Mina", "q05"): 1, ("Grace", "q05"): 0, ("Agent", "q05"): 1, ("Mina", "q11"): 1, ("Grace", "q11"): 1},
    "Ben": {("Mina", "q05"): 1, ("Grace", "q05"): 0, ("Agent", "q05"): 0, ("Mina", "q11"): 1, ("Grace", "q11"): 0},
}
