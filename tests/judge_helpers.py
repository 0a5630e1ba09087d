"""A local stand-in for an OpenAI-compatible chat-completions judge: it reads the prompt as vtt.judge sends it and
answers by the player's name at the start of the answer (tests/review_helpers.answer_text: "Mina thinks ...")."""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

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


class FakeJudge:
    """``replies[player][dimension]``: the reply text, or ``("status", N)`` for an HTTP error, or ``("sleep", s)``
    to answer {'score': 1} after ``s`` seconds. Every request is kept (``requests``: the parsed JSON bodies)."""

    def __init__(self, replies: dict[str, dict[str, object]] | None = None):
        self.replies = WELL_FORMED if replies is None else replies
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        judge = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with judge._lock:
                    judge.requests.append(body)
                status, text = judge.reply(body)
                data = json.dumps(
                    {"model": body["model"], "choices": [{"message": {"role": "assistant", "content": text}}]}
                    if status == 200
                    else {"error": {"message": "the judge is down"}}
                ).encode()
                self.send_response(status)
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
        user = body["messages"][1]["content"]
        player = re.search(r"Player's answer: (\w+)", user).group(1)
        dimension = next(name for words, name in DIMENSION_WORDS.items() if words in user)
        default = "{'score': 1}" if dimension == "verdict" else "{'score': 3}"
        said = self.replies.get(player, {}).get(dimension, default)
        if isinstance(said, tuple) and said[0] == "status":
            return said[1], ""
        if isinstance(said, tuple) and said[0] == "sleep":
            time.sleep(said[1])
            return 200, "{'score': 1}"
        return 200, str(said)

    def asked(self) -> list[tuple[str, str]]:
        """(player, dimension) of every request so far."""
        with self._lock:
            bodies = list(self.requests)
        found = []
        for body in bodies:
            user = body["messages"][1]["content"]
            player = re.search(r"Player's answer: (\w+)", user).group(1)
            found.append((player, next(name for words, name in DIMENSION_WORDS.items() if words in user)))
        return found

    def __enter__(self) -> FakeJudge:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
