"""The app served as in production: ``python run.py`` (gevent) in a subprocess, and a host signed in to it over HTTP.

The ``served`` fixture (tests/conftest.py) serves this test's database; ``ServedApp`` serves any environment.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import urllib.request

import requests

from tests.support.apps import HOST_PASSWORD
from tests.support.paths import ROOT
from tests.support.waiting import wait_until


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ServedApp:
    """``python run.py`` in a subprocess (gevent, as in production), stopped on exit; ``.output`` after."""

    def __init__(self, env: dict[str, str]):
        self.env = {**os.environ, "VTT_ASYNC_MODE": "gevent", **env}
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.output = ""

    def __enter__(self) -> ServedApp:
        self.process = subprocess.Popen(
            [sys.executable, "run.py", "--port", str(self.port)],
            env=self.env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            wait_until(
                lambda: self.process.poll() is not None or self._answers(),
                timeout=30,
                interval=0.2,
                message="the server to answer /healthz",
            )
            if self.process.poll() is None:
                return self
        except AssertionError:
            pass  # still not answering: stopped and reported with its output, as when it has exited
        self.__exit__(None, None, None)
        raise RuntimeError(f"server did not come up:\n{self.output}")

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/healthz", timeout=2):
                return True
        except OSError:
            return False

    def __exit__(self, *_exc) -> None:
        self.process.terminate()
        self.output, _ = self.process.communicate(timeout=10)


def signed_in(url: str) -> tuple[requests.Session, str]:
    """A ``requests`` session signed in as the host at the served ``url``, and the CSRF token of its pages."""
    http = requests.Session()
    page = http.get(f"{url}/host/login", timeout=10).text
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    assert (
        http.post(
            f"{url}/host/login", data={"password": HOST_PASSWORD, "csrf_token": csrf}, allow_redirects=False, timeout=10
        ).status_code
        == 302
    )
    page = http.get(f"{url}/host/", timeout=10).text
    return http, re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
