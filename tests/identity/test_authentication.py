"""identity.authn: one component turns a Bearer credential into the Caller, or answers 401/403."""

from __future__ import annotations

import pytest
from django.test import Client

from audit.models import AuditEvent
from core.access import ActorType, CredentialKind, Role
from identity import authn
from identity.models import AccessToken
from projects.callers import operator_caller
from projects.models import Membership
from projects.services import membership_change
from tests.factories import World
from tests.identity.conftest import signed_in
from tests.identity.flows import API, MCP, bearer, last_event, register, tokens_for

API_CHALLENGE = (
    'Bearer resource_metadata="http://testserver/.well-known/oauth-protected-resource/api", '
    'scope="continuity:read continuity:write"'
)
MCP_CHALLENGE = (
    'Bearer resource_metadata="http://testserver/.well-known/oauth-protected-resource/mcp", '
    'scope="continuity:read continuity:write"'
)


def token_for(world: World, api: Client, *, resource: str = API, who: str = "owner", **kw) -> str:
    oauth = register(api)
    user = getattr(world, who)
    project = world.beta if who == "outsider" else world.alpha
    return str(tokens_for(signed_in(user), oauth, project, resource=resource, **kw)["access_token"])


def test_it_challenges_a_request_without_credentials(api: Client):
    response = api.get("/api/v1/identity")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == API_CHALLENGE
    assert "error=" not in response["WWW-Authenticate"]
    assert response.json()["error"]["code"] == "unauthenticated"
    # Nothing was presented, so nothing is worth an audit row (discovery starts this way).
    assert not AuditEvent.objects.filter(operation="authenticate").exists()


def test_it_builds_the_mcp_challenge():
    assert authn.challenge("mcp") == MCP_CHALLENGE
    with pytest.raises(authn.AuthenticationFailed) as failure:
        authn.authenticate(None, resource="mcp", request_id="r1")
    assert (failure.value.status, failure.value.www_authenticate) == (401, MCP_CHALLENGE)


def test_it_quotes_challenge_values():
    value = authn.challenge("api", error="invalid_token", description='say "hi"\\\r\nok')
    assert 'error_description="say \\"hi\\"\\\\ok"' in value


@pytest.mark.parametrize("header", ["Basic b2xpdmlhOnB3", "Token abc", ""])
def test_it_treats_other_schemes_as_no_credential(api: Client, header: str):
    response = api.get("/api/v1/identity", headers={"Authorization": header} if header else {})
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == API_CHALLENGE


@pytest.mark.parametrize("header", ["Bearer", "Bearer two words", "Bearer ünïcode"])
def test_it_refuses_a_malformed_bearer(db, api: Client, header: str):
    response = api.get("/api/v1/identity", headers={"Authorization": header})
    assert response.status_code == 401
    assert 'error="invalid_token"' in response["WWW-Authenticate"]
    assert last_event("authenticate").error_code == "malformed_credential"


def test_it_refuses_an_unknown_token_and_audits_it(db, api: Client):
    response = api.get("/api/v1/identity", headers=bearer("not-a-real-token"))
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith('Bearer error="invalid_token"')
    assert (
        'resource_metadata="http://testserver/.well-known/oauth-protected-resource/api"'
        in (response["WWW-Authenticate"])
    )
    event = last_event("authenticate")
    assert (event.outcome, event.error_code, event.resource) == ("rejected", "invalid_token", API)


def test_it_takes_a_token_from_the_header_only(world: World, api: Client):
    token = token_for(world, api)
    in_query = api.get(f"/api/v1/identity?access_token={token}")
    in_body = api.post("/api/v1/identity", {"access_token": token})
    for response in (in_query, in_body):
        assert response.status_code == 401
        assert response["WWW-Authenticate"] == API_CHALLENGE


def test_it_ignores_the_session_cookie(world: World):
    browser = signed_in(world.owner)
    response = browser.get("/api/v1/identity")
    assert response.status_code == 401


def test_it_builds_the_caller_of_an_oauth_token(world: World, api: Client):
    token = token_for(world, api, who="contributor")
    row = AccessToken.objects.get(project__isnull=False)

    caller = authn.authenticate(f"Bearer {token}", resource="api", request_id="req-1")

    assert (caller.project, caller.role) == (world.alpha, Role.CONTRIBUTOR)
    assert caller.scopes == {"continuity:read", "continuity:write"}
    assert (caller.actor.type, caller.actor.id, caller.actor.label) == (
        ActorType.USER,
        str(world.contributor.pk),
        "carla",
    )
    assert caller.user_id == world.contributor.pk
    assert caller.credential.kind == CredentialKind.OAUTH_TOKEN
    assert caller.credential.id == str(row.pk)
    assert caller.credential.fingerprint
    assert caller.credential.fingerprint not in token
    assert (caller.resource, caller.instance, caller.request_id) == (API, "test", "req-1")
    assert caller.client_id == row.application.client_id


def test_it_reads_the_role_at_every_request(world: World, api: Client):
    token = token_for(world, api, who="contributor")
    membership = Membership.objects.get(project=world.alpha, user=world.contributor)
    membership_change(operator_caller(world.alpha), membership_id=membership.pk, role=Role.VIEWER)
    caller = authn.authenticate(f"Bearer {token}", resource="api", request_id="r")
    assert caller.role == Role.VIEWER


@pytest.mark.parametrize("change", ["deactivate", "remove"])
def test_it_refuses_a_token_whose_user_left(world: World, api: Client, change: str):
    token = token_for(world, api, who="contributor")
    # Behind the services' back (no signal, no revocation): the check itself must hold.
    if change == "deactivate":
        type(world.contributor).objects.filter(pk=world.contributor.pk).update(is_active=False)
    else:
        Membership.objects.filter(user=world.contributor).delete()

    response = api.get("/api/v1/identity", headers=bearer(token))

    assert response.status_code == 401
    event = last_event("authenticate")
    assert (event.error_code, event.user_id, event.project_id) == (
        "not_a_member",
        world.contributor.pk,
        world.alpha.pk,
    )


def test_it_answers_a_scope_shortfall_with_403_naming_the_scopes(world: World, api: Client):
    token = token_for(world, api, scope="audit:read")

    response = api.get("/api/v1/identity", headers=bearer(token))

    assert response.status_code == 403
    challenge = response["WWW-Authenticate"]
    assert challenge.startswith('Bearer error="insufficient_scope"')
    # The challenge names what the token holds plus what the operation needs (core.stepup).
    assert 'scope="audit:read continuity:read"' in challenge
    assert 'resource_metadata="http://testserver/.well-known/oauth-protected-resource/api"' in (
        challenge
    )
    body = response.json()["error"]
    assert (body["code"], body["required_scopes"]) == ("forbidden", ["continuity:read"])
    event = last_event("server_identity")
    assert (event.outcome, event.error_code) == ("rejected", "forbidden")
    assert (event.target_type, event.target_id) == ("scope", "continuity:read")


def test_it_names_every_needed_scope_in_insufficient_scope(world: World, api: Client):
    caller = world.caller("owner", scopes={"continuity:read"}, resource=MCP)
    failure = authn.insufficient_scope(caller, ["continuity:write", "continuity:read"])
    assert failure.status == 403
    assert 'error="insufficient_scope"' in failure.www_authenticate
    assert 'scope="continuity:read continuity:write"' in failure.www_authenticate
    assert "oauth-protected-resource/mcp" in failure.www_authenticate
    assert failure.error.as_dict()["required_scopes"] == ["continuity:read", "continuity:write"]
    assert failure.error.code == "forbidden"
