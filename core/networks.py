"""The client's network: what every per-client limit and count is keyed by.

One IPv4 address is one client; one IPv6 host is usually given a whole /64 (and may pick a new
address in it for every request), so IPv6 clients count per prefix, its length the setting
HEYAIRA_IPV6_NETWORK_PREFIX (64 by default). Sign-in throttling, registration and token limits
(identity.ratelimit) and the anonymous-noise counts (audit.noise) all key by `client_network`
of the address heyaira.proxies decided, so no limit can be dodged by moving inside a /64.
"""

from __future__ import annotations

import ipaddress

from django.conf import settings

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

DEFAULT_IPV6_PREFIX = 64
UNKNOWN_NETWORK = "unknown"


def parse_address(text: str) -> Address | None:
    """An address as a peer or an X-Forwarded-For hop writes it (`v4`, `v4:port`, `v6`,
    `[v6]:port`); an IPv4-mapped IPv6 address is its IPv4 address. None if unreadable."""
    text = text.strip()
    if text.startswith("[") and "]" in text:  # [v6]:port
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # v4:port
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def ipv6_prefix() -> int:
    return int(getattr(settings, "HEYAIRA_IPV6_NETWORK_PREFIX", DEFAULT_IPV6_PREFIX))


def client_network(address: str) -> str:
    """The network a client counts under: its IPv4 address, its IPv6 prefix in CIDR notation
    (`2001:db8:1:2::/64`), or "unknown" for anything unreadable (all such count together)."""
    parsed = parse_address(address)
    if parsed is None:
        return UNKNOWN_NETWORK
    if parsed.version == 4:
        return str(parsed)
    return str(ipaddress.ip_network(f"{parsed}/{ipv6_prefix()}", strict=False))
