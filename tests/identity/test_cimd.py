"""Client ID metadata documents: an https client_id is fetched, checked, cached for its
max-age within bounds, shown by its host on the consent page, audited, and limited like a
registration. The documents live on a real HTTPS server (tests/identity/cimd_server.py)."""

from __future__ import annotations

from datetime import timedelta

from django.test import Client, override_settings
from django.utils import timezone

from audit.models import AnonymousRejection
from identity.models import Application
from tests.factories import World
from tests.identity.cimd_server import DocumentServer
from tests.identity.conftest import signed_in
from tests.identity.flows import (
    API,
    REDIRECT_URI,
    Authorization,
    OAuthClient,
    approve,
    bearer,
    consent_page,
    events,
    exchange,
    last_event,
    refresh,
    register,
    register_raw,
)


def documented(url: str) -> OAuthClient:
    return OAuthClient(client_id=url, redirect_uri=REDIRECT_URI)


def test_it_advertises_client_id_metadata_documents(api: Client):
    metadata = api.get("/.well-known/oauth-authorization-server").json()
    assert metadata["client_id_metadata_document_supported"] is True
    assert "none" in metadata["token_endpoint_auth_methods_supported"]


def test_it_signs_in_a_documented_client_and_shows_where_it_is_published(
    world: World, api: Client, docs: DocumentServer
):
    url = docs.document("/apps/claude.json", REDIRECT_URI, client_name="Claude")
    browser = signed_in(world.owner)
    auth = Authorization(documented(url), resource=API)

    page = consent_page(browser, auth)

    assert page.status_code == 200, page.content
    html = page.content.decode()
    host = f"127.0.0.1:{docs.port}"
    assert "This app identifies itself as <strong>Claude</strong>, published at" in html
    assert f"<strong>{host}</strong>" in html
    assert f"Connect “Claude” from {host} to HeyAira?" in html
    application = Application.objects.get(client_id=url)
    assert (application.registration_source, application.client_type) == ("cimd", "public")
    assert application.client_secret == ""  # a public client: nothing generated, nothing hashed
    assert application.redirect_uris == REDIRECT_URI
    assert application.name == "Claude"
    first_seen = last_event("oauth_client_register")
    assert (first_seen.outcome, first_seen.target_type, first_seen.target_id) == (
        "success",
        "cimd_client",
        url,
    )
    assert first_seen.client_id == url

    code = approve(browser, auth, world.alpha)["code"]
    tokens = exchange(api, auth, code).json()
    identity = api.get("/api/v1/identity", headers=bearer(tokens["access_token"]))
    assert identity.status_code == 200
    assert identity.json()["project"]["slug"] == "alpha"
    application.refresh_from_db()
    assert application.first_token_at is not None  # used: never purged as abandoned
    assert refresh(api, documented(url), tokens["refresh_token"]).status_code == 200
    assert docs.fetched("/apps/claude.json") == 1  # the cached document served every step


def test_it_keeps_the_document_for_its_max_age_within_bounds(
    world: World, api: Client, docs: DocumentServer
):
    cases = {
        "/hour.json": ("max-age=3600", 3600),
        "/short.json": ("max-age=5", 300),  # below the floor
        "/year.json": ("public, max-age=31536000", 86400),  # above the ceiling
        "/nostore.json": ("no-store", 300),
        "/none.json": ("", 300),
    }
    browser = signed_in(world.owner)
    for path, (cache_control, expected) in cases.items():
        url = docs.url(path)
        docs.publish(
            path,
            {"client_id": url, "redirect_uris": [REDIRECT_URI]},
            cache_control=cache_control,
        )
        before = timezone.now()
        assert consent_page(browser, Authorization(documented(url))).status_code == 200
        expires = Application.objects.get(client_id=url).cimd_expires_at
        assert expires is not None
        assert abs((expires - before).total_seconds() - expected) < 5, path


def test_it_fetches_a_stale_document_again_and_audits_the_refresh(
    world: World, api: Client, docs: DocumentServer
):
    url = docs.document("/apps/tool.json", REDIRECT_URI)
    browser = signed_in(world.owner)
    assert consent_page(browser, Authorization(documented(url))).status_code == 200
    # The publisher moves its redirect URI; the cached copy expires.
    other = "http://127.0.0.1:9999/other"
    docs.document("/apps/tool.json", other, client_name="Renamed tool")
    Application.objects.filter(client_id=url).update(
        cimd_expires_at=timezone.now() - timedelta(seconds=1)
    )

    page = consent_page(browser, Authorization(documented(url), redirect_uri=other))

    assert page.status_code == 200, page.content
    assert "Renamed tool" in page.content.decode()
    assert docs.fetched("/apps/tool.json") == 2
    refreshed = last_event("oauth_client_metadata_refresh")
    assert (refreshed.outcome, refreshed.target_id) == ("success", url)
    assert len(events("oauth_client_register", outcome="success")) == 1


def test_it_keeps_the_last_good_document_when_a_refresh_fails(
    world: World, api: Client, docs: DocumentServer
):
    url = docs.document("/apps/flaky.json", REDIRECT_URI)
    browser = signed_in(world.owner)
    assert consent_page(browser, Authorization(documented(url))).status_code == 200
    docs.publish("/apps/flaky.json", status=500, body=b"down")
    Application.objects.filter(client_id=url).update(
        cimd_expires_at=timezone.now() - timedelta(seconds=1)
    )

    assert consent_page(browser, Authorization(documented(url))).status_code == 200
    failed = last_event("oauth_client_metadata_refresh")
    assert (failed.outcome, failed.error_code) == ("rejected", "cimd_http_status")


def test_it_counts_a_new_document_against_the_registration_limit(
    world: World, api: Client, docs: DocumentServer, settings
):
    settings.HEYAIRA_DCR_RATE_LIMIT_PER_HOUR = 1
    register(api)  # the network's one registration this hour
    url = docs.document("/apps/late.json", REDIRECT_URI)

    page = Client().get(Authorization(documented(url)).url())

    assert page.status_code == 429
    assert "too many new clients from this network" in page.content.decode()
    assert docs.fetched("/apps/late.json") == 0  # refused before any fetch
    assert not Application.objects.filter(client_id=url).exists()
    counted = AnonymousRejection.objects.get(
        operation="oauth_client_register", reason="rate_limited"
    )
    assert counted.count == 1
    assert last_event("oauth_client_register", outcome="rejected").error_code == "rate_limited"


def test_it_counts_a_new_document_against_the_cap_on_unused_clients(
    world: World, api: Client, docs: DocumentServer
):
    register(api)
    url = docs.document("/apps/capped.json", REDIRECT_URI)

    with override_settings(HEYAIRA_UNUSED_CLIENTS_MAX=1):
        page = consent_page(signed_in(world.owner), Authorization(documented(url)))

    assert page.status_code == 429
    assert "accepts no more new clients for now" in page.content.decode()
    assert not Application.objects.filter(client_id=url).exists()
    refused = last_event("oauth_client_register", outcome="rejected")
    assert (refused.error_code, refused.actor_label) == ("registration_cap", "olivia")


def test_a_known_document_client_is_not_a_new_registration(
    world: World, api: Client, docs: DocumentServer, settings
):
    url = docs.document("/apps/known.json", REDIRECT_URI)
    browser = signed_in(world.owner)
    assert consent_page(browser, Authorization(documented(url))).status_code == 200
    settings.HEYAIRA_DCR_RATE_LIMIT_PER_HOUR = 1  # the first sight used this network's one
    assert register_raw(api, {"redirect_uris": [REDIRECT_URI]}).status_code == 429
    Application.objects.filter(client_id=url).update(
        cimd_expires_at=timezone.now() - timedelta(seconds=1)
    )

    # Over the network's limit, yet a stale known client is simply fetched again.
    assert consent_page(browser, Authorization(documented(url))).status_code == 200
    assert docs.fetched("/apps/known.json") == 2


def test_a_document_url_longer_than_the_audit_columns_is_recorded_by_its_start(
    world: World, docs: DocumentServer
):
    path = "/apps/" + "nested/" * 30 + "client.json"
    url = docs.document(path, REDIRECT_URI)
    assert len(url) > 200

    assert consent_page(signed_in(world.owner), Authorization(documented(url))).status_code == 200

    event = last_event("oauth_client_register")
    assert (event.outcome, event.client_id, event.target_id) == ("success", url[:100], url[:128])
