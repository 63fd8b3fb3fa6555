"""Connected apps and API keys: listed for whom they belong to, and a revoke that ends the
credential at once, audited, refusing the very next call, after a confirmation page that names
what will end (the first post changes nothing)."""

from __future__ import annotations

import pytest
from django.test import Client

from audit.models import AuditEvent
from continuity.selectors import server_identity
from identity.authn import AuthenticationFailed, authenticate
from identity.models import AccessToken, RefreshToken
from projects.api_keys import api_key_create
from projects.callers import operator_caller
from tests.factories import World
from tests.identity.flows import MCP, register, tokens_for


def signed_in(user: object) -> Client:
    client = Client()
    client.force_login(user)  # type: ignore[arg-type]
    return client


def connect(world: World, who: str = "contributor", name: str = "Claude Code") -> dict:
    oauth = register(Client(), name=name)
    tokens = tokens_for(signed_in(getattr(world, who)), oauth, world.alpha, resource=MCP)
    return {"client_id": oauth.client_id, **tokens}


def test_it_lists_the_persons_connected_apps_with_scopes_and_last_use(world: World):
    app = connect(world)
    other = connect(world, who="viewer", name="Someone else's client")
    carla = signed_in(world.contributor)
    server_identity(authenticate(f"Bearer {app['access_token']}", resource="mcp", request_id="r"))
    used = AuditEvent.objects.get(operation="server_identity", client_id=app["client_id"])
    html = carla.get("/apps/").content.decode()
    assert "Claude Code" in html
    assert f'<code class="muted token">{app["client_id"]}</code>' in html
    assert "<code>continuity:read</code>, <code>continuity:write</code>" in html
    assert other["client_id"] not in html  # the viewer's connection is the viewer's
    row = html.split("Claude Code", 1)[1].split("</tr>", 1)[0]
    assert used.occurred_at.strftime("%Y-%m-%d %H:%M:%S UTC") in row  # its newest audit row


def test_it_ends_a_connected_apps_tokens_at_once_and_audits_it(world: World):
    app = connect(world)
    caller = authenticate(f"Bearer {app['access_token']}", resource="mcp", request_id="r1")
    assert caller.client_id == app["client_id"]
    carla = signed_in(world.contributor)
    form = {"project": "alpha", "client_id": app["client_id"]}
    asked = carla.post("/apps/revoke/", form).content.decode()
    assert '<h1 id="confirm-heading">Disconnect “Claude Code” from Alpha?</h1>' in asked
    assert "Its tokens end at once" in asked
    assert 'name="confirm" value="yes"' in asked
    assert 'href="/apps/">Cancel</a>' in asked
    authenticate(f"Bearer {app['access_token']}", resource="mcp", request_id="r0")  # still live
    assert not AuditEvent.objects.filter(operation="connected_app_revoke").exists()
    response = carla.post("/apps/revoke/", {**form, "confirm": "yes"}, follow=True)
    assert "Disconnected" in response.content.decode()
    with pytest.raises(AuthenticationFailed) as refused:
        authenticate(f"Bearer {app['access_token']}", resource="mcp", request_id="r2")
    assert refused.value.status == 401
    assert not AccessToken.objects.filter(user=world.contributor, project=world.alpha).exists()
    assert not RefreshToken.objects.filter(
        user=world.contributor, project=world.alpha, revoked__isnull=True
    ).exists()
    row = AuditEvent.objects.get(operation="connected_app_revoke")
    assert (row.outcome, row.actor_label, row.target_type, row.target_id) == (
        "success",
        "carla",
        "oauth_client",
        app["client_id"],
    )
    assert app["access_token"] not in str(row.__dict__)
    assert app["client_id"] not in carla.get("/apps/").content.decode()


def test_it_refuses_to_disconnect_someone_elses_app_and_audits_the_refusal(world: World):
    app = connect(world, who="viewer")
    carla = signed_in(world.contributor)
    form = {"project": "alpha", "client_id": app["client_id"]}
    asked = carla.post("/apps/revoke/", form, follow=True).content.decode()
    assert f"No app &#x27;{app['client_id']}&#x27; is connected to Alpha." in asked
    response = carla.post("/apps/revoke/", {**form, "confirm": "yes"}, follow=True)
    assert "not connected to this project" in response.content.decode()
    authenticate(f"Bearer {app['access_token']}", resource="mcp", request_id="r3")  # still live
    row = AuditEvent.objects.get(operation="connected_app_revoke")
    assert (row.outcome, row.error_code) == ("rejected", "not_found")


def test_it_answers_a_revoke_for_a_project_not_ones_own_as_not_found(world: World):
    app = connect(world)
    oscar = signed_in(world.outsider)
    for confirm in ("", "yes"):
        form = {"project": "alpha", "client_id": app["client_id"], "confirm": confirm}
        assert oscar.post("/apps/revoke/", form).status_code == 404
    authenticate(f"Bearer {app['access_token']}", resource="mcp", request_id="r4")


def test_it_shows_owners_and_admins_the_projects_api_keys_and_revokes_one(world: World):
    issued = api_key_create(
        operator_caller(world.alpha),
        user_id=world.contributor.pk,
        label="ci runner",
        scopes=["continuity:read"],
        expires_days=30,
    )
    admin = signed_in(world.admin)
    html = admin.get("/projects/alpha/keys/").content.decode()
    assert "ci runner" in html
    assert f"hak_{issued.api_key.prefix}_…" in html
    assert issued.secret not in html
    assert issued.api_key.secret_hash not in html
    assert '<td data-label="Acts for">carla</td>' in html
    assert '<span class="badge key-active">active</span>' in html
    url = f"/projects/alpha/keys/{issued.api_key.pk}/revoke/"
    asked = admin.post(url).content.decode()
    assert '<h1 id="confirm-heading">Revoke key “ci runner”?</h1>' in asked
    assert "Agents using it will get 401 at once" in asked
    assert f'<form method="post" action="{url}"' in asked
    assert 'href="/projects/alpha/keys/">Cancel</a>' in asked
    authenticate(f"Bearer {issued.secret}", resource="mcp", request_id="r4b")  # still live
    assert not AuditEvent.objects.filter(operation="api_key_revoke").exists()
    response = admin.post(url, {"confirm": "yes"}, follow=True)
    assert "Revoked the key ci runner" in response.content.decode()
    assert '<span class="badge key-revoked">revoked</span>' in response.content.decode()
    with pytest.raises(AuthenticationFailed):
        authenticate(f"Bearer {issued.secret}", resource="mcp", request_id="r5")
    row = AuditEvent.objects.get(operation="api_key_revoke")
    assert (row.outcome, row.actor_label, row.target_id) == (
        "success",
        "adam",
        str(issued.api_key.pk),
    )


def test_it_keeps_api_keys_from_viewers_and_contributors(world: World):
    issued = api_key_create(
        operator_caller(world.alpha), user_id=world.viewer.pk, label="k", scopes=["continuity:read"]
    )
    for who in ("viewer", "contributor", "outsider"):
        person = signed_in(getattr(world, who))
        assert person.get("/projects/alpha/keys/").status_code == 404
        for confirm in ("", "yes"):
            revoke = person.post(
                f"/projects/alpha/keys/{issued.api_key.pk}/revoke/", {"confirm": confirm}
            )
            assert revoke.status_code == 404
    authenticate(f"Bearer {issued.secret}", resource="mcp", request_id="r6")  # still live


def test_it_answers_a_revoke_of_a_revoked_key_without_asking_again(world: World):
    issued = api_key_create(
        operator_caller(world.alpha),
        user_id=world.viewer.pk,
        label="old",
        scopes=["continuity:read"],
    )
    admin = signed_in(world.admin)
    url = f"/projects/alpha/keys/{issued.api_key.pk}/revoke/"
    admin.post(url, {"confirm": "yes"})
    again = admin.post(url, follow=True).content.decode()
    assert "The key old is already revoked." in again
    assert "confirm-heading" not in again


def test_it_asks_nothing_for_a_key_of_another_project(world: World):
    issued = api_key_create(
        operator_caller(world.beta),
        user_id=world.outsider.pk,
        label="beta key",
        scopes=["continuity:read"],
    )
    admin = signed_in(world.admin)
    response = admin.post(f"/projects/alpha/keys/{issued.api_key.pk}/revoke/")
    assert response.status_code == 404
    assert "beta key" not in response.content.decode()


def test_the_confirming_post_needs_the_pages_csrf_token(world: World):
    issued = api_key_create(
        operator_caller(world.alpha), user_id=world.viewer.pk, label="k", scopes=["continuity:read"]
    )
    admin = Client(enforce_csrf_checks=True)
    admin.force_login(world.admin)
    url = f"/projects/alpha/keys/{issued.api_key.pk}/revoke/"
    assert admin.post(url, {"confirm": "yes"}).status_code == 403
    authenticate(f"Bearer {issued.secret}", resource="mcp", request_id="r7")  # still live
    asked = admin.post(url)  # asking needs it too: the confirmation page is a form's answer
    assert asked.status_code == 403
