"""Our oauthlib server: S256 only, two grants only. It touches a private oauthlib attribute
(through identity.oauth_internals), so this pins the behaviour (an oauthlib upgrade that renames
it must fail here, not in production)."""

from __future__ import annotations

from oauthlib.oauth2.rfc6749.grant_types.authorization_code import AuthorizationCodeGrant

from identity.oauth_internals import code_challenge_methods
from identity.server import HeyAiraServer
from identity.validators import HeyAiraValidator


def test_it_knows_only_the_s256_challenge_method():
    server = HeyAiraServer(HeyAiraValidator())
    assert set(code_challenge_methods(server.auth_grant)) == {"S256"}


def test_it_leaves_oauthlibs_own_table_alone():
    HeyAiraServer(HeyAiraValidator())
    assert set(code_challenge_methods(AuthorizationCodeGrant)) == {"plain", "S256"}


def test_it_dispatches_only_the_code_and_refresh_grants():
    server = HeyAiraServer(HeyAiraValidator())
    assert set(server.grant_types) == {"authorization_code", "refresh_token"}
    assert set(server.response_types) == {"code"}
