"""Sixteen simultaneous refreshes of one token: one rotation, one answer for all, one live
family (PostgreSQL: real row locks between real threads). The live-server race with MCP calls
is tests/identity/test_refresh_race_live.py."""

from __future__ import annotations

import threading

import pytest
from django.db import connection
from django.test import Client

from identity.models import AccessToken, RefreshToken
from tests.factories import build_world
from tests.identity.conftest import signed_in
from tests.identity.flows import API, bearer, events, refresh, register, tokens_for

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

RACERS = 16


def test_simultaneous_refreshes_all_get_the_one_rotations_answer():
    world = build_world()
    oauth = register(Client())
    tokens = tokens_for(signed_in(world.owner), oauth, world.alpha, resource=API)
    family = RefreshToken.objects.get().token_family
    start = threading.Barrier(RACERS)
    answers: list[tuple[int, dict[str, object]]] = []

    def race() -> None:
        try:
            start.wait()
            response = refresh(Client(), oauth, tokens["refresh_token"])
            answers.append((response.status_code, response.json()))
        finally:
            connection.close()

    threads = [threading.Thread(target=race) for _ in range(RACERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert [status for status, _ in answers] == [200] * RACERS
    pairs = {(body["access_token"], body["refresh_token"]) for _, body in answers}
    assert len(pairs) == 1  # the row lock ordered them: one rotation, the rest its answer
    ((access, new_refresh),) = pairs
    live = RefreshToken.objects.filter(revoked__isnull=True)
    assert list(live.values_list("token_family", flat=True)) == [family]
    assert RefreshToken.objects.count() == 2  # the first token and its one successor
    assert AccessToken.objects.filter(project__isnull=False).count() == 1
    assert Client().get("/api/v1/identity", headers=bearer(str(access))).status_code == 200
    assert refresh(Client(), oauth, str(new_refresh)).status_code == 200
    assert len(events("oauth_token_refresh", outcome="success")) == 2  # the race's and ours
    assert len(events("oauth_token_refresh", outcome="replayed")) == RACERS - 1
    assert not events("oauth_refresh_reuse")
