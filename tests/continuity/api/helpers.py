"""A REST client for tests: Django's test client with an API key of one persona."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.test import Client

from projects.api_keys import api_key_create
from projects.callers import operator_caller
from tests.factories import World

if TYPE_CHECKING:
    from django.test.client import _MonkeyPatchedWSGIResponse as Answer

READ_WRITE = ("continuity:read", "continuity:write")
BASE = "/api/v1/"


def api_key(world: World, who: str, scopes: tuple[str, ...] = READ_WRITE) -> str:
    project = world.beta if who == "outsider" else world.alpha
    issued = api_key_create(
        operator_caller(project), user_id=getattr(world, who).pk, label=who, scopes=list(scopes)
    )
    return issued.secret


@dataclass
class Api:
    secret: str
    client: Client = field(default_factory=Client)

    def call(self, method: str, path: str, body: Any = None, **headers: str) -> Answer:
        extra = {"Authorization": f"Bearer {self.secret}", **headers}
        data = None if body is None else json.dumps(body)
        return self.client.generic(
            method, BASE + path, data or "", content_type="application/json", headers=extra
        )

    def get(self, path: str, **headers: str) -> Answer:
        return self.call("GET", path, **headers)

    def write_context(self) -> dict[str, str]:
        return self.get("identity").json()["write_context"]


def api_for(world: World, who: str, scopes: tuple[str, ...] = READ_WRITE) -> Api:
    return Api(api_key(world, who, scopes))


def error_of(answer: Answer) -> dict[str, Any]:
    body = answer.json()
    assert set(body) == {"error"}, body
    return body["error"]
