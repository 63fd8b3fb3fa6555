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
"""

from __future__ import annotations

import hashlib
import uuid
from collections import OrderedDict
from dataclasses import replace
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauth2_provider.settings import oauth2_settings
from oauthlib.common import Request
from oauthlib.oauth2.rfc6749 import errors

from audit.models import Outcome
from audit.recorder import fingerprint
from identity import audit, refresh_window, registration
from identity.cimd.outcome import settle as settle_client_document
from identity.models import AccessToken, Grant, RefreshToken
from identity.policy import (
    allowed_resources,
    cap_scopes,
    code_digest,
    refresh_family_expired,
    refresh_token_usable,
)
from identity.replays import Repeated, Replay, Replayed, replay_of, revoke_replayed
from projects.roles import member_role


class HeyAiraValidator(OAuth2Validator):
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

    # ---- authorization endpoint ---------------------------------------------------------

    def save_authorization_code(
        self, client_id: str, code: dict[str, Any], request: Request, *args: Any, **kwargs: Any
    ) -> None:
        """Fail closed: no project chosen (consent skipped), or not a member, means no code."""
        project = getattr(request, "project", None)
        role = member_role(
            project_id=getattr(project, "pk", None), user_id=getattr(request.user, "pk", None)
        )
        if project is None or role is None:
            raise errors.AccessDeniedError(request=request)
        request.scopes = cap_scopes(request.scopes or [], role)
        if not request.scopes:
            raise errors.InvalidScopeError(request=request)
        with transaction.atomic():
            self._create_authorization_code(request, code)
            audit.record_oauth(
                audit.CONSENT,
                Outcome.SUCCESS,
                user=request.user,
                project=project,
                client_id=client_id,
                resource=request.resource[0],
                target_type="oauth_client",
                target_id=client_id,
            )

    def _create_authorization_code(
        self, request: Request, code: dict[str, Any], expires: Any = None
    ) -> Grant:
        if request.code_challenge_method != "S256" or not request.code_challenge:
            raise errors.InvalidRequestError(
                description="PKCE with S256 is required.", request=request
            )
        lifetime = timedelta(seconds=oauth2_settings.AUTHORIZATION_CODE_EXPIRE_SECONDS)
        return Grant.objects.create(
            application=request.client,
            user=request.user,
            project=request.project,
            code=code_digest(code["code"]),
            expires=expires or timezone.now() + lifetime,
            redirect_uri=request.redirect_uri,
            scope=" ".join(request.scopes),
            code_challenge=request.code_challenge,
            code_challenge_method="S256",
            resource=list(request.resource),
        )

    # ---- token endpoint: authorization code ---------------------------------------------

    def validate_code(
        self, client_id: str, code: str, client: Any, request: Request, *args: Any, **kwargs: Any
    ) -> bool:
        grant = (
            Grant.objects.select_related("user", "project").filter(code=code_digest(code)).first()
        )
        if grant is None:
            audit.note(reason="code_unknown")
            return False
        audit.note(project=grant.project, user=grant.user)
        if grant.application_id != client.pk:
            audit.note(reason="code_of_another_client")
            return False
        if grant.redeemed_at is not None:
            replay = Replay(
                audit.CODE_REPLAY,
                grant.issued_family,
                grant.project,
                grant.user,
                client.client_id,
                list(grant.resource),
            )
            revoke_replayed(replay)
            return False
        if grant.is_expired():
            audit.note(reason="code_expired")
            return False
        if not self._bind(request, grant.user, grant.project, grant.scope.split()):
            return False
        request.heyaira_grant = grant
        request.heyaira_audience = list(grant.resource)
        return True

    def _grant(self, code: str, request: Request) -> Grant | None:
        grant = getattr(request, "heyaira_grant", None)
        if grant is not None:
            return grant
        return Grant.objects.filter(code=code_digest(code), application=request.client).first()

    def get_code_challenge(self, code: str, request: Request) -> str | None:
        grant = self._grant(code, request)
        # oauthlib compares the verifier next; an invalid_grant after this point is a PKCE
        # mismatch (see identity.views.TokenView).
        audit.note(pkce_checked=True)
        return (grant.code_challenge or None) if grant else None

    def get_code_challenge_method(self, code: str, request: Request) -> str | None:
        grant = self._grant(code, request)
        return (grant.code_challenge_method or None) if grant else None

    def confirm_redirect_uri(
        self,
        client_id: str,
        code: str,
        redirect_uri: str,
        client: Any,
        request: Request,
        *args: Any,
        **kwargs: Any,
    ) -> bool:
        grant = self._grant(code, request)
        return grant is not None and grant.redirect_uri_allowed(redirect_uri)

    def get_authorization_code_scopes(
        self, client_id: str, code: str, redirect_uri: str, request: Request
    ) -> list[str]:
        grant = self._grant(code, request)
        return grant.scope.split() if grant else []

    def get_authorization_code_nonce(
        self, client_id: str, code: str, redirect_uri: str, request: Request
    ) -> None:
        return None  # OpenID Connect is off

    def invalidate_authorization_code(
        self, client_id: str, code: str, request: Request, *args: Any, **kwargs: Any
    ) -> None:
        # Normally a no-op: the grant was redeemed (compare-and-set) in the issuing transaction.
        Grant.objects.filter(
            code=code_digest(code), application=request.client, redeemed_at__isnull=True
        ).update(redeemed_at=timezone.now())

    # ---- token endpoint: refresh token --------------------------------------------------

    def validate_refresh_token(
        self, refresh_token: str, client: Any, request: Request, *args: Any, **kwargs: Any
    ) -> bool:
        request.heyaira_arrived = timezone.now()  # the repeat window is judged from here
        checksum = hashlib.sha256(refresh_token.encode()).hexdigest()
        row = (
            RefreshToken.objects.select_related("user", "project", "access_token")
            .filter(token_checksum=checksum)
            .order_by(F("revoked").desc(nulls_first=True))
            .first()
        )
        if row is None:
            audit.note(reason="refresh_unknown")
            return False
        audit.note(project=row.project, user=row.user)
        if row.revoked is not None:
            return self._repeat_or_replay(row, refresh_token, client, request)
        if refresh_family_expired(row.family_started or row.created):
            RefreshToken.revoke_family(row.token_family)
            audit.note(reason="refresh_family_expired")
            return False
        # DOT's own checks, on this very row: DOT's validate_refresh_token would read it
        # again, and a rotation by a concurrent request in between would look to DOT like
        # reuse (it would revoke the family on the spot).
        if not refresh_token_usable(row, client.pk):
            audit.note(reason="refresh_refused")
            return False
        request.refresh_token_instance = row
        request.heyaira_audience = list(row.resource)
        return self._bind(request, row.user, row.project, [])

    def _repeat_or_replay(
        self, row: RefreshToken, refresh_token: str, client: Any, request: Request
    ) -> bool:
        """A rotated (or revoked) token: answered again within the repeat window, or a replay
        that revokes the family. DOT's grace period stays 0."""
        if refresh_window.repeat_of(row, refresh_token, client.pk, request.heyaira_arrived):
            # The issuing step finds the answer again under the row lock (_lock_refresh_token).
            request.refresh_token_instance = row
            request.heyaira_audience = list(row.resource)
            return self._bind(request, row.user, row.project, [])
        revoke_replayed(
            Replay(
                audit.REFRESH_REUSE,
                row.token_family,
                row.project,
                row.user,
                client.client_id,
                list(row.resource),
            )
        )
        return False

    # ---- token endpoint: issuing --------------------------------------------------------

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

    def _validate_resource_uris(self, request: Request, resources: list[str]) -> None:
        super()._validate_resource_uris(request, resources)
        for resource in resources:
            if resource not in allowed_resources():
                raise errors.CustomOAuth2Error(
                    error="invalid_target",
                    description="Unknown resource: name HeyAira's MCP endpoint or its REST API.",
                    request=request,
                )

    def _check_and_set_request_resource(self, request: Request) -> None:
        """The token's audience is the one its grant (or refresh token) was issued for; a
        request may repeat it but never name another (RFC 8707 section 2.2)."""
        requested = getattr(request, "resource", None) or []
        if isinstance(requested, str):
            body = getattr(request, "decoded_body", None) or []
            requested = [value for key, value in body if key == "resource"] or [requested]
        self._validate_resource_uris(request, list(requested))
        audience = list(getattr(request, "heyaira_audience", None) or [])
        if not audience or any(resource not in audience for resource in requested):
            raise errors.CustomOAuth2Error(
                error="invalid_target",
                description="A token is only issued for the resource its grant names.",
                request=request,
            )
        request.resource = audience

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

    def _redeem(self, request: Request) -> None:
        """Compare-and-set: the WHERE on redeemed_at is the lock, so of two concurrent
        exchanges of one code exactly one updates the row."""
        grant = request.heyaira_grant
        if not Grant.objects.filter(pk=grant.pk, redeemed_at__isnull=True).update(
            redeemed_at=timezone.now()
        ):
            raise Replayed(replay_of(audit.CODE_REPLAY, None, request), grant_pk=grant.pk)

    def _lock_refresh_token(self, request: Request) -> None:
        """Two refreshes of one token may both pass validation; the row lock orders them and
        the second sees the token already rotated: within the repeat window it gets the
        first one's answer, past it that is a replay; never a second family."""
        row = RefreshToken.objects.select_for_update().get(pk=request.refresh_token_instance.pk)
        if row.revoked is not None:
            repeat = refresh_window.repeat_of(
                row, request.refresh_token, request.client.pk, request.heyaira_arrived
            )
            if repeat is not None:
                raise Repeated(repeat)
            raise Replayed(replay_of(audit.REFRESH_REUSE, row.token_family, request))
        request.refresh_token_instance = row
        request.heyaira_rotated = row  # DOT rotates it next; its answer is sealed after

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
        self._set_token_value(access_token, token["access_token"])
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
        self._set_token_value(refresh, refresh_token_code)
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
