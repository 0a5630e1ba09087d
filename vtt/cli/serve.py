"""``vtt serve``, and the host's ways in: ``vtt host-login`` (a link that signs in) and ``vtt host-token``."""

from __future__ import annotations

import click

from ..serving.record import login_banner
from .tools import settings


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on (0.0.0.0 for a LAN).")
@click.option("--port", default=5000, show_default=True, type=click.IntRange(1, 65535))
@click.option(
    "--audit-log",
    type=click.Path(dir_okay=False),
    help="Append every message the server sends to clients to this file, one JSON line each (default: VTT_AUDIT_LOG).",
)
def serve(host: str, port: int, audit_log: str | None) -> None:
    """Serve the app with gevent (websockets included)."""
    import gevent
    from gevent import monkey

    # The vtt command line imports neither redis nor psycopg before this line; serve() refuses if that changes.
    monkey.patch_all()
    # Every greenlet would otherwise record the stack that spawned it: ~7 % of a loaded server's CPU.
    gevent.config.track_greenlet_tree = False
    from ..serving.server import serve as run_server

    run_server(host, port, audit_log)


@click.command("host-login")
@click.option(
    "--host",
    help="The host the server listens on (as given to serve); 0.0.0.0 prints this machine's "
    "LAN address. Default: the running server's (see below), else 127.0.0.1.",
)
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    help="The port the server listens on. Default: the running server's, else 5000.",
)
@click.option("--url", help="Print this address instead (e.g. behind a proxy); VTT_BASE_URL does the same.")
def host_login(host: str | None, port: int | None, url: str | None) -> None:
    """Print where and how the host signs in.

    The address, in order: --url, VTT_BASE_URL, --host/--port, the server serving this instance folder now
    (`vtt serve` and run.py note where in instance/serving.json), else http://127.0.0.1:5000.
    """
    from ..netaddr import LOOPBACK, base_url
    from .tools import cli_base_url

    if url or settings().base_url or (host is None and port is None):
        click.echo(login_banner(cli_base_url(url)))
    else:
        click.echo(login_banner(base_url(host or LOOPBACK, port or 5000)))


@click.command("host-token")
def host_token_command() -> None:
    """Print the host's API token: host control for a script over Socket.IO, without the login form.

    A client connects with auth {"code": CODE, "role": "host", "host_token": TOKEN} (docs/protocol.md).  The
    token is derived from this installation's secret key and host password: every process of the installation
    accepts it, and changing the host password (VTT_HOST_PASSWORD or instance/host_password) revokes it.
    """
    from ..access.host_token import host_token

    click.echo(host_token(settings().secret_key, settings().host_password))
