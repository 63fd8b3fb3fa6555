"""Project API keys: made by owners and admins, stored as keyed hashes, scoped within the
member's role, usable at both resources, expiring and revocable."""

from __future__ import annotations

from datetime import timedelta
from typing import Literal

import pytest
from django.test import Client, override_settings
from django.utils import timezone

from audit.models import AuditEvent
from core.access import ActorType, CredentialKind, Role
from core.errors import Forbidden, NotFound, ValidationError
from identity import authn
from projects.api_keys import api_key_create, api_key_revoke, key_digest
from projects.callers import operator_caller, session_caller
from projects.models import ApiKey, Project
from tests.factories import World
from tests.identity.flows import API, MCP, bearer, last_event


def person(user, project: Project):
    caller = session_caller(user, project)
    assert caller is not None
    return caller


def make_key(world: World, who: str = "contributor", **kwargs):
    arguments = {"label": "ci", "scopes": ["continuity:read", "continuity:write"], **kwargs}
    return api_key_create(operator_caller(world.alpha), user_id=getattr(world, who).pk, **arguments)


def test_it_creates_a_key_and_keeps_only_its_keyed_hash(world: World):
    issued = make_key(world)
    key = issued.api_key
    assert issued.secret.startswith(f"hak_{key.prefix}_")
    assert len(issued.secret) == len("hak_") + 12 + 1 + 43  # 256 random bits after the prefix
    assert key.secret_hash == key_digest(issued.secret)
    assert issued.secret not in str(ApiKey.objects.filter(pk=key.pk).values().get())
    assert (key.scopes, key.created_by) == (["continuity:read", "continuity:write"], "manage.py")
    event = last_event("api_key_create")
    assert (event.outcome, event.target_type, event.target_id) == (
        "success",
        "api_key",
        str(key.pk),
    )


def test_it_uses_a_pepper_of_its_own(world: World):
    issued = make_key(world)
    header = f"Bearer {issued.secret}"
    with override_settings(SECRET_KEY="rotated-secret-key-0123456789-abcdefghijklmnop"):
        assert authn.authenticate(header, resource="api", request_id="r").user_id
    with (
        override_settings(HEYAIRA_API_KEY_PEPPER="another-pepper-0123456789abcdef"),
        pytest.raises(authn.AuthenticationFailed),
    ):
        authn.authenticate(header, resource="api", request_id="r")


def test_it_refuses_scopes_beyond_the_members_role(world: World):
    with pytest.raises(ValidationError) as error:
        make_key(world, who="viewer")
    assert "continuity:write" in error.value.fields["scopes"]
    assert not ApiKey.objects.exists()
    assert last_event("api_key_create").error_code == "validation_error"


def test_it_refuses_a_key_for_someone_outside_the_project(world: World):
    with pytest.raises(NotFound):
        make_key(world, who="outsider")


def test_it_lets_only_owners_make_keys_that_act_for_admins_and_owners(world: World):
    as_admin = person(world.admin, world.alpha)
    with pytest.raises(Forbidden):
        api_key_create(as_admin, user_id=world.owner.pk, label="x", scopes=["continuity:read"])
    assert last_event("api_key_create").error_code == "forbidden"
    api_key_create(as_admin, user_id=world.admin.pk, label="mine", scopes=["continuity:read"])
    api_key_create(as_admin, user_id=world.viewer.pk, label="ci", scopes=["continuity:read"])
    as_owner = person(world.owner, world.alpha)
    api_key_create(as_owner, user_id=world.admin.pk, label="theirs", scopes=["audit:read"])


@pytest.mark.parametrize("who", ["contributor", "viewer"])
def test_it_refuses_key_management_below_admin(world: World, who: str):
    caller = person(getattr(world, who), world.alpha)
    with pytest.raises(Forbidden):
        api_key_create(caller, user_id=caller.user_id, label="x", scopes=["continuity:read"])


def test_it_refuses_key_management_with_a_delegated_credential(world: World):
    """An OAuth token or an API key can never mint keys, whatever its scopes."""
    with pytest.raises(Forbidden):
        api_key_create(
            world.caller("owner"), user_id=world.owner.pk, label="x", scopes=["continuity:read"]
        )


@pytest.mark.parametrize("resource", ["mcp", "api"])
def test_it_accepts_a_key_at_both_resources(world: World, resource: Literal["mcp", "api"]):
    issued = make_key(world)
    caller = authn.authenticate(f"Bearer {issued.secret}", resource=resource, request_id="r9")
    assert caller.resource == {"mcp": MCP, "api": API}[resource]
    assert (caller.project, caller.role) == (world.alpha, Role.CONTRIBUTOR)
    assert caller.scopes == {"continuity:read", "continuity:write"}
    assert (caller.actor.type, caller.actor.id, caller.actor.label) == (
        ActorType.API_KEY,
        str(issued.api_key.pk),
        "ci (carla)",
    )
    assert caller.credential.kind == CredentialKind.API_KEY
    assert caller.credential.id == str(issued.api_key.pk)
    assert issued.api_key.prefix not in caller.credential.fingerprint
    assert caller.client_id is None


def test_it_serves_the_identity_to_a_key(world: World, client: Client):
    issued = make_key(world)
    response = client.get("/api/v1/identity", headers=bearer(issued.secret))
    assert response.status_code == 200
    assert response.json()["principal"] == {
        "actor": "ci (carla)",
        "role": "contributor",
        "scopes": ["continuity:read", "continuity:write"],
        "credential": "api_key",
    }


def test_it_records_use_at_most_once_a_minute(world: World, django_assert_num_queries):
    issued = make_key(world)
    header = f"Bearer {issued.secret}"
    authn.authenticate(header, resource="api", request_id="r")
    first = ApiKey.objects.get().last_used_at
    assert first is not None
    with django_assert_num_queries(1):  # the key with its user, project and role: no write
        authn.authenticate(header, resource="api", request_id="r")
    assert ApiKey.objects.get().last_used_at == first
    ApiKey.objects.update(last_used_at=timezone.now() - timedelta(minutes=2))
    authn.authenticate(header, resource="api", request_id="r")
    assert ApiKey.objects.get().last_used_at != first


def test_it_refuses_and_audits_a_key_presented_after_revocation(world: World, client: Client):
    issued = make_key(world)
    revoked = api_key_revoke(person(world.admin, world.alpha), api_key_id=issued.api_key.pk)
    assert revoked.revoked_at is not None
    assert last_event("api_key_revoke").outcome == "success"

    response = client.get("/api/v1/identity", headers=bearer(issued.secret))

    assert response.status_code == 401
    assert "revoked" in response["WWW-Authenticate"]
    event = last_event("authenticate")
    assert (event.outcome, event.error_code, event.project_id) == (
        "rejected",
        "api_key_revoked",
        world.alpha.pk,
    )
    assert (event.actor_type, event.actor_id, event.actor_label) == (
        "api_key",
        str(issued.api_key.pk),
        "ci (carla)",
    )
    assert issued.secret not in str(AuditEvent.objects.values_list())


def test_it_keeps_the_first_revocation_time(world: World):
    issued = make_key(world)
    caller = operator_caller(world.alpha)
    first = api_key_revoke(caller, api_key_id=issued.api_key.pk).revoked_at
    assert api_key_revoke(caller, api_key_id=issued.api_key.pk).revoked_at == first


def test_it_refuses_to_revoke_a_key_of_another_project(world: World):
    issued = make_key(world)
    with pytest.raises(NotFound):
        api_key_revoke(operator_caller(world.beta), api_key_id=issued.api_key.pk)


def test_it_refuses_an_expired_key(world: World, client: Client):
    issued = make_key(world, expires_days=1)
    ApiKey.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    response = client.get("/api/v1/identity", headers=bearer(issued.secret))
    assert response.status_code == 401
    assert last_event("authenticate").error_code == "api_key_expired"


def test_it_refuses_a_wrong_secret_behind_a_real_prefix(world: World, client: Client):
    issued = make_key(world)
    forged = issued.secret[:-4] + ("AAAA" if not issued.secret.endswith("AAAA") else "BBBB")
    response = client.get("/api/v1/identity", headers=bearer(forged))
    assert response.status_code == 401
    assert last_event("authenticate").error_code == "invalid_api_key"


def test_it_limits_a_key_to_its_scopes(world: World, client: Client):
    issued = make_key(world, who="owner", scopes=["audit:read"])
    response = client.get("/api/v1/identity", headers=bearer(issued.secret))
    assert response.status_code == 403
    assert 'error="insufficient_scope"' in response["WWW-Authenticate"]
