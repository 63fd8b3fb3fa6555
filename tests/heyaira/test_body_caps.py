"""heyaira.bodies in front of an app that echoes what it was given: the cap of each path class
from its setting, a declared length over the cap refused before any read, a chunked body read
no further than the cap, and one within it handed on whole with its length."""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from typing import Any

import anyio
import pytest
from django.test import override_settings

from heyaira.bodies import BodyLimits, capped

pytestmark = pytest.mark.django_db(transaction=True)  # a refusal is counted (audit.noise)


async def echo(scope: Any, receive: Any, send: Any) -> None:
    """An app that reads the whole body and answers with it and the length it was declared."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    headers = dict(scope["headers"])
    answer = {"length": headers.get(b"content-length", b"").decode(), "body": body.decode()}
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": json.dumps(answer).encode()})


def serve(path: str, chunks: list[bytes], *, declared: int | None, limit: int) -> dict[str, Any]:
    """Send `chunks` (chunked when nothing is declared); what was answered, and read."""
    pulled = 0
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        pulled += 1
        if pulled > len(chunks):
            return {"type": "http.disconnect"}
        more = pulled < len(chunks)
        return {"type": "http.request", "body": chunks[pulled - 1], "more_body": more}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    headers = [(b"host", b"testserver")]
    if declared is None:
        headers.append((b"transfer-encoding", b"chunked"))
    else:
        headers.append((b"content-length", str(declared).encode()))
    scope = {
        "type": "http",
        "method": "POST",
        "path": path,
        "headers": headers,
        "client": ("192.0.2.4", 1),
    }
    anyio.run(capped, echo, limit, scope, receive, send)
    start = sent[0]
    return {
        "status": start["status"],
        "headers": dict(start["headers"]),
        "body": b"".join(m.get("body", b"") for m in sent[1:]),
        "pulled": pulled,
    }


def test_each_path_class_has_its_cap_from_its_setting():
    with override_settings(
        HEYAIRA_MAX_BODY_BYTES_MCP=1000,
        HEYAIRA_MAX_BODY_BYTES_API=2000,
        HEYAIRA_MAX_BODY_BYTES_OAUTH=3000,
        HEYAIRA_MAX_BODY_BYTES_OTHER=4000,
        HEYAIRA_MAX_BODY_BYTES_IMPORT=5000,
    ):
        limits = BodyLimits.from_settings()
    paths = ["/mcp", "/api/v1/tasks", "/oauth/token/", "/accounts/login/", "/admin/"]
    assert [limits.for_path(p) for p in paths] == [1000, 2000, 3000, 4000, 4000]
    # A bundle's import has its own cap when it declares its length; chunked, it would be
    # read into memory, so it gets the API's.
    assert limits.for_path("/api/v1/import") == 5000
    assert limits.for_path("/api/v1/import", chunked=True) == 2000


def test_a_declared_length_over_the_cap_is_refused_before_any_read():
    answer = serve("/oauth/register/", [b"x" * 10], declared=10_000_000, limit=100)
    assert (answer["status"], answer["pulled"]) == (413, 0)
    assert answer["headers"][b"connection"] == b"close"


def test_a_chunked_body_is_read_no_further_than_the_cap():
    answer = serve("/api/v1/memories", [b"x" * 60] * 1000, declared=None, limit=100)
    assert (answer["status"], answer["pulled"]) == (413, 2)  # 120 bytes: one chunk past it
    error = json.loads(answer["body"])["error"]
    assert (error["code"], list(error["fields"])) == ("validation_error", ["body"])


def test_a_chunked_body_within_the_cap_is_handed_on_whole_with_its_length():
    answer = serve("/api/v1/memories", [b'{"a":', b' "chunked"', b"}"], declared=None, limit=100)
    assert answer["status"] == 200
    assert json.loads(answer["body"]) == {"length": "16", "body": '{"a": "chunked"}'}


def test_a_declared_body_within_the_cap_is_left_to_the_server():
    answer = serve("/accounts/login/", [b"a=1"], declared=3, limit=100)
    assert json.loads(answer["body"]) == {"length": "3", "body": "a=1"}
