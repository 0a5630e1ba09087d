"""A local stand-in for an OpenAI-compatible transcriptions server (whisper behind an HTTP API), in a thread."""

from __future__ import annotations

import json
import threading
from email import policy
from email.parser import BytesParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeWhisper:
    """An OpenAI-compatible transcriptions server in a thread: ``mode`` is ok, error, slow, trickle or garbage, or
    ``reply`` answers each request's form fields with (status, body)."""

    def __init__(self, mode: str = "ok", text: str = "i like to play with my dog", reply=None):
        self.mode, self.text, self.reply = mode, text, reply
        self.requests: list[dict] = []
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                message = BytesParser(policy=policy.HTTP).parsebytes(
                    f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode() + body
                )
                fields, files = {}, {}
                for part in message.iter_parts():
                    name = part.get_param("name", header="content-disposition")
                    if part.get_filename():
                        files[name] = (part.get_filename(), part.get_content_type(), part.get_payload(decode=True))
                    else:
                        fields[name] = part.get_content()
                server.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "fields": fields, "files": files}
                )
                if server.mode == "slow" and server.release.wait(10):
                    return  # the client has given up: nobody to answer
                if server.mode == "trickle":  # headers at once, then a byte every 0.2 s
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", "200")
                    self.end_headers()
                    for _ in range(200):
                        if server.release.wait(0.2):
                            return
                        try:
                            self.wfile.write(b" ")
                            self.wfile.flush()
                        except OSError:  # the client has given up
                            return
                    return
                status, reply = (
                    server.reply(fields)
                    if server.reply
                    else {
                        "ok": (200, json.dumps({"text": server.text}).encode()),
                        "slow": (200, json.dumps({"text": server.text}).encode()),
                        "error": (500, b'{"error": {"message": "CUDA out of memory"}}'),
                        "garbage": (200, b"<html>a proxy's page</html>"),
                    }[server.mode]
                )
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.root = f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> FakeWhisper:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
