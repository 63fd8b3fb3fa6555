"""The oauthlib server: authorization code (+ refresh) only, PKCE S256 only, known audiences only.

oauthlib's all-in-one `Server` also wires the implicit, password and client-credentials grants;
`WebApplicationServer` has exactly the two grants OAuth 2.1 keeps, so nothing else can even be
dispatched to.
"""

from __future__ import annotations

from typing import Any

from oauthlib.common import Request
from oauthlib.oauth2 import WebApplicationServer
from oauthlib.oauth2.rfc6749 import errors
from oauthlib.oauth2.rfc6749.grant_types.authorization_code import code_challenge_method_s256

from identity.oauth_internals import allow_code_challenge_methods
from identity.policy import allowed_resources, default_resource


def resource_pre_auth(request: Request) -> dict[str, Any]:
    """RFC 8707 at the authorization endpoint, before the consent page: exactly one resource,
    and it must be HeyAira's MCP endpoint or REST API; none given means the MCP endpoint.

    On the consent POST the form's hidden field arrives as a list (through the credentials);
    on GET oauthlib keeps only the last of repeated query values, so read them all from the URI.
    """
    value = getattr(request, "resource", None)
    if isinstance(value, list):
        values = value
    else:
        values = [v for k, v in request.uri_query_params if k == "resource"]
    values = list(dict.fromkeys(values)) or [default_resource()]
    if len(values) != 1:
        raise errors.CustomOAuth2Error(
            error="invalid_target",
            description="Ask for one resource per authorization: the MCP endpoint or the API.",
            request=request,
        )
    if values[0] not in allowed_resources():
        raise errors.CustomOAuth2Error(
            error="invalid_target",
            description="Unknown resource: name HeyAira's MCP endpoint or its REST API.",
            request=request,
        )
    request.resource = values
    return {}


class HeyAiraServer(WebApplicationServer):
    def __init__(self, request_validator: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(request_validator, *args, **kwargs)
        # With S256 the only method, `plain` and an omitted method (which oauthlib reads as
        # plain) are refused before the consent page.
        allow_code_challenge_methods(self.auth_grant, {"S256": code_challenge_method_s256})
        self.auth_grant.custom_validators.pre_auth.append(resource_pre_auth)
