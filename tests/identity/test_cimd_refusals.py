"""Client ID metadata documents HeyAira refuses, one test each. Every refusal is shown to the
person as a page (never a redirect: the client is not trusted yet, RFC 6749 section 4.1.2.1),
says why, creates no client, and is audited as a refused registration."""

from __future__ import annotations

from typing import Any

from django.test import Client

from identity.models import Application
from tests.factories import World
from tests.identity.cimd_server import DocumentServer
from tests.identity.conftest import signed_in
from tests.identity.flows import REDIRECT_URI, Authorization, OAuthClient, last_event


def authorize(client: Client, client_id: str, **auth: Any) -> Any:
    return client.get(Authorization(OAuthClient(client_id, REDIRECT_URI), **auth).url())


def assert_refused(page: Any, client_id: str, code: str, why: str) -> None:
    assert page.status_code == 400, page.content
    assert "Location" not in page  # shown to the person, never sent back to the client
    html = page.content.decode()
    assert "This connection request cannot continue" in html
    assert f"HeyAira cannot use the description this application publishes at {client_id}" in html
    assert why in html
    assert not Application.objects.filter(client_id=client_id).exists()
    event = last_event("oauth_client_register", outcome="rejected")
    assert (event.error_code, event.client_id, event.target_type) == (
        code,
        client_id,
        "cimd_client",
    )


def test_it_refuses_a_client_id_over_http(world: World, docs: DocumentServer):
    docs.document("/apps/plain.json", REDIRECT_URI)
    client_id = f"http://127.0.0.1:{docs.port}/apps/plain.json"

    page = authorize(signed_in(world.owner), client_id)

    assert_refused(page, client_id, "cimd_not_https", "a client ID that is a URL must use https")
    assert docs.requests == []


def test_it_refuses_a_document_on_a_private_address(world: World, docs: DocumentServer, settings):
    settings.HEYAIRA_CIMD_PRIVATE_HOSTS = []  # 127.0.0.1 is no longer named by the operator
    client_id = docs.document("/apps/internal.json", REDIRECT_URI)

    page = authorize(signed_in(world.owner), client_id)

    assert_refused(
        page, client_id, "cimd_private_address", "the server does not fetch from that address"
    )
    assert docs.requests == []  # judged before connecting


def test_it_refuses_a_host_the_operator_did_not_name(world: World, docs: DocumentServer):
    # Only "127.0.0.1" is named: "localhost" resolves there too, and stays refused.
    client_id = docs.document("/apps/local.json", REDIRECT_URI, host="localhost")

    page = authorize(signed_in(world.owner), client_id)

    assert_refused(
        page, client_id, "cimd_private_address", "the server does not fetch from that address"
    )
    assert docs.requests == []


def test_it_refuses_an_oversized_document(world: World, docs: DocumentServer):
    client_id = docs.url("/apps/big.json")
    padding = "x" * 6000
    docs.publish(
        "/apps/big.json",
        {"client_id": client_id, "redirect_uris": [REDIRECT_URI], "client_uri": padding},
    )

    page = authorize(signed_in(world.owner), client_id)

    assert_refused(
        page, client_id, "cimd_too_large", "the document is larger than this server accepts"
    )


def test_it_refuses_an_oversized_document_that_declares_no_length(
    world: World, docs: DocumentServer
):
    client_id = docs.url("/apps/stream.json")
    body = b'{"client_id": "' + client_id.encode() + b'", "x": "' + b"y" * 200_000 + b'"}'
    docs.publish(
        "/apps/stream.json",
        body=body,
        headers={"Content-Type": "application/json"},
        chunked=True,
    )

    page = authorize(signed_in(world.owner), client_id)

    assert_refused(
        page, client_id, "cimd_too_large", "the document is larger than this server accepts"
    )


def test_it_refuses_a_redirect(world: World, docs: DocumentServer):
    target = docs.document("/apps/real.json", REDIRECT_URI)
    client_id = docs.url("/apps/moved.json")
    docs.publish("/apps/moved.json", status=302, headers={"Location": target})

    page = authorize(signed_in(world.owner), client_id)

    assert_refused(page, client_id, "cimd_redirect", "documents are not fetched through one")
    assert docs.requests == ["/apps/moved.json"]  # the redirect was not followed


def test_it_refuses_a_document_naming_another_client_id(world: World, docs: DocumentServer):
    client_id = docs.url("/apps/impostor.json")
    docs.publish(
        "/apps/impostor.json",
        {"client_id": docs.url("/apps/claude.json"), "redirect_uris": [REDIRECT_URI]},
    )

    page = authorize(signed_in(world.owner), client_id)

    assert_refused(
        page,
        client_id,
        "cimd_client_id_mismatch",
        "the document&#x27;s client_id is not the URL it was fetched from",
    )
    assert not Application.objects.filter(registration_source="cimd").exists()


def test_it_refuses_a_redirect_uri_the_document_does_not_list(world: World, docs: DocumentServer):
    client_id = docs.document("/apps/listed.json", REDIRECT_URI)

    page = authorize(
        signed_in(world.owner), client_id, redirect_uri="http://127.0.0.1:8765/elsewhere"
    )

    assert page.status_code == 400
    assert "Location" not in page
    html = page.content.decode()
    assert "The redirect URI is not one of those the application lists in its published" in html
    assert client_id in html
    event = last_event("oauth_authorize", outcome="rejected")
    assert (event.error_code, event.client_id) == ("redirect_uri_mismatch", client_id)
    # The document itself was fine: the client exists, with only the URI it lists.
    assert Application.objects.get(client_id=client_id).redirect_uris == REDIRECT_URI


def test_it_refuses_a_document_of_a_confidential_client(world: World, docs: DocumentServer):
    client_id = docs.document(
        "/apps/secretive.json", REDIRECT_URI, token_endpoint_auth_method="client_secret_basic"
    )

    page = authorize(signed_in(world.owner), client_id)

    assert_refused(
        page,
        client_id,
        "cimd_invalid_metadata",
        "the document does not describe a client this server can accept",
    )


def test_it_refuses_a_document_listing_an_unsafe_redirect_uri(world: World, docs: DocumentServer):
    client_id = docs.document("/apps/unsafe.json", "http://evil.example/callback")

    page = authorize(signed_in(world.owner), client_id, redirect_uri="http://evil.example/callback")

    assert_refused(
        page,
        client_id,
        "cimd_invalid_redirect_uri",
        "the document lists a redirect URI this server does not accept",
    )


def test_it_refuses_a_certificate_it_cannot_verify(world: World, docs: DocumentServer, settings):
    settings.HEYAIRA_CIMD_CA_BUNDLE = ""  # the system's trust store knows no test CA
    client_id = docs.document("/apps/selfmade.json", REDIRECT_URI)

    page = authorize(signed_in(world.owner), client_id)

    assert_refused(
        page, client_id, "cimd_tls_failed", "its https certificate could not be verified"
    )


def test_it_says_why_again_while_it_waits_to_retry(world: World, docs: DocumentServer):
    client_id = docs.url("/apps/impostor.json")
    docs.publish(
        "/apps/impostor.json", {"client_id": "https://else.example/c", "redirect_uris": []}
    )
    browser = signed_in(world.owner)
    authorize(browser, client_id)

    again = authorize(browser, client_id)

    assert_refused(
        again,
        client_id,
        "cimd_client_id_mismatch",
        "the document&#x27;s client_id is not the URL it was fetched from",
    )
    assert docs.fetched("/apps/impostor.json") == 1  # DOT's backoff: not fetched again yet


def test_it_counts_refusals_for_people_not_signed_in(docs: DocumentServer, db: None):
    from audit.models import AnonymousRejection, AuditEvent

    client_id = f"http://127.0.0.1:{docs.port}/apps/plain.json"
    for _ in range(5):
        page = authorize(Client(), client_id)
        assert page.status_code == 400
        assert "a client ID that is a URL must use https" in page.content.decode()

    counted = AnonymousRejection.objects.get(reason="cimd_not_https")
    assert counted.count == 5
    assert AuditEvent.objects.filter(error_code="cimd_not_https").count() == 1
