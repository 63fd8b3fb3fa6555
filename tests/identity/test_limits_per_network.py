"""Every per-client limit counts the client's network, not its address: one IPv4 address, or
one IPv6 /64 (HEYAIRA_IPV6_NETWORK_PREFIX), whatever address in it each request comes from.

In-process here; tests/identity/test_limits_per_network_live.py drives the production server
behind a trusted proxy, and tests/identity/test_ipv6_namespace_live.py real IPv6 sources."""

from __future__ import annotations

import pytest
from django.test import Client, override_settings

from audit import noise
from audit.models import AnonymousRejection
from core.networks import client_network
from identity.models import Application
from tests.factories import World
from tests.identity.flows import register_raw

PASSWORD = "pw-olivia-Xy7!"  # tests.factories.make_user's
METADATA = {"redirect_uris": ["https://c.example/cb"], "token_endpoint_auth_method": "none"}


def hosts_of(prefix: str, count: int) -> list[str]:
    """`count` different addresses inside one IPv6 prefix, spread over its host bits."""
    return [f"{prefix}:{n:x}:{n * 7 % 65536:x}::{n + 1:x}" for n in range(count)]


@pytest.mark.parametrize(
    ("address", "network"),
    [
        ("198.51.100.7", "198.51.100.7"),
        ("2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"),
        ("[2001:db8:1:2::9]:4711", "2001:db8:1:2::/64"),
        ("::ffff:198.51.100.7", "198.51.100.7"),
        ("not an address", "unknown"),
    ],
)
def test_a_client_network_is_the_ipv4_address_or_the_ipv6_64(address: str, network: str):
    assert client_network(address) == network


@override_settings(HEYAIRA_IPV6_NETWORK_PREFIX=56)
def test_the_ipv6_prefix_is_a_setting():
    assert client_network("2001:db8:1:2ff::1") == "2001:db8:1:200::/56"


def test_sixty_registrations_from_one_64_are_held_to_the_limit(api: Client):
    answers = [
        register_raw(api, METADATA, address=host).status_code
        for host in hosts_of("2001:db8:1:2", 60)
    ]
    assert answers.count(201) == 20  # HEYAIRA_DCR_RATE_LIMIT_PER_HOUR's default
    assert answers.count(429) == 40
    assert Application.objects.count() == 20
    # The next /64 is another client.
    assert register_raw(api, METADATA, address="2001:db8:1:3::1").status_code == 201


@override_settings(HEYAIRA_DCR_RATE_LIMIT_PER_HOUR=2, HEYAIRA_IPV6_NETWORK_PREFIX=48)
def test_a_shorter_prefix_counts_a_whole_site_as_one_client(api: Client):
    answers = [
        register_raw(api, METADATA, address=f"2001:db8:1:{n}::1").status_code for n in range(4)
    ]
    assert answers == [201, 201, 429, 429]


def test_the_sign_in_lockout_holds_across_one_64(world: World, settings):
    settings.HEYAIRA_SIGN_IN_FAILURES_PER_WINDOW = 3
    client = Client()
    hosts = hosts_of("2001:db8:5:6", 5)
    for host in hosts[:3]:
        wrong = {"username": "olivia", "password": "wrong-Guess-123"}
        assert client.post("/accounts/login/", wrong, REMOTE_ADDR=host).status_code == 200
    right = {"username": "olivia", "password": PASSWORD}
    locked = client.post("/accounts/login/", right, REMOTE_ADDR=hosts[3])
    assert locked.status_code == 429
    assert "_auth_user_id" not in client.session
    # The attempt during the lockout is counted under the network.
    assert AnonymousRejection.objects.filter(
        source="2001:db8:5:6::/64", reason="sign_in_throttled"
    ).exists()
    # Another /64 signs in.
    assert client.post("/accounts/login/", right, REMOTE_ADDR="2001:db8:5:7::1").status_code == 302


def test_noise_counts_use_the_same_network(transactional_db, settings):
    settings.HEYAIRA_IPV6_NETWORK_PREFIX = 60
    noise.count_rejection("authenticate", "invalid_token", "2001:db8:1:2::1")
    noise.count_rejection("authenticate", "invalid_token", "2001:db8:1:f::1")
    [row] = AnonymousRejection.objects.all()
    assert (row.source, row.count) == ("2001:db8:1::/60", 2)
