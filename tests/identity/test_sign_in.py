"""Sign-in at /accounts/login/: plain, labelled, not frameable, and failures audited without
recording what was typed."""

from __future__ import annotations

from django.test import Client

from audit.models import AuditEvent
from tests.factories import World
from tests.identity.flows import last_event

PASSWORD = "pw-olivia-Xy7!"  # tests.factories.make_user's


def test_it_shows_a_labelled_form_that_cannot_be_framed(db, client: Client):
    response = client.get("/accounts/login/?next=/oauth/authorize/")
    html = response.content.decode()
    assert response.status_code == 200
    assert '<label for="id_username">' in html
    assert 'id="id_username"' in html
    assert '<label for="id_password">' in html
    assert 'id="id_password"' in html
    assert 'name="csrfmiddlewaretoken"' in html
    assert 'autocomplete="current-password"' in html
    assert response["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"]


def test_it_signs_in_and_returns_to_the_authorization_request(world: World, client: Client):
    response = client.post(
        "/accounts/login/",
        {"username": "olivia", "password": PASSWORD, "next": "/oauth/authorize/?x=1"},
    )
    assert response.status_code == 302
    assert response["Location"] == "/oauth/authorize/?x=1"


def test_it_refuses_to_return_to_another_site(world: World, client: Client):
    response = client.post(
        "/accounts/login/",
        {"username": "olivia", "password": PASSWORD, "next": "https://evil.example/"},
    )
    assert response["Location"] == "/"  # the front door, LOGIN_REDIRECT_URL


def test_it_audits_a_failed_sign_in_of_a_known_account(world: World, client: Client):
    response = client.post(
        "/accounts/login/", {"username": "olivia", "password": "guess-Secret-123"}
    )
    assert response.status_code == 200
    assert b"did not match" in response.content
    event = last_event("sign_in")
    assert (event.outcome, event.error_code) == ("rejected", "invalid_credentials")
    assert (event.user_id, event.actor_type, event.actor_label) == (
        world.owner.pk,
        "user",
        "olivia",
    )
    assert_nothing_typed_was_recorded("guess-Secret-123")


def test_it_records_nothing_typed_for_an_unknown_account(world: World, client: Client):
    # People type passwords into the username box: an unknown name is never stored.
    client.post("/accounts/login/", {"username": "hunter2-Password!", "password": "x"})
    event = last_event("sign_in")
    assert (event.actor_type, event.actor_id, event.actor_label, event.user_id) == (
        "anonymous",
        "",
        "",
        None,
    )
    assert_nothing_typed_was_recorded("hunter2-Password!")


def test_it_audits_an_inactive_account_like_a_wrong_password(world: World, client: Client):
    type(world.owner).objects.filter(pk=world.owner.pk).update(is_active=False)
    response = client.post("/accounts/login/", {"username": "olivia", "password": PASSWORD})
    assert response.status_code == 200
    assert last_event("sign_in").error_code == "invalid_credentials"
    assert_nothing_typed_was_recorded(PASSWORD)


def test_it_refuses_and_audits_a_sign_in_post_without_csrf(world: World):
    client = Client(enforce_csrf_checks=True)
    response = client.post("/accounts/login/", {"username": "olivia", "password": PASSWORD})
    assert response.status_code == 403
    event = last_event("csrf_rejected")
    assert (event.target_id, event.error_code) == ("/accounts/login/", "csrf_failed")


def assert_nothing_typed_was_recorded(text: str) -> None:
    for row in AuditEvent.objects.values():
        assert all(text not in str(value) for value in row.values())
