"""Authorization codes: issued only for a project the person belongs to, stored as digests,
redeemed once with a compare-and-set; a replayed code revokes what it bought."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone
from oauth2_provider.settings import oauth2_settings
from oauthlib.common import Request
from oauthlib.oauth2.rfc6749 import errors

from audit.models import Outcome
from identity import audit
from identity.models import Grant
from identity.policy import cap_scopes, code_digest
from identity.replays import Replay, Replayed, replay_of, revoke_replayed
from identity.validators.binding import Binding
from projects.roles import member_role


class CodeRules(Binding):
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

    def _redeem(self, request: Request) -> None:
        """Compare-and-set: the WHERE on redeemed_at is the lock, so of two concurrent
        exchanges of one code exactly one updates the row."""
        grant = request.heyaira_grant
        if not Grant.objects.filter(pk=grant.pk, redeemed_at__isnull=True).update(
            redeemed_at=timezone.now()
        ):
            raise Replayed(replay_of(audit.CODE_REPLAY, None, request), grant_pk=grant.pk)
