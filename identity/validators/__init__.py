"""The request validator: where DOT's flows learn about projects, roles and replays.

One instance serves every thread (DOT caches it per view class), so nothing per request is kept
on `self`: it goes on the oauthlib request (`request.project`, `request.heyaira_grant`, ...) or
in the audit notes of identity.audit.

What it adds to DOT:
- a code is issued only for a project the user belongs to, with scopes capped by their role;
- codes are stored as digests, redeemed with a compare-and-set, and a replayed code revokes the
  tokens issued from it;
- every token issue re-checks the membership and caps the scopes to the current role;
- a refresh token presented again within seconds of its rotation (a client refreshing on two
  connections at once) gets the rotation's own answer (identity.refresh_window); later, or
  once revoked, it revokes its whole family; a family ends 30 days after it began;
- a client ID metadata document fetched on the way is audited, and a refused one says why
  (identity.cimd);
- a token has exactly one audience, one of HeyAira's two resources;
- the resource server refuses tokens without a project or an audience.

The grants' own rules live beside it: codes.py, refresh.py, and binding.py (membership and
audience at every issue); this class composes them and issues the tokens. The private DOT
methods these classes override are declared, with their reasons, in
identity.oauth_internals.VALIDATOR_HOOKS; its test fails when DOT renames one.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from dataclasses import replace
from typing import Any

from django.utils import timezone
from oauth2_provider.models import set_token_value
from oauthlib.common import Request
from oauthlib.oauth2.rfc6749 import errors

from audit.models import Outcome
from audit.recorder import fingerprint
from identity import audit, refresh_window, registration
from identity.cimd.outcome import settle as settle_client_document
from identity.models import AccessToken, Grant, RefreshToken
from identity.policy import cap_scopes
from identity.replays import Repeated, Replayed, revoke_replayed
from identity.validators.codes import CodeRules
from identity.validators.refresh import RefreshRules
from projects.roles import member_role


class HeyAiraValidator(CodeRules, RefreshRules):
    # ---- clients ------------------------------------------------------------------------

    def validate_client_id(
        self, client_id: str, request: Request, *args: Any, **kwargs: Any
    ) -> bool:
        known = super().validate_client_id(client_id, request, *args, **kwargs)
        settle_client_document(client_id, request.client if known else None)
        return bool(known)

    def client_authentication_required(self, request: Request, *args: Any, **kwargs: Any) -> bool:
        required = super().client_authentication_required(request, *args, **kwargs)
        settle_client_document(request.client_id or "", request.client)
        return bool(required)

    # ---- token endpoint: issuing --------------------------------------------------------

    def save_bearer_token(
        self, token: dict[str, Any], request: Request, *args: Any, **kwargs: Any
    ) -> None:
        try:
            super().save_bearer_token(token, request, *args, **kwargs)
        except Repeated as repeated:
            # Nothing was written; the answer is the one the rotation gave (refresh_window).
            token.clear()
            token.update(repeated.repeat.token)
            repeat = repeated.repeat
            self._audit_issue(request, Outcome.REPLAYED, repeat.access_token, repeat.checksum)
        except Replayed as raised:
            # The issuing transaction rolled back; the revocation must not. A code that lost
            # the race was redeemed by the winner, whose tokens are committed by now: revoke
            # them too (RFC 6749 section 4.1.2).
            replay = raised.replay
            if raised.grant_pk is not None:
                family = (
                    Grant.objects.filter(pk=raised.grant_pk)
                    .values_list("issued_family", flat=True)
                    .first()
                )
                replay = replace(replay, family=family)
            revoke_replayed(replay)
            raise errors.InvalidGrantError(request=request) from None

    def _save_bearer_token(
        self, token: dict[str, Any], request: Request, *args: Any, **kwargs: Any
    ) -> None:
        # Audience first: a wrong resource must not consume the code or the refresh token.
        self._check_and_set_request_resource(request)
        role = member_role(project_id=request.project.pk, user_id=request.user.pk)
        scopes = cap_scopes(token.get("scope", "").split(), role) if role else []
        if not scopes:
            raise errors.InvalidScopeError(request=request)
        token["scope"] = " ".join(scopes)
        if request.grant_type == "authorization_code":
            self._redeem(request)
        else:
            self._lock_refresh_token(request)
        super()._save_bearer_token(token, request, *args, **kwargs)
        self._after_issue(request, token)

    def _after_issue(self, request: Request, token: dict[str, Any]) -> None:
        access_token: AccessToken = request.heyaira_access_token
        refresh: RefreshToken | None = getattr(request, "heyaira_refresh_token", None)
        if request.grant_type == "authorization_code":
            registration.mark_used(request.client)
            if refresh is not None:
                Grant.objects.filter(pk=request.heyaira_grant.pk).update(
                    issued_family=refresh.token_family
                )
        rotated = getattr(request, "heyaira_rotated", None)
        if rotated is not None and refresh is not None:
            refresh_window.seal(
                rotated, request.refresh_token, token, successor=refresh, access=access_token
            )
            refresh_window.wipe_expired(refresh.token_family)
        self._audit_issue(request, Outcome.SUCCESS, access_token.pk, access_token.token_checksum)

    def _audit_issue(self, request: Request, outcome: Outcome, pk: Any, checksum: str) -> None:
        audit.record_oauth(
            audit.TOKEN_OPERATIONS[request.grant_type],
            outcome,
            user=request.user,
            project=request.project,
            client_id=request.client.client_id,
            resource=request.heyaira_audience[0],
            target_type="access_token",
            target_id=str(pk),
            credential_kind="oauth_token",
            fingerprint=fingerprint(checksum),
        )

    def _create_access_token(
        self,
        expires: Any,
        request: Request,
        token: dict[str, Any],
        source_refresh_token: Any = None,
    ) -> AccessToken:
        access_token = AccessToken(
            user=request.user,
            scope=token["scope"],
            expires=expires,
            application=request.client,
            source_refresh_token=source_refresh_token,
            resource=list(request.resource),
            project=request.project,
        )
        set_token_value(access_token, token["access_token"])
        access_token.save()
        request.heyaira_access_token = access_token
        return access_token

    def _create_refresh_token(
        self, request: Request, refresh_token_code: str, access_token: Any, previous: Any
    ) -> RefreshToken:
        refresh = RefreshToken(
            user=request.user,
            application=request.client,
            access_token=access_token,
            token_family=previous.token_family if previous else None,
            resource=list(request.resource),
            project=request.project,
            family_started=(previous.family_started or previous.created)
            if previous
            else timezone.now(),
        )
        if refresh.token_family is None:
            refresh.token_family = uuid.uuid4()
        set_token_value(refresh, refresh_token_code)
        refresh.save()
        request.heyaira_refresh_token = refresh
        return refresh

    # ---- resource server ----------------------------------------------------------------

    def validate_bearer_token(self, token: str, scopes: list[str], request: Request) -> bool:
        if not super().validate_bearer_token(token, scopes, request):
            return False
        access_token = request.access_token
        if access_token.project_id is None or not access_token.resource:
            request.oauth2_error = OrderedDict(
                [("error", "invalid_token"), ("error_description", "The access token is invalid.")]
            )
            return False
        request.project = access_token.project
        return True
