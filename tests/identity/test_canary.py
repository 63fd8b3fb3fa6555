"""Canaries: every secret the flows produce (tokens, codes, verifiers, client secrets, API keys,
a typed password) must appear nowhere afterwards: not in the logs (everything at DEBUG, SQL
included), not in the audit log, not in any database column. Only digests are kept.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterable
from urllib.parse import parse_qs

import anyio
import httpx2
import pytest
from django.apps import apps
from django.db import connection
from django.test import Client
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import OAuthClientMetadata

from identity.models import AccessToken, Grant, RefreshToken
from projects.api_keys import api_key_create, api_key_revoke
from projects.callers import operator_caller
from tests.factories import World
from tests.identity.conftest import signed_in
from tests.identity.flows import (
    API,
    Authorization,
    approve,
    bearer,
    challenge_of,
    exchange,
    register,
)
from tests.live import ConsentBrowser, LiveServer, MemoryTokenStorage

PASSWORD = "correct-horse-battery-staple-42"


def canary_verifier() -> str:
    return "CANARYverifier" + secrets.token_urlsafe(40)


def leaks(secret_values: Iterable[str], text: str) -> list[str]:
    """The secrets (or any 20-character stretch of one) found in the text."""
    found = []
    for value in secret_values:
        stretches = {value[i : i + 20] for i in range(0, max(1, len(value) - 19), 5)}
        if value in text or any(stretch in text for stretch in stretches if len(stretch) == 20):
            found.append(value[:6] + "...")
    return found


def database_text() -> str:
    """Every row of every table, as text."""
    rows: list[str] = []
    for model in apps.get_models():
        rows.extend(repr(row) for row in model._base_manager.values_list())
    return "\n".join(rows)


def in_process_flows(world: World, api: Client) -> list[str]:
    """Run every credential-bearing flow once (and its attacks); return the secrets it saw."""
    planted: list[str] = []
    browser = signed_in(world.owner)
    confidential = register(api, auth_method="client_secret_post")
    public = register(api)
    planted += [str(confidential.client_secret)]
    planted += [c.registration["registration_access_token"] for c in (confidential, public)]

    verifier, wrong = canary_verifier(), canary_verifier()
    auth = Authorization(public, resource=API, verifier=verifier, challenge=challenge_of(verifier))
    code = approve(browser, auth, world.alpha)["code"]
    exchange(api, auth, code, verifier=wrong)  # a wrong verifier first
    first = exchange(api, auth, code).json()
    exchange(api, auth, code)  # a replay: revokes what the code bought
    planted += [verifier, wrong, code, first["access_token"], first["refresh_token"]]

    verifier = canary_verifier()
    auth = Authorization(confidential, verifier=verifier, challenge=challenge_of(verifier))
    code = approve(browser, auth, world.alpha)["code"]
    data = {"client_secret": confidential.client_secret}
    tokens = api.post(
        "/oauth/token/",
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": confidential.redirect_uri,
            "client_id": confidential.client_id,
            "code_verifier": auth.verifier,
            **data,
        },
    ).json()
    rotated = api.post(
        "/oauth/token/",
        {
            "grant_type": "refresh_token",
            "refresh_token": tokens["refresh_token"],
            "client_id": confidential.client_id,
            **data,
        },
    ).json()
    # Presented again at once: the rotation's answer again, kept sealed (refresh_window).
    repeat = api.post(
        "/oauth/token/",
        {
            "grant_type": "refresh_token",
            "refresh_token": tokens["refresh_token"],
            "client_id": confidential.client_id,
            **data,
        },
    ).json()
    assert repeat["refresh_token"] == rotated["refresh_token"]
    assert RefreshToken.objects.exclude(successor_sealed="").exists()
    planted += [auth.verifier, code, tokens["access_token"], tokens["refresh_token"]]
    planted += [rotated["access_token"], rotated["refresh_token"]]

    key = api_key_create(
        operator_caller(world.alpha), user_id=world.owner.pk, label="k", scopes=["continuity:read"]
    )
    api.get("/api/v1/identity", headers=bearer(key.secret))
    api_key_revoke(operator_caller(world.alpha), api_key_id=key.api_key.pk)
    api.get("/api/v1/identity", headers=bearer(key.secret))  # presented after revocation
    planted.append(key.secret)

    Client().post("/accounts/login/", {"username": "olivia", "password": PASSWORD})
    planted.append(PASSWORD)
    return planted


def test_it_keeps_every_planted_secret_out_of_logs_audit_and_columns(
    world: World, api: Client, caplog: pytest.LogCaptureFixture
):
    # Everything at DEBUG except the two loggers settings.LOGGING pins (oauthlib writes codes
    # and refresh tokens at DEBUG; see test_it_pins_the_oauth_libraries_log_levels).
    caplog.set_level(logging.DEBUG)
    for name in ("django", "heyaira", "projects", "audit", "continuity"):
        caplog.set_level(logging.DEBUG, logger=name)
    connection.force_debug_cursor = True  # SQL and its parameters in the log as well
    try:
        planted = in_process_flows(world, api)
    finally:
        connection.force_debug_cursor = False

    assert len(set(planted)) == len(planted) == 16
    assert all(planted)
    assert "django.db.backends" in {record.name for record in caplog.records}
    assert leaks(planted, caplog.text) == []
    assert leaks(planted, database_text()) == []  # the audit log is one of these tables
    # What is kept instead: digests.
    assert set(AccessToken.objects.values_list("token", flat=True)) <= {""}
    assert set(RefreshToken.objects.values_list("token", flat=True)) == {""}
    assert all(len(code) == 64 for code in Grant.objects.values_list("code", flat=True))


def test_it_pins_the_oauth_libraries_log_levels():
    assert logging.getLogger("oauthlib").getEffectiveLevel() >= logging.WARNING
    assert logging.getLogger("oauth2_provider").getEffectiveLevel() >= logging.INFO


@pytest.mark.live_server
def test_it_keeps_secrets_out_of_the_running_servers_log_and_database(asgi_server: LiveServer):
    server = asgi_server
    server.add_person("olivia", PASSWORD, "alpha", "owner")
    planted, sent = anyio.run(live_flows, server)
    key = server.manage("create_api_key", "alpha", "--user", "olivia").strip().splitlines()[-1]
    planted.append(key)
    anyio.run(use_and_revoke_key, server, key)
    planted.append("wrong-" + PASSWORD)

    assert len([value for value in planted if value]) >= 8
    assert any("code_verifier" in body for body in sent)
    assert leaks(planted, server.log_text()) == []
    dump = server.run_python(
        """
from django.apps import apps
result = "\\n".join(repr(row) for model in apps.get_models()
                    for row in model._base_manager.values_list())
"""
    )
    assert "oauth_code_exchange" in dump
    assert leaks(planted, dump) == []


async def live_flows(server: LiveServer) -> tuple[list[str], list[str]]:
    """The SDK's whole flow with a confidential client, a refresh, and a repeat of it."""
    sent: list[str] = []

    async def remember(request: httpx2.Request) -> None:
        if request.method == "POST":
            sent.append((await request.aread()).decode())

    browser = ConsentBrowser(username="olivia", password=PASSWORD, project_slug="alpha")
    storage = MemoryTokenStorage()
    identity = f"{server.url}/api/v1/identity"
    provider = OAuthClientProvider(
        server_url=identity,
        client_metadata=OAuthClientMetadata(
            client_name="canary",
            redirect_uris=["http://127.0.0.1:33418/callback"],
            grant_types=["authorization_code", "refresh_token"],
            token_endpoint_auth_method="client_secret_post",
        ),
        storage=storage,
        redirect_handler=browser.redirect_handler,
        callback_handler=browser.callback_handler,
    )
    async with httpx2.AsyncClient(
        auth=provider, timeout=30, event_hooks={"request": [remember]}
    ) as http:
        assert (await http.get(identity)).status_code == 200
        first = storage.tokens
        provider.context.token_expiry_time = 1.0  # long past: refresh on the next call
        assert (await http.get(identity)).status_code == 200
    async with httpx2.AsyncClient(timeout=30) as http:
        assert storage.client_info is not None
        assert first is not None
        reuse = await http.post(
            f"{server.url}/oauth/token/",
            data={
                "grant_type": "refresh_token",
                "refresh_token": str(first.refresh_token),
                "client_id": storage.client_info.client_id,
                "client_secret": str(storage.client_info.client_secret),
            },
        )
        await failed_sign_in(http, server)
    assert storage.tokens is not None
    # Presented again within the repeat window: the rotation's answer, sealed in the database.
    assert reuse.json()["refresh_token"] == storage.tokens.refresh_token
    assert storage.tokens.access_token != first.access_token  # it did refresh
    code = parse_qs(browser.location.split("?", 1)[1])["code"][0]
    verifiers = [parse_qs(body).get("code_verifier", [""])[0] for body in sent]
    planted = [
        code,
        *[v for v in verifiers if v],
        str(storage.client_info.client_secret),
        str(first.access_token),
        str(first.refresh_token),
        storage.tokens.access_token,
        str(storage.tokens.refresh_token),
    ]
    return planted, sent


async def failed_sign_in(http: httpx2.AsyncClient, server: LiveServer) -> None:
    page = await http.get(f"{server.url}/accounts/login/")
    token = page.text.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]
    await http.post(
        f"{server.url}/accounts/login/",
        data={"csrfmiddlewaretoken": token, "username": "olivia", "password": "wrong-" + PASSWORD},
    )


async def use_and_revoke_key(server: LiveServer, key: str) -> None:
    async with httpx2.AsyncClient(timeout=30) as http:
        assert (await http.get(f"{server.url}/api/v1/identity", headers=bearer(key))).is_success
    await anyio.to_thread.run_sync(
        server.run_python,
        """
from projects.api_keys import api_key_revoke
from projects.callers import operator_caller
from projects.models import ApiKey
key = ApiKey.objects.select_related("project").get()
api_key_revoke(operator_caller(key.project), api_key_id=key.pk)
""",
    )
    async with httpx2.AsyncClient(timeout=30) as http:
        response = await http.get(f"{server.url}/api/v1/identity", headers=bearer(key))
        assert response.status_code == 401
