"""vtt.netaddr: the one place a bind host becomes the address phones and browsers use."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from vtt import netaddr


@pytest.mark.parametrize("bind_host", ["0.0.0.0", "::", ""])
def test_all_interfaces_mean_the_lan_address(lan_address, bind_host):
    assert netaddr.reachable_host(bind_host) == lan_address
    assert netaddr.base_url(bind_host, 8080) == f"http://{lan_address}:8080"


@pytest.mark.parametrize("bind_host", ["127.0.0.1", "10.1.2.3", "vtt.local"])
def test_a_specific_host_is_kept(lan_address, bind_host):
    assert netaddr.reachable_host(bind_host) == bind_host
    assert netaddr.base_url(bind_host, 5000) == f"http://{bind_host}:5000"


def test_an_ipv6_host_is_bracketed(lan_address):
    assert netaddr.base_url("::1", 5000) == "http://[::1]:5000"


def test_the_configured_base_url_wins(lan_address):
    assert netaddr.base_url("0.0.0.0", 5000, "https://vtt.example.org/") == "https://vtt.example.org"
    assert netaddr.base_url("127.0.0.1", 5000, None) == "http://127.0.0.1:5000"
    assert netaddr.base_url("127.0.0.1", 5000, "") == "http://127.0.0.1:5000"


def test_lan_address_is_an_ipv4_address_of_this_machine():
    address = ipaddress.IPv4Address(netaddr.lan_address())
    assert not address.is_unspecified


def test_lan_address_falls_back_to_loopback_without_a_route(monkeypatch):
    class NoRoute(socket.socket):
        def connect(self, address):
            raise OSError(101, "Network is unreachable")

    monkeypatch.setattr(netaddr.socket, "socket", NoRoute)
    assert netaddr.lan_address() == "127.0.0.1"
    assert netaddr.base_url("0.0.0.0", 5000) == "http://127.0.0.1:5000"
