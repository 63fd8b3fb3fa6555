"""What the admin lists for a superuser: every model in use, and no unused one (the OpenID
Connect ID tokens django-oauth-toolkit registers; HeyAira has no OIDC)."""

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
        "auth.Group",
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
