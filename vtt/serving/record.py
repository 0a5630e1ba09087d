"""Where a running server serves, noted in the instance folder (``serving.json``) so that the command line prints
links that work, and the line that tells the host where to sign in."""

from __future__ import annotations

from ..config import Settings
from ..netaddr import base_url


def login_banner(url: str) -> str:
    """Where the host signs in and with which password (``make run``, ``vtt serve``, ``vtt host-login``)."""
    current = Settings.from_env()
    return (
        f"Host console: {url}/host/login\n"
        f"Host password: {current.host_password}   (from {current.host_password_source})"
    )


SERVING_FILE = "serving.json"


def serving_path(instance_path=None):
    from pathlib import Path

    return Path(instance_path if instance_path is not None else Settings.from_env().instance_path) / SERVING_FILE


def record_serving(instance_path, host: str, port: int, scheme: str = "http"):
    """Note in the instance folder where this process serves, so the command line prints working links.

    Written aside and renamed into place: a reader sees the whole record or none. Returns its path.
    """
    import json
    import os
    import tempfile

    path = serving_path(instance_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, staged = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"host": host, "port": port, "scheme": scheme, "pid": os.getpid()}, handle)
            handle.write("\n")
        os.replace(staged, path)
    finally:
        if os.path.exists(staged):
            os.unlink(staged)
    return path


def forget_serving(instance_path) -> None:
    """Remove the record at a clean stop, unless another server has written its own since."""
    import os

    path = serving_path(instance_path)
    record = _read_record(path)
    if record is not None and record.get("pid") == os.getpid():
        try:
            path.unlink()
        except FileNotFoundError:
            pass


def _read_record(path) -> dict | None:
    import json

    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _alive(pid) -> bool:
    import os

    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    except OSError:
        return False
    return True


def served_base_url(instance_path=None) -> str | None:
    """The address of the server recorded in the instance folder, if its process still runs; else None.

    A server bound to all interfaces (0.0.0.0, ::) gives this machine's LAN address, as the web pages do
    (:func:`vtt.netaddr.base_url`, which :mod:`vtt.views.joinurl` uses too).
    """
    record = _read_record(serving_path(instance_path))
    if record is None or not _alive(record.get("pid")):
        return None
    host, port, scheme = record.get("host"), record.get("port"), record.get("scheme") or "http"
    if (
        not isinstance(host, str)
        or not isinstance(port, int)
        or not 0 < port < 65536
        or scheme not in ("http", "https")
    ):
        return None
    url = base_url(host, port)
    return f"{scheme}://{url.split('://', 1)[1]}"
