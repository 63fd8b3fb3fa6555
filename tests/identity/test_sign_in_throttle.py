"""Guessing passwords: after too many failed sign-ins from one address, sign-in is refused there
for fifteen minutes, on our sign-in page and on the admin's, even with the right password."""

from __future__ import annotations

import pytest
from django.test import Client

from audit.models import AuditEvent
from tests.factories import World

PASSWORD = "pw-olivia-Xy7!"  # tests.factories.make_user's
LIMIT = 3


@pytest.fixture(autouse=True)
def small_limit(settings) -> None:
    settings.HEYAIRA_SIGN_IN_FAILURES_PER_WINDOW = LIMIT


def guess(client: Client, path: str = "/accounts/login/", address: str = "203.0.113.7") -> int:
    response = client.post(
        path, {"username": "olivia", "password": "wrong-Guess-123"}, REMOTE_ADDR=address
    )
    return response.status_code


def test_it_refuses_even_the_right_password_once_an_address_failed_too_often(
    world: World, client: Client
):
    assert [guess(client) for _ in range(LIMIT)] == [200] * LIMIT
    response = client.post(
        "/accounts/login/",
        {"username": "olivia", "password": PASSWORD},
        REMOTE_ADDR="203.0.113.7",
    )
    assert response.status_code == 429
    assert "Too many failed sign-ins" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_it_audits_the_lockout_once(world: World, client: Client):
    for _ in range(LIMIT + 3):
        guess(client)
    rows = AuditEvent.objects.filter(operation="sign_in", error_code="sign_in_throttled")
    assert rows.count() == 1


def test_other_addresses_still_sign_in(world: World, client: Client):
    for _ in range(LIMIT):
        guess(client)
    response = client.post(
        "/accounts/login/",
        {"username": "olivia", "password": PASSWORD, "next": "/admin/"},
        REMOTE_ADDR="198.51.100.9",
    )
    assert response.status_code == 302


def test_the_admin_sign_in_is_closed_to_the_same_address(world: World, client: Client):
    world.owner.is_staff = True
    world.owner.save()
    for _ in range(LIMIT):
        guess(client, "/admin/login/")
    response = client.post(
        "/admin/login/",
        {"username": "olivia", "password": PASSWORD, "next": "/admin/"},
        REMOTE_ADDR="203.0.113.7",
    )
    assert response.status_code == 200  # the admin's form, with an error: not signed in
    assert "_auth_user_id" not in client.session
