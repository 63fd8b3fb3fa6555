"""The few private parts of django-oauth-toolkit (DOT) and oauthlib HeyAira still needs, each
because no public hook does the job in the versions pinned in requirements.txt. Nothing else
writes to oauthlib's internals, and identity.validators overrides only the DOT methods listed in
VALIDATOR_HOOKS: tests/identity/test_oauth_internals.py names the versions this was written
against and fails on another, and checks that each hook still exists on DOT's validator with
the parameters below, so that an upgrade which renames one fails loudly instead of silently
skipping our override.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

WRITTEN_FOR = {"django-oauth-toolkit": (3, 4), "oauthlib": (3, 3)}

ChallengeCheck = Callable[[str, str], bool]


def allow_code_challenge_methods(grant: Any, methods: Mapping[str, ChallengeCheck]) -> None:
    """Make `methods` the only PKCE methods `grant` (an oauthlib AuthorizationCodeGrant) accepts,
    on the instance so that oauthlib's class-level table stays untouched. oauthlib 3.3 has no
    public way to drop `plain` (an omitted method reads as plain), and DOT's
    COMPLIANT_BCP_RFC9700_PKCE_METHOD refuses it only after the consent page."""
    grant._code_challenge_methods = dict(methods)


def code_challenge_methods(grant: Any) -> Mapping[str, ChallengeCheck]:
    """The PKCE methods `grant` (an instance or oauthlib's class) accepts."""
    methods: Mapping[str, ChallengeCheck] = grant._code_challenge_methods
    return methods


# DOT's OAuth2Validator's private methods identity.validators overrides, with the parameters
# DOT 3.4.1 gives them (self first). An override cannot move out of the class that makes it;
# this table is where each is declared, and why no public hook does its job.
VALIDATOR_HOOKS: dict[str, tuple[str, ...]] = {
    # The body of save_bearer_token, inside its transaction; DOT's docstring asks subclasses to
    # override this one. HeyAira checks audience and membership, caps the scopes, redeems the
    # code (or locks the refresh token) there, in the transaction that issues the tokens.
    "_save_bearer_token": ("self", "token", "request", "args", "kwargs"),
    # RFC 8707 at the token endpoint: DOT narrows to any absolute URI; HeyAira allows only the
    # audience the grant (or refresh token) names, and only HeyAira's two resources.
    "_check_and_set_request_resource": ("self", "request"),
    # The rows: HeyAira's swapped models carry the project (and the grant stores the code's
    # digest and refuses anything but S256); save_authorization_code and save_bearer_token
    # call these with no public way to pass the extra fields.
    "_create_authorization_code": ("self", "request", "code", "expires"),
    "_create_access_token": ("self", "expires", "request", "token", "source_refresh_token"),
    "_create_refresh_token": (
        "self",
        "request",
        "refresh_token_code",
        "access_token",
        "previous_refresh_token",
    ),
}
