"""What every ``vtt`` command group shares: settings, a database session factory, error output.

Heavy imports stay inside the functions so ``vtt serve`` can monkey-patch for gevent first.
"""

from __future__ import annotations

import sys

import click


def settings():
    from ..config import Settings

    return Settings.from_env()


def db_factory():
    from ..db import make_engine, make_db_factory

    return make_db_factory(make_engine(settings().database_url))


def fail(error, consequence: str = "nothing was written", problems_out=None) -> None:
    """Print an input error, each kind of problem once (``vtt.problems.summarize``), and exit 1.

    ``problems_out``: also write every problem to this CSV file (file, row, field, value, message).
    """
    from ..problems import Problem, summarize, unique, write_problems_csv

    problems = unique(getattr(error, "problems", None) or [])
    if problems:
        click.echo(f"error: {len(problems):,} problem{'s' if len(problems) != 1 else ''}; {consequence}", err=True)
        located = all(isinstance(problem, Problem) for problem in problems)  # analysis' are lines already
        hint = f"all of them in {problems_out}" if problems_out else "--problems-out FILE lists them all"
        for line in summarize(problems, hint) if located else problems:
            click.echo(f"  {line}", err=True)
        if problems_out and located:
            write_problems_csv(problems, problems_out)
    else:
        click.echo(f"error: {error}", err=True)
    sys.exit(1)


def redact(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def login_banner(url: str) -> str:
    """Where the host signs in and with which password (``make run``, ``vtt serve``, ``vtt host-login``)."""
    current = settings()
    return (f"Host console: {url}/host/login\n"
            f"Host password: {current.host_password}   (from {current.host_password_source})")


# --- where a running server serves (``<instance>/serving.json``) -----------------------------------

SERVING_FILE = "serving.json"


def serving_path(instance_path=None):
    from pathlib import Path

    return Path(instance_path if instance_path is not None else settings().instance_path) / SERVING_FILE


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
    (:func:`vtt.serving.netaddr.base_url`, which :mod:`vtt.views.joinurl` uses too).
    """
    from ..serving.netaddr import base_url

    record = _read_record(serving_path(instance_path))
    if record is None or not _alive(record.get("pid")):
        return None
    host, port, scheme = record.get("host"), record.get("port"), record.get("scheme") or "http"
    if not isinstance(host, str) or not isinstance(port, int) or not 0 < port < 65536 or scheme not in ("http",
                                                                                                          "https"):
        return None
    url = base_url(host, port)
    return f"{scheme}://{url.split('://', 1)[1]}"


def cli_base_url(given: str | None = None) -> str:
    """What links printed by the command line start with: ``given`` (--url, --base-url), VTT_BASE_URL,
    the address of the server running on this instance folder, else http://127.0.0.1:5000."""
    from ..sessions.links import choose_base_url

    return choose_base_url(given, settings().base_url or served_base_url())


def warn_missing_glyphs(written) -> None:
    """Name the characters the PDFs' font could not draw (``written.missing_characters``), on stderr."""
    missing = getattr(written, "missing_characters", ())
    if missing:
        shown = ", ".join(f"U+{ord(ch):04X} {ch}" for ch in missing[:20]) + (" ..." if len(missing) > 20 else "")
        click.echo(f"warning: the PDFs' font cannot show {len(missing)} character(s), printed as blanks or boxes "
                   f"(the CSVs keep them; each PDF's cover lists them): {shown}", err=True)
