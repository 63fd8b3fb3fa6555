"""A code is bound to the client it was issued to."""

from __future__ import annotations

from django.test import Client

from tests.factories import World
from tests.identity.conftest import signed_in
from tests.identity.flows import (
    Authorization,
    approve,
    exchange,
    issued_tokens,
    last_event,
    register,
)


def test_it_refuses_a_code_redeemed_by_another_client(world: World, api: Client):
    victim = register(api, name="Victim")
    attacker = register(api, name="Attacker", redirect_uris=[victim.redirect_uri])
    auth = Authorization(victim)
    code = approve(signed_in(world.owner), auth, world.alpha)["code"]

    stolen = exchange(api, auth, code, client_id=attacker.client_id)

    assert stolen.status_code == 400
    assert stolen.json()["error"] == "invalid_grant"
    assert not issued_tokens().exists()
    event = last_event("oauth_code_exchange")
    assert (event.outcome, event.error_code, event.client_id) == (
        "rejected",
        "code_of_another_client",
        attacker.client_id,
    )
    # The rightful client still redeems it.
    assert exchange(api, auth, code).status_code == 200


def test_it_refuses_a_confidential_client_without_its_secret(world: World, api: Client):
    confidential = register(api, auth_method="client_secret_post")
    auth = Authorization(confidential)
    code = approve(signed_in(world.owner), auth, world.alpha)["code"]

    response = exchange(api, auth, code)  # no client_secret

    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"
    assert last_event("oauth_code_exchange").error_code == "invalid_client"
