"""The consent page: who asks, where the browser goes, which project, which scopes; never
skipped, never frameable, never more than the role allows."""

from __future__ import annotations

import pytest
from django.test import Client

from identity.models import AccessToken, Application, Grant
from tests.factories import World, make_user
from tests.identity.conftest import signed_in
from tests.identity.flows import (
    Authorization,
    approve,
    consent_page,
    consent_post_data,
    exchange,
    last_event,
    redirect_params,
    register,
    tokens_for,
)


def test_it_shows_the_client_the_redirect_host_and_the_projects(world: World, api: Client):
    world_admin_project_member = world.admin  # alpha admin
    oauth = register(api, name="Claude Desktop", redirect_uris=["https://claude.example/cb"])

    page = consent_page(signed_in(world_admin_project_member), Authorization(oauth))

    assert page.status_code == 200
    html = page.content.decode()
    assert "Claude Desktop" in html
    assert "claude.example" in html
    assert "Alpha" in html
    assert "(alpha, you are admin)" in html
    assert "Beta" not in html  # not a project of theirs
    assert '<label for="project-1">' in html  # every control has a label
    assert page["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in page["Content-Security-Policy"]
    assert page["Cache-Control"] == "no-store"


def test_it_shows_each_project_with_the_scopes_that_role_gets(world: World, api: Client):
    make_project_where_owner_is_viewer(world)
    oauth = register(api)
    page = consent_page(signed_in(world.owner), Authorization(oauth))
    choices = {choice.slug: choice for choice in page.context["choices"]}
    assert len(choices["alpha"].granted) == 3
    assert len(choices["gamma"].granted) == 1
    assert choices["gamma"].role == "Viewer"


def make_project_where_owner_is_viewer(world: World):
    from core.access import Role
    from tests.factories import add_member, make_project

    other_owner = make_user("greta")
    gamma = make_project("gamma", other_owner)
    add_member(gamma, world.owner, Role.VIEWER)
    return gamma


def test_it_escapes_the_client_name(world: World, api: Client):
    oauth = register(api, name='<script>alert("x")</script>')
    html = consent_page(signed_in(world.owner), Authorization(oauth)).content.decode()
    assert "<script>alert" not in html
    assert "&lt;script&gt;" in html


@pytest.mark.parametrize(
    ("who", "asked", "granted"),
    [
        ("viewer", "continuity:read continuity:write audit:read", "continuity:read"),
        (
            "contributor",
            "continuity:read continuity:write audit:read",
            "continuity:read continuity:write",
        ),
        (
            "admin",
            "continuity:read continuity:write audit:read",
            "audit:read continuity:read continuity:write",
        ),
        ("owner", "continuity:read", "continuity:read"),
    ],
)
def test_it_never_grants_more_than_the_role_allows(
    world: World, api: Client, who: str, asked: str, granted: str
):
    tokens = tokens_for(signed_in(getattr(world, who)), register(api), world.alpha, scope=asked)
    assert tokens["scope"] == granted
    assert AccessToken.objects.get(project__isnull=False).scope == granted
    assert last_event("oauth_consent").outcome == "success"


def test_it_caps_a_tampered_scope_field_to_the_role(world: World, api: Client):
    oauth = register(api)
    auth = Authorization(oauth, scope="continuity:read")
    browser = signed_in(world.viewer)
    data = consent_post_data(consent_page(browser, auth), project=world.alpha)
    data["scope"] = "continuity:read continuity:write audit:read"

    code = redirect_params(browser.post(auth.url(), data))["code"]

    assert Grant.objects.get().scope == "continuity:read"
    assert exchange(api, auth, code).json()["scope"] == "continuity:read"


def test_it_refuses_when_the_role_allows_none_of_the_request(world: World, api: Client):
    oauth = register(api)
    auth = Authorization(oauth, scope="continuity:write")
    browser = signed_in(world.viewer)
    response = browser.post(
        auth.url(), consent_post_data(consent_page(browser, auth), project=world.alpha)
    )
    assert response.status_code == 400
    assert b"allows none of the access asked" in response.content
    assert not Grant.objects.exists()


def test_it_refuses_a_project_the_user_is_not_in(world: World, api: Client):
    oauth = register(api)
    auth = Authorization(oauth)
    browser = signed_in(world.owner)
    data = consent_post_data(consent_page(browser, auth), project=world.beta)

    response = browser.post(auth.url(), data)

    assert response.status_code == 400
    assert not response.has_header("Location")
    assert b"Select a valid choice" in response.content
    assert not Grant.objects.exists()
    event = last_event("oauth_consent")
    assert (event.outcome, event.error_code, event.user_id, event.client_id) == (
        "rejected",
        "validation_error",
        world.owner.pk,
        oauth.client_id,
    )


def test_it_refuses_an_allow_without_a_project(world: World, api: Client):
    oauth = register(api)
    auth = Authorization(oauth)
    browser = signed_in(world.owner)
    response = browser.post(
        auth.url(), consent_post_data(consent_page(browser, auth), project=None)
    )
    assert response.status_code == 400
    assert not Grant.objects.exists()


def test_it_refuses_a_consent_post_without_csrf(world: World, api: Client):
    oauth = register(api)
    auth = Authorization(oauth)
    browser = signed_in(world.owner)
    data = consent_post_data(consent_page(browser, auth), project=world.alpha)
    forged = Client(enforce_csrf_checks=True)
    forged.force_login(world.owner)

    response = forged.post(auth.url(), data)

    assert response.status_code == 403
    assert not Grant.objects.exists()
    event = last_event("csrf_rejected")
    assert (event.outcome, event.target_id, event.user_id) == (
        "rejected",
        "/oauth/authorize/",
        world.owner.pk,
    )


def test_it_redirects_a_denial_with_access_denied(world: World, api: Client):
    oauth = register(api)
    auth = Authorization(oauth)
    params = approve(signed_in(world.owner), auth, world.alpha, allow=False)
    assert params == {"error": "access_denied", "state": auth.state, "iss": "http://testserver"}
    assert not Grant.objects.exists()
    event = last_event("oauth_consent")
    assert (event.outcome, event.error_code, event.user_id) == (
        "rejected",
        "access_denied",
        world.owner.pk,
    )


def test_it_shows_the_form_despite_approval_prompt_auto(world: World, api: Client):
    oauth = register(api)
    browser = signed_in(world.owner)
    tokens_for(browser, oauth, world.alpha)  # an earlier approval exists
    auth = Authorization(oauth, extra={"approval_prompt": "auto"})
    page = consent_page(browser, auth)
    assert page.status_code == 200
    assert "form" in page.context


def test_it_never_lets_an_application_skip_consent(world: World, api: Client):
    oauth = register(api)
    application = Application.objects.get(client_id=oauth.client_id)
    application.skip_authorization = True
    application.save()
    assert Application.objects.get(pk=application.pk).skip_authorization is False
    # Forced behind the model's back: the code still needs a chosen project, so none is issued.
    Application.objects.filter(pk=application.pk).update(skip_authorization=True)
    response = consent_page(signed_in(world.owner), Authorization(oauth))
    assert "code" not in redirect_params(response)
    assert redirect_params(response)["error"] == "access_denied"
    assert not Grant.objects.exists()


def test_it_sends_an_anonymous_person_to_sign_in_first(world: World, api: Client):
    oauth = register(api)
    auth = Authorization(oauth)
    response = Client().get(auth.url())
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=/oauth/authorize/")


def test_it_tells_a_person_without_projects_there_is_nothing_to_connect(db, api: Client):
    loner = make_user("lonely")
    page = consent_page(signed_in(loner), Authorization(register(api)))
    html = page.content.decode()
    assert "not a member of any project" in html
    assert 'name="allow"' not in html
