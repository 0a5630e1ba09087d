"""Serving with gevent; the caller has already monkey-patched (see ``run.py`` and ``vtt serve``): ``serve`` refuses
to start when it has not, or too late (``check_patched_first``)."""

from __future__ import annotations

import errno
import os
import re
import socket
import sys
from importlib import metadata

import click
from sqlalchemy.engine import make_url

from ..app import create_app
from ..db import current_revision, head_revision
from ..extensions import socketio
from ..netaddr import ALL_INTERFACES, LOOPBACK, base_url
from .record import forget_serving, login_banner, record_serving


def serve(host: str = "127.0.0.1", port: int = 5000, audit_log: str | None = None) -> None:

    overrides: dict = {"SOCKETIO_ASYNC_MODE": "gevent", "SERVE_HOST": host, "SERVE_PORT": port}
    if audit_log:
        overrides["AUDIT_LOG"] = audit_log
    app = create_app(overrides)
    if app.config["SOCKETIO_ASYNC_MODE"] == "gevent":  # (tests serve in threading mode: nothing to patch)
        check_patched_first()
        check_psycopg(app.config["DATABASE_URL"])
    found, expected = current_revision(app.config["DATABASE_URL"]), head_revision()
    if found != expected:
        # Serving an old schema would answer every page with a 500; say what to do instead.
        raise click.ClickException(
            f"the database is at revision {found or 'base (empty)'}, this code needs "
            f"{expected}: run `vtt db upgrade` first (make run does)"
        )
    check_port(host, port)
    sweep_leftovers(app)
    click.echo(startup_banner(app, host, port))
    click.echo(f"Serving on http://{host}:{port} (gevent, {socketio.server.eio.async_mode}); Ctrl-C stops.")
    instance = app.config["INSTANCE_PATH"]
    # `vtt session show`, `vtt host-login` ... print links to where this server really is (clitools.cli_base_url).
    record_serving(instance, host, port)
    workers = start_job_workers(app)
    _forget_on_terminate(instance, workers)
    try:
        serve_forever(app, host, port)
    except OSError as error:  # taken between the check and now
        if error.errno not in _BIND_ERRORS:
            raise
        raise click.ClickException(port_problem(host, port, error)) from error
    finally:  # Ctrl-C, a stop, a failure: the record goes (a killed server's is ignored: its pid is gone)
        workers.stop()
        forget_serving(instance)


_BIND_ERRORS = (errno.EADDRINUSE, errno.EACCES, errno.EADDRNOTAVAIL)


def start_job_workers(app):
    """This server's job workers (vtt.jobs.workers), started now and kept running; the app then queues its jobs
    for them instead of running them in the request."""
    from ..jobs.workers import Workers

    workers = Workers(app.config["DATABASE_URL"], app.config["INSTANCE_PATH"], app.config["JOBS"])
    workers.start()
    socketio.start_background_task(workers.keep_running)
    app.config["JOB_WORKERS"] = True
    return workers


def sweep_leftovers(app) -> None:
    """Before serving: what a killed server left of children's voices (half-sent takes, takes whose row was never
    written, exports being built) goes.  Files younger than the grace may be another process's work in flight."""
    from pathlib import Path

    from ..extensions import database
    from ..recordings import sweep_orphans

    with database.factory(app)() as db:
        gone = sweep_orphans(db, Path(app.config["RECORDINGS_DIR"]), Path(app.config["EXPORTS_DIR"]))
    if gone:
        click.echo(f"Removed {gone} files an interrupted server left (unacknowledged takes, exports being built).")


# The network clients a served process calls from its greenlets.  Imported before gevent's patch they keep the
# blocking originals they bound at import (redis: queue.LifoQueue, time.sleep; psycopg: threading.Lock and its C
# wait function), so one query or Redis reconnect stalls every connection.  SQLAlchemy's pool, python-socketio
# and engineio look socket and threading up when called: their import order does not matter (checked).
PATCH_FIRST = ("redis", "psycopg")


def check_patched_first() -> None:
    """Refuse to serve with gevent unless its monkey patch came before ``PATCH_FIRST`` were imported."""
    from gevent import monkey

    unpatched = [name for name in ("socket", "threading", "select") if not monkey.is_module_patched(name)]
    if unpatched:
        raise click.ClickException(
            f"gevent has not monkey-patched {', '.join(unpatched)}: serve with `vtt serve` or `python run.py`, "
            "which patch before anything else is imported"
        )
    early = imported_before_the_patch(PATCH_FIRST)
    if early:
        raise click.ClickException(
            f"{', '.join(early)} imported before gevent's monkey patch (each call would block every connection): "
            "serve with `vtt serve` or `python run.py`, or make `from gevent import monkey; monkey.patch_all()` "
            "the first lines of your own script"
        )


def imported_before_the_patch(packages: tuple[str, ...]) -> list[str]:
    """Those of ``packages`` whose modules hold an object gevent's patch replaced: bound at import, before it."""
    from gevent import monkey

    # monkey.saved: module name -> {attribute: the original}, kept from the first patch on
    originals = {id(item) for items in monkey.saved.values() for item in items.values() if callable(item)}
    loaded = list(sys.modules.items())
    return [
        package
        for package in packages
        if any(
            id(value) in originals
            for name, module in loaded
            if name == package or name.startswith(package + ".")
            for value in list(vars(module).values())
        )
    ]


# psycopg 3.1.14 waits through gevent's patched select; earlier releases wait in C, blocking every other greenlet.
PSYCOPG_FIRST_GREEN = (3, 1, 14)


def psycopg_blocks_greenlets(version: str) -> bool:
    """Whether this psycopg release ("3.1.13", "3.2.10", "3.2.0.dev1") waits for PostgreSQL without yielding."""
    release = re.match(r"\d+(?:\.\d+)*", version)
    if release is None:
        raise ValueError(f"not a psycopg version: {version!r}")
    return tuple(int(part) for part in release.group().split(".")) < PSYCOPG_FIRST_GREEN


def check_psycopg(database_url: str) -> None:
    """Refuse to serve PostgreSQL through a psycopg that blocks every greenlet while a query runs."""
    if make_url(database_url).get_driver_name() != "psycopg":
        return
    installed = metadata.version("psycopg")
    if psycopg_blocks_greenlets(installed):
        wanted = ".".join(map(str, PSYCOPG_FIRST_GREEN))
        raise click.ClickException(
            f"psycopg {installed} blocks every connection while a query runs under gevent: "
            f"install psycopg >= {wanted} (pip install 'psycopg[binary]>={wanted}')"
        )


def _forget_on_terminate(instance: str, workers) -> None:
    """On SIGTERM (``kill``, a service manager's stop) remove the serving record and stop the job workers, then
    terminate as before."""
    import signal

    import gevent

    def terminate() -> None:
        forget_serving(instance)
        workers.stop()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    try:
        gevent.signal_handler(signal.SIGTERM, terminate)
    except (ValueError, AttributeError):  # not the main thread: the record is ignored once the pid is gone
        pass


def startup_banner(app, host: str, port: int) -> str:
    """What ``make run`` prints first: the host login, where phones connect, the demo's juror join link and QR."""
    base = base_url(host, port, app.config.get("BASE_URL"))
    lines = [login_banner(base)]
    if host.strip() in ALL_INTERFACES:
        lines.append(f"LAN address: {base_url(host, port)}  (phones on this network open the links there)")
    elif host.strip() in (LOOPBACK, "localhost", "::1") and not app.config.get("BASE_URL"):
        lines.append("Only this computer can open these links; for phones on the venue Wi-Fi: make run HOST=0.0.0.0")
    demo = _demo_join_link(app, base)
    if demo:
        lines.append(f"Demo session: jurors join at {demo} (scan the code below)")
        lines.append(terminal_qr(demo))
    return "\n".join(lines)


def _demo_join_link(app, base: str) -> str | None:
    """The demo session's open join link, or its first juror's link; None when the demo is not loaded."""
    from sqlalchemy import select

    from ..extensions import database
    from ..models import VttSession
    from ..sessions.create import SessionConfig
    from ..sessions.demo import SESSION_FILE
    from ..sessions.links import person_links

    name = SessionConfig.from_file(SESSION_FILE).name
    with database.factory(app)() as db:
        demo = db.scalar(select(VttSession).where(VttSession.name == name))
        if demo is None:
            return None
        links = person_links(demo, base, app.config["SECRET_KEY"])
    return links["join_url"] or (links["jurors"][0]["url"] if links["jurors"] else None)


def terminal_qr(text: str) -> str:
    """A QR code of ``text`` drawn with block characters, light on dark so phones read it off a dark terminal."""
    import io

    import qrcode

    code = qrcode.QRCode(border=2, error_correction=qrcode.constants.ERROR_CORRECT_L)
    code.add_data(text)
    code.make(fit=True)
    drawn = io.StringIO()
    code.print_ascii(out=drawn, invert=True)
    return drawn.getvalue().rstrip("\n")


def serve_forever(app, host: str, port: int) -> None:
    """What ``socketio.run`` does under gevent, with ``TCP_NODELAY`` on every accepted socket.

    Without it an acknowledgement that follows a broadcast on the same socket waits ~40 ms for
    Nagle's algorithm to meet the client's delayed ACK (measured: host moves 52-68 ms -> 8-20 ms).
    """
    from gevent import pywsgi
    from geventwebsocket.handler import WebSocketHandler

    _unmask_frames_in_c()

    class NoDelayHandler(WebSocketHandler):
        def __init__(self, sock, *args, **kwargs):
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            super().__init__(sock, *args, **kwargs)

    socketio.wsgi_server = pywsgi.WSGIServer((host, port), app, handler_class=NoDelayHandler, log=None)
    start_queue_listener(socketio.server)
    app.extensions["vtt.hub"].start()
    socketio.wsgi_server.serve_forever()


def start_queue_listener(server) -> None:
    """Start the message queue's listener before the first client, not at it (python-socketio's way): from the
    start /healthz can tell a live listener from a dead one."""
    if not server.manager_initialized:
        server.manager_initialized = True
        server.manager.initialize()


def _unmask_frames_in_c() -> None:
    """gevent-websocket unmasks every byte a client sends in a Python loop; wsaccel's XOR is C.

    (gevent-websocket already takes wsaccel's UTF-8 validator when it is installed.)  Measured on
    a 2,000-juror burst: the loop's CPU per vote fell by a fifth.
    """
    from geventwebsocket.websocket import Header
    from wsaccel.xormask import XorMaskerSimple

    def unmask(header: Header, payload: bytes) -> bytes:
        return XorMaskerSimple(bytes(header.mask)).process(bytes(payload))

    Header.mask_payload = Header.unmask_payload = unmask


def check_port(host: str, port: int) -> None:
    """Bind (and release) ``host:port`` as the server will, so a busy port is one line, not a traceback."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET  # as gevent's server decides
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            if os.name != "nt":  # the server reuses addresses too, so a port in TIME_WAIT is not "busy"
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as error:
        raise click.ClickException(port_problem(host, port, error)) from error


def port_problem(host: str, port: int, error: OSError) -> str:
    other = port + 1 if port < 65535 else 8080
    pick = f"serve on another port with `make run PORT={other}` or `--port {other}`"
    if error.errno == errno.EADDRINUSE:
        return f"port {port} is busy on {host} (another program is listening there): {pick}"
    if error.errno == errno.EACCES:
        return f"not allowed to listen on port {port} (ports below 1024 need root): {pick}"
    reason = error.strerror or str(error)
    return (
        f"cannot listen on {host}:{port} ({reason}): give --host an address of this machine "
        "(127.0.0.1, or 0.0.0.0 for the LAN: `make run HOST=0.0.0.0`)"
    )
