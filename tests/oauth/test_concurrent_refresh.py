"""Sixteen simultaneous refreshes of one token: never two live families (PostgreSQL only)."""

from __future__ import annotations

import threading

import pytest
from django.db import connection
from django.test import Client

from identity.models import AccessToken, RefreshToken
from tests.factories import build_world
from tests.oauth.conftest import signed_in
from tests.oauth.flows import events, refresh, register, tokens_for

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

RACERS = 16


def test_it_never_leaves_two_live_families_from_concurrent_refreshes():
    world = build_world()
    oauth = register(Client())
    tokens = tokens_for(signed_in(world.owner), oauth, world.alpha)
    family = RefreshToken.objects.get().token_family
    start = threading.Barrier(RACERS)
    answers: list[tuple[int, str]] = []

    def race() -> None:
        try:
            start.wait()
            response = refresh(Client(), oauth, tokens["refresh_token"])
            answers.append((response.status_code, response.json().get("error", "")))
        finally:
            connection.close()

    threads = [threading.Thread(target=race) for _ in range(RACERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(answers) == RACERS
    # The row lock orders them: one rotates the token...
    assert sorted(answers)[0] == (200, "")
    assert sorted(answers)[1:] == [(400, "invalid_grant")] * (RACERS - 1)
    # ...and the others present a token already rotated, which is reuse: the family dies, so
    # there is never a second family, nor even a surviving one.
    live = RefreshToken.objects.filter(revoked__isnull=True)
    assert set(live.values_list("token_family", flat=True)) <= {family}
    assert live.count() == 0
    assert AccessToken.objects.filter(project__isnull=False).count() == 0
    assert RefreshToken.objects.values("token_family").distinct().count() == 1
    reuse = events("oauth_refresh_reuse")
    assert reuse
    assert {event.target_id for event in reuse} == {str(family)}
