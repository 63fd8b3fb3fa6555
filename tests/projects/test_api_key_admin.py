"""API keys in /admin/: owners and admins of a project create (secret shown once) and revoke
that project's keys, and see no other project's."""

from __future__ import annotations

import re

from django.test import Client

from audit.models import AuditEvent
from identity import authn
from projects.api_keys import api_key_create
from projects.callers import operator_caller
from projects.models import ApiKey
from tests.factories import World
from tests.identity.conftest import signed_in

LIST = "/admin/projects/apikey/"
ADD = "/admin/projects/apikey/add/"


def beta_key(world: World) -> ApiKey:
    return api_key_create(
        operator_caller(world.beta),
        user_id=world.outsider.pk,
        label="beta-ci",
        scopes=["continuity:read"],
    ).api_key


def add(browser: Client, world: World, **overrides: object):
    data = {
        "project": str(world.alpha.pk),
        "username": "carla",
        "label": "laptop",
        "scopes": ["continuity:read", "continuity:write"],
        "expires_days": "",
        **overrides,
    }
    return browser.post(ADD, data)


def test_it_creates_a_key_and_shows_its_secret_once(world: World):
    browser = signed_in(world.owner)  # an owner, not a superuser

    response = add(browser, world)

    # POST/redirect/GET: reloading the page the browser lands on never posts again.
    assert response.status_code == 302
    assert "no-store" in response["Cache-Control"]
    key = ApiKey.objects.get()
    assert response["Location"] == f"{LIST}{key.pk}/created/"
    first = browser.get(response["Location"])
    assert "no-store" in first["Cache-Control"]
    found = re.search(r"hak_[0-9a-f]{12}_[A-Za-z0-9_-]{43}", first.content.decode())
    assert found is not None
    secret = found.group(0)
    assert authn.authenticate(f"Bearer {secret}", resource="api", request_id="r").user_id == (
        world.contributor.pk
    )
    assert (key.label, key.created_by) == ("laptop", "olivia")
    # Shown once: no later page shows it again, and no cookie or session carries it.
    assert secret not in str(browser.cookies)
    assert secret not in str(dict(browser.session))
    again = browser.get(response["Location"]).content.decode()
    assert secret not in again
    assert "cannot be shown again" in again
    assert secret not in browser.get(LIST).content.decode()
    assert secret not in browser.get(f"{LIST}{key.pk}/change/").content.decode()
    assert ApiKey.objects.count() == 1
    assert AuditEvent.objects.filter(operation="api_key_create", outcome="success").count() == 1


def test_it_shows_the_services_refusal_on_the_form(world: World):
    browser = signed_in(world.owner)
    response = add(browser, world, username="victor")  # a viewer cannot hold continuity:write
    assert response.status_code == 200
    assert b"does not allow" in response.content
    assert not ApiKey.objects.exists()


def test_it_lists_only_the_keys_of_projects_one_manages(world: World):
    beta_key(world)
    api_key_create(
        operator_caller(world.alpha),
        user_id=world.admin.pk,
        label="alpha-ci",
        scopes=["continuity:read"],
    )
    response = signed_in(world.admin).get(LIST)
    assert response.status_code == 200
    labels = {key.label for key in response.context["cl"].result_list}
    assert labels == {"alpha-ci"}
    other = beta_key(world)
    assert signed_in(world.admin).get(f"{LIST}{other.pk}/change/").status_code == 302


def test_it_offers_only_managed_projects_when_adding(world: World):
    form = signed_in(world.admin).get(ADD).context["adminform"].form
    assert list(form.fields["project"].queryset) == [world.alpha]


def test_it_revokes_keys_with_an_action(world: World):
    alpha = api_key_create(
        operator_caller(world.alpha),
        user_id=world.contributor.pk,
        label="a",
        scopes=["continuity:read"],
    ).api_key
    other = beta_key(world)
    browser = signed_in(world.admin)
    chosen = {"action": "revoke_selected", "_selected_action": [str(alpha.pk), str(other.pk)]}

    # First the confirmation, naming what ends; nothing is revoked yet.
    asked = browser.post(LIST, chosen)
    assert asked.status_code == 200
    page = asked.content.decode()
    assert "Revoke 1 API key: &#x27;a&#x27;?" in page
    assert "Agents using it will get 401 at once." in page
    assert "Yes, revoke 1 key" in page
    assert asked.context["selected"] == [str(alpha.pk)]  # not theirs: not even named
    alpha.refresh_from_db()
    assert alpha.revoked_at is None
    assert not AuditEvent.objects.filter(operation="api_key_revoke").exists()

    response = browser.post(LIST, {**chosen, "confirmed": "yes"})

    assert response.status_code == 302
    alpha.refresh_from_db()
    other.refresh_from_db()
    assert alpha.revoked_at is not None
    assert other.revoked_at is None  # not theirs: not even in the queryset
    event = AuditEvent.objects.get(operation="api_key_revoke")
    assert (event.outcome, event.actor_label, event.target_id) == ("success", "adam", str(alpha.pk))


def test_it_never_deletes_or_edits_keys(world: World):
    key = api_key_create(
        operator_caller(world.alpha),
        user_id=world.contributor.pk,
        label="a",
        scopes=["continuity:read"],
    ).api_key
    browser = signed_in(world.owner)
    assert browser.post(f"{LIST}{key.pk}/delete/", {"post": "yes"}).status_code == 403
    browser.post(f"{LIST}{key.pk}/change/", {"label": "renamed"})
    key.refresh_from_db()
    assert key.label == "a"


def test_it_keeps_contributors_out(world: World):
    response = signed_in(world.contributor).get(LIST)
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]
