"""Where a client ID metadata document may be fetched from: public addresses only.

A client_id URL is chosen by whoever starts an authorization request, so fetching it is a
request the server makes on a stranger's behalf. Without a rule it could read the cloud
metadata service, an admin port on loopback, or anything on the private network. The host is
resolved once, every address it resolves to is judged, and the connection then goes to one of
those very addresses (identity.cimd.fetch), so a second DNS answer cannot move it elsewhere.

Refused: loopback, private (RFC 1918, unique local), link-local, shared/CGNAT (100.64/10),
multicast, reserved, unspecified and documentation ranges, and IPv6 forms that carry such an
IPv4 address (mapped, 6to4, Teredo, NAT64). A host named in HEYAIRA_CIMD_PRIVATE_HOSTS may
resolve to non-public addresses (an internal client registry, a test), except the cloud
metadata addresses, which are never fetched.
"""

from __future__ import annotations

import ipaddress
import socket

from django.conf import settings
from django.http.request import validate_host

from identity.cimd.refusals import Refused

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

# Instance metadata services: AWS, GCP and Azure (IMDS), AWS ECS, Alibaba, Azure's wire server,
# AWS over IPv6. Never fetched, whatever an operator allows.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(text)
    for text in (
        "169.254.169.254",
        "169.254.170.2",
        "100.100.100.200",
        "168.63.129.16",
        "fd00:ec2::254",
    )
)
NAT64 = ipaddress.ip_network("64:ff9b::/96")


def resolve(host: str, port: int) -> list[str]:
    """The addresses to connect to for `host`, resolved once; Refused when it resolves to
    nothing usable, or to any address it may not (one bad answer spoils the host: a mix of
    public and private answers is how rebinding starts)."""
    try:
        answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise Refused("cimd_unreachable", "its host name does not resolve") from None
    addresses = list(dict.fromkeys(str(answer[4][0]) for answer in answers))
    if not addresses:
        raise Refused("cimd_unreachable", "its host name does not resolve")
    private_allowed = host_may_be_private(host)
    for text in addresses:
        problem = address_problem(ipaddress.ip_address(text.split("%", 1)[0]), private_allowed)
        if problem:
            raise Refused("cimd_private_address", f"its host resolves to {problem}")
    return addresses


def host_may_be_private(host: str) -> bool:
    """Named by the operator (exact names, or `.example.internal` for a domain and below)."""
    allowed = [name.lower() for name in settings.HEYAIRA_CIMD_PRIVATE_HOSTS]
    return bool(allowed) and validate_host(host.lower().strip("[]"), allowed)


def address_problem(address: Address, private_allowed: bool = False) -> str | None:
    """Why this address may not be fetched from, or None."""
    judged = [address, *embedded_ipv4(address)]
    if any(candidate in METADATA_ADDRESSES for candidate in judged):
        return "a cloud metadata address"
    if private_allowed or all(is_public(candidate) for candidate in judged):
        return None
    return "a loopback, private, link-local or otherwise non-public address"


def is_public(address: Address) -> bool:
    # is_global alone lets multicast (and NAT64's reserved prefix) through.
    return address.is_global and not (
        address.is_multicast or address.is_reserved or address.is_unspecified
    )


def embedded_ipv4(address: Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries (mapped, 6to4, Teredo, NAT64): each must pass
    too, or an AAAA record could point at an internal IPv4 host."""
    if not isinstance(address, ipaddress.IPv6Address):
        return []
    found = [a for a in (address.ipv4_mapped, address.sixtofour) if a is not None]
    if address.teredo is not None:
        found.extend(address.teredo)
    if address in NAT64:
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return found
