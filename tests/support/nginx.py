"""nginx in front of several ``vtt serve`` processes, configured with deploy/nginx.conf as docs/deploy.md shows it
(the cluster tests and bench/bench_cluster.py)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import urllib.request
from pathlib import Path

from tests.support.paths import ROOT
from tests.support.served import free_port
from tests.support.waiting import wait_until

DEPLOY_CONFIG = ROOT / "deploy" / "nginx.conf"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"  # /usr/sbin is not on every user's PATH


class Nginx:
    """nginx in the foreground with deploy/nginx.conf in front of ``backends`` (host:port), its files in ``folder``.

    The deploy file is included as it is; this writes only what it leaves to each installation: the main config
    (here: paths in ``folder``, no system files), vtt-upstream.conf and vtt-site.conf."""

    def __init__(self, binary: str, folder: Path, backends: list[str]):
        self.binary = binary
        self.folder = folder
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.access_log = folder / "access.log"
        self.output = ""
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "vtt-upstream.conf").write_text("".join(f"server {address};\n" for address in backends))
        (folder / "vtt-site.conf").write_text(f"listen 127.0.0.1:{self.port};\naccess_log {self.access_log} vtt;\n")
        temp = {name: folder / name for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")}
        # As root nginx would hand its workers to nobody, who cannot enter pytest's owner-only folders.
        user = "user root;\n" if os.geteuid() == 0 else ""
        (folder / "nginx.conf").write_text(
            f"{user}pid {folder / 'nginx.pid'};\n"
            f"error_log {folder / 'error.log'} notice;\n"
            "events { worker_connections 1024; }\n"
            "http {\n"
            + "".join(f"    {name}_temp_path {path};\n" for name, path in temp.items())
            + f"    include {DEPLOY_CONFIG};\n"
            "}\n"
        )

    def __enter__(self) -> Nginx:
        self.process = subprocess.Popen(
            [self.binary, "-p", str(self.folder), "-e", str(self.folder / "error.log"), "-c", "nginx.conf"]
            + ["-g", "daemon off;"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            wait_until(
                lambda: self.process.poll() is not None or answers(f"{self.url}/healthz"),
                timeout=15,
                interval=0.1,
                message="nginx to answer /healthz",
            )
        except AssertionError:
            pass  # not answering: stopped and reported with its log below, as when it has exited
        if self.process.poll() is None and answers(f"{self.url}/healthz"):
            return self
        self.__exit__(None, None, None)
        raise RuntimeError(f"nginx did not come up:\n{self.output}")

    def __exit__(self, *_exc) -> None:
        self.process.terminate()
        output, _ = self.process.communicate(timeout=10)
        error_log = self.folder / "error.log"
        self.output = output + (error_log.read_text() if error_log.exists() else "")

    def upstreams_used(self) -> set[str]:
        """The processes that answered a request, from the access log (deploy/nginx.conf's ``vtt`` format)."""
        tried = re.findall(r"upstream=(.+?) route=", self.access_log.read_text())  # "a, b" when a failed
        return {address for addresses in tried for address in addresses.split(", ")}


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False
