"""Whose X-Forwarded-For counts: only a trusted proxy's, and then its rightmost untrusted entry."""

from __future__ import annotations

import pytest

from heyaira.proxies import client_address, parse_networks

PROXIES = parse_networks("HEYAIRA_TRUSTED_PROXIES", ["10.0.0.0/8", "192.0.2.1"])


@pytest.mark.parametrize(
    ("peer", "forwarded", "client"),
    [
        # An untrusted peer's header changes nothing, whatever it says.
        ("203.0.113.5", ["198.51.100.7"], "203.0.113.5"),
        ("127.0.0.1", ["198.51.100.7"], "127.0.0.1"),
        # A trusted proxy's entry is used; what the client wrote to its left is not.
        ("192.0.2.1", ["198.51.100.7"], "198.51.100.7"),
        ("192.0.2.1", ["6.6.6.6, 198.51.100.7"], "198.51.100.7"),
        ("10.1.2.3", ["6.6.6.6", "198.51.100.7, 10.9.9.9"], "198.51.100.7"),
        ("10.1.2.3", ["[2001:db8::5]:4711"], "2001:db8::5"),
        ("10.1.2.3", ["198.51.100.7:4711"], "198.51.100.7"),
        # Nothing usable: the peer itself.
        ("10.1.2.3", [], "10.1.2.3"),
        ("10.1.2.3", ["10.4.4.4"], "10.1.2.3"),
        ("10.1.2.3", ["6.6.6.6, not-an-address"], "10.1.2.3"),
    ],
)
def test_it_takes_the_client_from_a_trusted_proxy_only(
    peer: str, forwarded: list[str], client: str
):
    assert client_address(peer, forwarded, PROXIES) == client


def test_it_trusts_no_proxy_by_default():
    assert client_address("127.0.0.1", ["198.51.100.7"], ()) == "127.0.0.1"


def test_it_refuses_a_setting_that_is_not_an_address():
    with pytest.raises(ValueError, match=r"HEYAIRA_TRUSTED_PROXIES: 'proxy\.internal'"):
        parse_networks("HEYAIRA_TRUSTED_PROXIES", ["proxy.internal"])
