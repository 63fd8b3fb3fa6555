"""An authorization code works once. A replay is refused and kills what the code bought."""

from __future__ import annotations

import threading

import pytest
from django.db import connection
from django.test import Client

from identity.models import Grant, RefreshToken
from identity.policy import code_digest
from tests.factories import World, build_world
from tests.identity.conftest import signed_in
from tests.identity.flows import (
    API,
    Authorization,
    approve,
    bearer,
    events,
    exchange,
    issued_tokens,
    last_event,
    refresh,
    register,
)


def test_it_refuses_a_replayed_code_and_revokes_the_tokens_it_bought(world: World, api: Client):
    oauth = register(api)
    auth = Authorization(oauth, resource=API)
    code = approve(signed_in(world.owner), auth, world.alpha)["code"]
    first = exchange(api, auth, code).json()
    assert api.get("/api/v1/identity", headers=bearer(first["access_token"])).status_code == 200

    replay = exchange(api, auth, code)

    assert replay.status_code == 400
    assert replay.json()["error"] == "invalid_grant"
    assert api.get("/api/v1/identity", headers=bearer(first["access_token"])).status_code == 401
    assert refresh(api, oauth, first["refresh_token"]).json()["error"] == "invalid_grant"
    assert not issued_tokens().exists()
    assert not RefreshToken.objects.filter(revoked__isnull=True).exists()
    security = last_event("oauth_code_replay")
    assert (security.outcome, security.error_code) == ("rejected", "family_revoked")
    assert (security.project_id, security.user_id, security.client_id) == (
        world.alpha.pk,
        world.owner.pk,
        oauth.client_id,
    )
    attempt = events("oauth_code_exchange", outcome="rejected")[0]
    assert attempt.error_code == "code_replayed"


def test_it_stores_codes_only_as_digests(world: World, api: Client):
    oauth = register(api)
    auth = Authorization(oauth)
    code = approve(signed_in(world.owner), auth, world.alpha)["code"]
    exchange(api, auth, code)

    stored = Grant.objects.get()
    assert stored.code == code_digest(code)
    assert code not in stored.code
    assert stored.redeemed_at is not None
    assert stored.issued_family is not None


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_lets_no_two_concurrent_exchanges_of_one_code_both_keep_tokens():
    world = build_world()
    api = Client()
    oauth = register(api)
    auth = Authorization(oauth)
    code = approve(signed_in(world.owner), auth, world.alpha)["code"]
    start = threading.Barrier(8)
    statuses: list[int] = []

    def redeem() -> None:
        try:
            start.wait()
            statuses.append(exchange(Client(), auth, code).status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=redeem) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert statuses.count(200) <= 1
    assert statuses.count(400) >= 7
    # Whoever won, the code was used twice: nothing it bought survives.
    assert not issued_tokens().exists()
    assert not RefreshToken.objects.filter(revoked__isnull=True).exists()
    assert events("oauth_code_replay")
