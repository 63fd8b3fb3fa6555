"""Cross-site form posts stay refused now that same-origin posts carry their Origin.

The sharpest attacker is a page on 127.0.0.1 at another port: cross-origin but same-site, so
the browser still sends the SameSite=Lax session cookie; only the CSRF check stands in the way.
"""

from __future__ import annotations

import base64
import hashlib
import html
import secrets
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import httpx2
import pytest
from playwright.sync_api import Page, Route

from tests.live import LiveServer, free_port, start_live_server, stop_live_server

pytestmark = pytest.mark.live_server

PASSWORD = "correct-horse-battery-staple-42"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One server for the module: each test's forgery leaves nothing the others read."""
    live, pg_name = start_live_server(Path(tmp_path_factory.mktemp("csrf")))
    live.add_person("olivia", PASSWORD, "alpha", "owner")
    try:
        yield live
    finally:
        stop_live_server(live, pg_name)


def register_client(server: LiveServer, redirect_uri: str) -> str:
    answer = httpx2.post(
        f"{server.url}/oauth/register/",
        json={
            "client_name": "Forged consent target",
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "none",
        },
        timeout=10,
    )
    assert answer.status_code == 201, answer.text
    return str(answer.json()["client_id"])


def authorization_url(server: LiveServer, client_id: str, redirect_uri: str) -> str:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "scope": "continuity:read continuity:write",
        "state": secrets.token_urlsafe(12),
        "code_challenge": challenge.decode().rstrip("="),
        "code_challenge_method": "S256",
        "resource": server.mcp_url,
    }
    return f"{server.url}/oauth/authorize/?{urlencode(query)}"


def sign_in(page: Page, server: LiveServer, next_url: str) -> None:
    page.goto(f"{server.url}/accounts/login/?{urlencode({'next': next_url})}")
    page.get_by_label("Username").fill("olivia")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("button", name="Allow").wait_for()


def attacker_page(action: str, fields: dict[str, str]) -> str:
    inputs = "".join(
        f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
        for k, v in fields.items()
    )
    return (
        f'<!doctype html><title>Win a prize</title><form method="post" '
        f'action="{html.escape(action)}">{inputs}<button>Claim</button></form>'
    )


def test_it_refuses_a_consent_posted_from_another_origin(server: LiveServer, page: Page):
    redirect_uri = f"http://127.0.0.1:{free_port()}/callback"
    client_id = register_client(server, redirect_uri)
    consent_url = authorization_url(server, client_id, redirect_uri)
    sign_in(page, server, consent_url.removeprefix(server.url))
    # Everything the consent form posts is public, except the CSRF token the attacker lacks.
    fields = page.eval_on_selector_all(
        "main form input[type=hidden], main form input[type=radio]",
        "inputs => Object.fromEntries(inputs.map(i => [i.name, i.value]))",
    )
    assert fields.pop("csrfmiddlewaretoken")
    fields["allow"] = "Authorize"

    attacker = f"http://127.0.0.1:{free_port()}/"
    page.route(
        attacker,
        lambda route: route.fulfill(
            content_type="text/html", body=attacker_page(consent_url, fields)
        ),
    )
    page.goto(attacker)
    with page.expect_response(lambda r: r.request.method == "POST") as posted:
        page.get_by_role("button", name="Claim").click()

    answer = posted.value
    assert answer.status == 403
    assert answer.request.headers["origin"] == attacker.rstrip("/")
    assert page.get_by_role("heading", level=1).inner_text() == "This form could not be accepted"
    assert "Origin checking failed" in page.get_by_role("main").inner_text()
    left = server.run_python(
        """
from audit.models import AuditEvent
from identity.models import Grant
result = {"grants": Grant.objects.count(),
          "refusals": [[e.actor_label, e.target_id, e.error_code]
                       for e in AuditEvent.objects.filter(operation="csrf_rejected",
                                                          target_id="/oauth/authorize/")]}
"""
    )
    # The session cookie went along (same site), so the refusal names who was targeted.
    assert left == {"grants": 0, "refusals": [["olivia", "/oauth/authorize/", "csrf_failed"]]}


def test_it_refuses_a_sign_in_posted_from_another_site(server: LiveServer, page: Page):

    def serve(route: Route) -> None:
        form = {"username": "olivia", "password": PASSWORD, "next": "/"}
        route.fulfill(
            content_type="text/html", body=attacker_page(f"{server.url}/accounts/login/", form)
        )

    page.route("http://attacker.test/", serve)
    page.goto("http://attacker.test/")
    with page.expect_response(lambda r: r.request.method == "POST") as posted:
        page.get_by_role("button", name="Claim").click()

    assert posted.value.status == 403
    assert posted.value.request.headers["origin"] == "http://attacker.test"
    assert "sessionid" not in {c["name"] for c in page.context.cookies(server.url)}
    refusals = server.run_python(
        """
from audit.models import AuditEvent
result = [[e.actor_label, e.error_code] for e in
          AuditEvent.objects.filter(operation="csrf_rejected", target_id="/accounts/login/")]
"""
    )
    assert ["", "csrf_failed"] in refusals


@pytest.mark.parametrize(
    ("origin", "with_token", "status"),
    [
        (None, False, 403),  # no Origin and no token
        ("http://evil.example", False, 403),  # a foreign Origin and no token
        ("http://evil.example", True, 403),  # a foreign Origin even with a stolen token
        ("same", True, 302),  # the page's own post: the check above can fail
    ],
)
def test_it_checks_origin_and_token_on_a_plain_post(
    server: LiveServer, origin: str | None, with_token: bool, status: int
):
    with httpx2.Client(base_url=server.url, timeout=10) as http:
        form = {"username": "olivia", "password": PASSWORD, "next": "/"}
        if with_token:
            http.get("/accounts/login/")
            form["csrfmiddlewaretoken"] = http.cookies["csrftoken"]
        headers = {} if origin is None else {"Origin": server.url if origin == "same" else origin}
        answer = http.post("/accounts/login/", data=form, headers=headers)
    assert answer.status_code == status
    if status == 302:
        assert answer.headers["location"] == "/"
