"""What the admin lists for a superuser: every model in use, and no unused one (the OpenID
Connect ID tokens django-oauth-toolkit registers, HeyAira has no OIDC; Django's groups, which
grant nothing HeyAira honours), and no form that offers them."""

from __future__ import annotations

from django.test import Client

from tests.factories import World, make_user


def test_it_lists_only_the_models_in_use(world: World, client: Client):
    client.force_login(make_user("root", is_superuser=True, is_staff=True))
    response = client.get("/admin/")
    assert response.status_code == 200
    listed = {
        f"{app['app_label']}.{model['object_name']}"
        for app in response.context["app_list"]
        for model in app["models"]
    }
    assert listed == {
        "auth.User",
        "audit.AnonymousRejection",
        "audit.AuditEvent",
        "audit.CountedEvent",
        "oauth.AccessToken",
        "oauth.Application",
        "oauth.Grant",
        "oauth.RefreshToken",
        "projects.ApiKey",
        "projects.AuditorGrant",
        "projects.Membership",
        "projects.Project",
        "projects.ProjectRepository",
        "projects.Repository",
    }
    assert b"Id tokens" not in response.content
    assert client.get("/admin/oauth/idtoken/").status_code == 404
    assert client.get("/admin/auth/group/").status_code == 404


def test_a_persons_page_offers_no_groups_or_global_permissions(world: World, client: Client):
    """Roles in projects decide access; Django's groups and global permissions are ignored by
    every HeyAira page, so the page does not offer them as if they meant something."""
    client.force_login(make_user("root", is_superuser=True, is_staff=True))
    response = client.get(f"/admin/auth/user/{world.viewer.pk}/change/")
    assert response.status_code == 200
    fields = set(response.context["adminform"].form.fields)
    assert {"username", "is_active", "is_superuser"} <= fields
    assert not fields & {"groups", "user_permissions"}
    page = response.content.decode()
    assert "Roles in projects decide what someone may do" in page
    filters = client.get("/admin/auth/user/").context["cl"].list_filter
    assert "groups" not in filters
