"""The client's address, from X-Forwarded-For only when the peer is a trusted proxy.

`HEYAIRA_TRUSTED_PROXIES` (addresses and CIDRs, empty by default) names the proxies. When the
connection comes from one of them, the client is the rightmost X-Forwarded-For entry that is not
itself a trusted proxy: each proxy appends the address it saw, so entries to the left of that
are whatever the client wrote and prove nothing. From any other peer the headers are ignored.

This runs once, at the top of the ASGI application, for Django and /mcp alike, so rate limits,
sign-in throttling and the anonymous-noise counts all see the same address; each keys it by
the client's network (core.networks: the address for IPv4, its /64 for IPv6), parsed by the
same function that reads the hops here. uvicorn's own
proxy-header handling must stay off (`--no-proxy-headers`; gunicorn.conf.py trusts no address
for the worker), or it would rewrite the peer before this can judge it.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence

from core.networks import Address, parse_address

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(name: str, items: Iterable[str]) -> tuple[Network, ...]:
    """The trusted proxies of a setting; a malformed item is an error naming the setting."""
    networks = []
    for item in items:
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ValueError(f"{name}: {item!r} is not an IP address or CIDR") from None
    return tuple(networks)


def _trusted(address: Address | None, proxies: Sequence[Network]) -> bool:
    return address is not None and any(address in network for network in proxies)


def client_address(peer: str, forwarded_for: Sequence[str], proxies: Sequence[Network]) -> str:
    """The address to count a request under (see the module's docstring)."""
    if not proxies or not _trusted(parse_address(peer), proxies):
        return peer
    hops = [hop for value in forwarded_for for hop in value.split(",") if hop.strip()]
    for hop in reversed(hops):
        address = parse_address(hop)
        if address is None:
            return peer  # a trusted proxy passed on something unreadable: trust none of it
        if not _trusted(address, proxies):
            return str(address)
    return peer  # only proxies: the request started at one of them


def forwarded_values(headers: Iterable[tuple[bytes, bytes]]) -> list[str]:
    """Every X-Forwarded-For header of an ASGI scope, in order."""
    wanted = b"x-forwarded-for"
    return [value.decode("latin-1") for name, value in headers if name.lower() == wanted]
