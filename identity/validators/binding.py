"""What every token issue checks, whatever the grant: the membership (read again, since the
role may have changed since consent) and the audience (one of HeyAira's two resources)."""

from __future__ import annotations

from typing import Any

from oauth2_provider.oauth2_validators import OAuth2Validator
from oauthlib.common import Request
from oauthlib.oauth2.rfc6749 import errors

from identity import audit
from identity.policy import allowed_resources
from projects.roles import member_role


class Binding(OAuth2Validator):
    def _bind(self, request: Request, user: Any, project: Any, scopes: list[str]) -> bool:
        """Re-check the membership at every issue; the role may have changed since consent."""
        role = member_role(
            project_id=getattr(project, "pk", None), user_id=getattr(user, "pk", None)
        )
        if role is None:
            audit.note(reason="not_a_member")
            return False
        request.user = user
        request.project = project
        if scopes:
            request.scopes = scopes
        return True

    def _check_resources(self, request: Request, resources: list[str]) -> None:
        """Only HeyAira's two resources (absolute URIs, so DOT's own rule holds too)."""
        for resource in resources:
            if resource not in allowed_resources():
                raise errors.CustomOAuth2Error(
                    error="invalid_target",
                    description="Unknown resource: name HeyAira's MCP endpoint or its REST API.",
                    request=request,
                )

    def _check_and_set_request_resource(self, request: Request) -> None:
        """The token's audience is the one its grant (or refresh token) was issued for; a
        request may repeat it but never name another (RFC 8707 section 2.2). Replaces DOT's
        (a hook of identity.oauth_internals.VALIDATOR_HOOKS)."""
        requested = getattr(request, "resource", None) or []
        if isinstance(requested, str):
            body = getattr(request, "decoded_body", None) or []
            requested = [value for key, value in body if key == "resource"] or [requested]
        self._check_resources(request, list(requested))
        audience = list(getattr(request, "heyaira_audience", None) or [])
        if not audience or any(resource not in audience for resource in requested):
            raise errors.CustomOAuth2Error(
                error="invalid_target",
                description="A token is only issued for the resource its grant names.",
                request=request,
            )
        request.resource = audience
