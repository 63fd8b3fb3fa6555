"""The document fetcher on its own: which addresses it refuses, that it resolves a host once
and connects to that very address, and how long it keeps a document."""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

import pytest

from identity.cimd.addresses import address_problem
from identity.cimd.document import parse_client_id
from identity.cimd.fetch import fetch_document, max_age
from identity.cimd.refusals import Refused
from tests.identity.cimd_server import DocumentServer
from tests.identity.flows import REDIRECT_URI


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.10.10",  # link-local
        "100.64.0.1",  # shared address space (CGNAT)
        "0.0.0.0",  # noqa: S104 (an address to refuse, not one to bind)
        "224.0.0.1",  # multicast
        "239.255.255.250",
        "240.0.0.1",  # reserved
        "255.255.255.255",
        "192.0.2.10",  # documentation
        "::1",
        "::",
        "fe80::1",
        "fc00::1",
        "ff02::1",
        "::ffff:10.0.0.1",  # IPv4-mapped
        "2002:a00:1::1",  # 6to4 of 10.0.0.1
        "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
        "2001:0:4136:e378:8000:63bf:f5ff:fffe",  # Teredo (client 10.0.0.1)
    ],
)
def test_it_refuses_non_public_addresses(address: str):
    assert address_problem(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize(
    "address",
    [
        "169.254.169.254",
        "169.254.170.2",
        "100.100.100.200",
        "168.63.129.16",
        "fd00:ec2::254",
        "::ffff:169.254.169.254",
        "64:ff9b::a9fe:a9fe",
    ],
)
def test_it_refuses_cloud_metadata_even_for_a_host_the_operator_named(address: str):
    problem = address_problem(ipaddress.ip_address(address), private_allowed=True)
    assert problem == "a cloud metadata address"


@pytest.mark.parametrize("address", ["93.184.215.14", "1.1.1.1", "2606:4700:4700::1111"])
def test_it_accepts_public_addresses(address: str):
    assert address_problem(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize(
    ("client_id", "code"),
    [
        ("http://client.example/doc.json", "cimd_not_https"),
        ("HTTP://client.example/doc.json", "cimd_not_https"),
        ("ftp://client.example/doc.json", "cimd_not_https"),
        ("https://client.example", "cimd_invalid_url"),
        ("https://client.example/", "cimd_invalid_url"),
        ("https://user:pw@client.example/doc.json", "cimd_invalid_url"),
        ("https://client.example/doc.json#frag", "cimd_invalid_url"),
        ("https://client.example/a/../doc.json", "cimd_invalid_url"),
        ("https://client.example/./doc.json", "cimd_invalid_url"),
        ("https://clíent.example/doc.json", "cimd_invalid_url"),
        ("https://client.example:99999/doc.json", "cimd_invalid_url"),
        ("https://client.example/" + "a" * 300, "cimd_invalid_url"),
    ],
)
def test_it_refuses_client_ids_that_are_not_fetchable_urls(client_id: str, code: str):
    with pytest.raises(Refused) as refused:
        parse_client_id(client_id)
    assert refused.value.code == code


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("max-age=600", 600),
        ("public, max-age=7200, immutable", 7200),
        ('max-age="900"', 900),
        ("max-age=1", 300),
        ("max-age=99999999", 86400),
        ("no-cache, max-age=600", 300),
        ("no-store", 300),
        ("s-maxage=600", 300),
        ("", 300),
    ],
)
def test_it_keeps_a_document_for_its_max_age_between_the_bounds(header: str, seconds: int):
    assert max_age(header) == seconds


def test_it_resolves_the_host_once_and_connects_to_that_address(
    docs: DocumentServer, settings: Any, monkeypatch: pytest.MonkeyPatch
):
    """DNS rebinding: the first answer is judged, a later one would point elsewhere. The
    connection must go to the judged address (a second lookup would fail the fetch)."""
    settings.HEYAIRA_CIMD_PRIVATE_HOSTS = ["client-docs.test"]
    client_id = docs.document("/apps/pinned.json", REDIRECT_URI, host="client-docs.test")
    real = socket.getaddrinfo
    lookups: list[str] = []

    def rebinding_dns(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host != "client-docs.test":
            return real(host, port, *args, **kwargs)
        lookups.append(host)
        # First answer: the document server. Any later answer: an address that goes nowhere.
        target = "127.0.0.1" if len(lookups) == 1 else "192.0.2.1"
        return real(target, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding_dns)

    document, _ = fetch_document(client_id)

    assert document["client_id"] == client_id
    assert lookups == ["client-docs.test"]
    assert docs.requests == ["/apps/pinned.json"]


def test_it_refuses_a_host_when_any_of_its_addresses_is_private(
    docs: DocumentServer, monkeypatch: pytest.MonkeyPatch
):
    real = socket.getaddrinfo

    def mixed_dns(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host != "client-docs.test":
            return real(host, port, *args, **kwargs)
        return real("93.184.215.14", port, *args, **kwargs) + real("10.0.0.5", port)

    monkeypatch.setattr(socket, "getaddrinfo", mixed_dns)

    with pytest.raises(Refused) as refused:
        fetch_document(docs.url("/apps/mixed.json", host="client-docs.test"))
    assert refused.value.code == "cimd_private_address"
    assert docs.requests == []


def test_it_gives_up_on_a_server_that_never_answers(docs: DocumentServer):
    # A listener that accepts and never answers: CIMD_FETCH_TIMEOUT_SECONDS ends the wait.
    with socket.create_server(("127.0.0.1", 0)) as silent:
        port = silent.getsockname()[1]
        with pytest.raises(Refused) as refused:
            fetch_document(f"https://127.0.0.1:{port}/apps/slow.json")
    assert refused.value.code in ("cimd_unreachable", "cimd_tls_failed")
