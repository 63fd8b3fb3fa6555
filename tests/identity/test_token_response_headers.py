"""Every token endpoint answer is JSON that no cache may keep."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.factories import World
from tests.identity.conftest import signed_in
from tests.identity.flows import API, Authorization, approve, exchange, refresh, register


def assert_uncacheable_json(response) -> None:
    assert response["Cache-Control"] == "no-store"
    assert response["Pragma"] == "no-cache"
    assert response["Content-Type"] == "application/json"


def test_it_marks_issued_tokens_no_store(world: World, api: Client):
    oauth = register(api)
    auth = Authorization(oauth)
    code = approve(signed_in(world.owner), auth, world.alpha)["code"]
    issued = exchange(api, auth, code)
    assert issued.status_code == 200
    assert_uncacheable_json(issued)
    refreshed = refresh(api, oauth, issued.json()["refresh_token"])
    assert refreshed.status_code == 200
    assert_uncacheable_json(refreshed)


@pytest.mark.parametrize(
    ("data", "status"),
    [
        ({"grant_type": "authorization_code", "code": "nope", "client_id": "{client}"}, 400),
        ({"grant_type": "refresh_token", "refresh_token": "nope", "client_id": "{client}"}, 400),
        ({"grant_type": "password", "username": "a", "password": "b"}, 400),
        ({"grant_type": "authorization_code", "code": "x", "client_id": "unknown"}, 401),
        ({}, 400),
    ],
)
def test_it_marks_errors_no_store_too(db, api: Client, data: dict[str, str], status: int):
    oauth = register(api)
    data = {k: v.replace("{client}", oauth.client_id) for k, v in data.items()}
    response = api.post("/oauth/token/", data)
    assert response.status_code == status
    assert_uncacheable_json(response)


def test_it_answers_invalid_target_as_json(world: World, api: Client):
    oauth = register(api)
    auth = Authorization(oauth)
    code = approve(signed_in(world.owner), auth, world.alpha)["code"]
    response = exchange(api, auth, code, resource=API)
    assert response.json()["error"] == "invalid_target"
    assert_uncacheable_json(response)
