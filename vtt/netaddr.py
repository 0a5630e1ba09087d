"""The address other machines reach this server at: the one place that turns a bind host into a URL.

The serve banner, ``vtt host-login`` and the players' and jurors' join links all use :func:`base_url`.
"""

from __future__ import annotations

import socket

ALL_INTERFACES = ("0.0.0.0", "::", "")
LOOPBACK = "127.0.0.1"


def lan_address() -> str:
    """The IPv4 address of the interface that routes outward, or 127.0.0.1 when there is none.

    Connecting a UDP socket only picks a route (no packet is sent), and the socket's own address is
    then the one a phone on the same network would use.
    """
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("10.255.255.255", 1))
            address = probe.getsockname()[0]
    except OSError:
        return LOOPBACK
    return address if address and address != "0.0.0.0" else LOOPBACK


def reachable_host(bind_host: str) -> str:
    """The host to print for a server bound to ``bind_host``: all interfaces mean the LAN address."""
    return lan_address() if bind_host.strip() in ALL_INTERFACES else bind_host.strip()


def base_url(bind_host: str, port: int, configured: str | None = None) -> str:
    """What links start with: ``configured`` (Settings.base_url, VTT_BASE_URL) when set, else derived."""
    if configured:
        return configured.rstrip("/")
    host = reachable_host(bind_host)
    if ":" in host and not host.startswith("["):  # an IPv6 literal
        host = f"[{host}]"
    return f"http://{host}:{port}"
