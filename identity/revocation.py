"""Credentials die with the membership: removing a member, or deactivating a user, revokes
their OAuth tokens, pending codes and API keys at once.

The authentication component re-reads the membership on every request anyway; revoking here
makes the refusal immediate for refresh tokens too, and leaves an audit row saying why.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models.signals import post_save
from django.utils import timezone

from audit.models import Outcome
from core.access import ActorType
from identity import audit
from identity.models import AccessToken, Grant, RefreshToken
from projects.api_keys import api_keys_revoke_for_member
from projects.models import Project
from projects.signals import membership_ended


def revoke_member_credentials(*, user_id: Any, project: Project, request_id: str, why: str) -> int:
    """Revoke everything the user holds for the project; returns how many credentials died."""
    with transaction.atomic():
        tokens = revoke_tokens(user_id=user_id, project=project)
        keys = api_keys_revoke_for_member(user_id=user_id, project_id=project.pk)
        audit.record_oauth(
            audit.CREDENTIALS_REVOKED,
            Outcome.SUCCESS,
            project=project,
            # The server acts here; the request id links the row to the change that caused it.
            actor=(ActorType.OPERATOR, "heyaira", "automatic revocation"),
            target_type="user",
            target_id=str(user_id),
            error_code=why,
            request_id=request_id,
        )
    return tokens + keys


def revoke_tokens(*, user_id: Any, project: Project, application: Any = None) -> int:
    """End the user's OAuth tokens for the project at once (of one client when `application`
    is given): refresh tokens revoked, access tokens and unredeemed codes deleted (the
    authentication component finds no row, so the very next call is refused). Call it inside
    a transaction; returns how many tokens died."""
    scope: dict[str, Any] = {"user_id": user_id, "project": project}
    if application is not None:
        scope["application"] = application
    now = timezone.now()
    live_refresh = RefreshToken.objects.filter(**scope, revoked__isnull=True)
    try:
        with transaction.atomic():
            refreshed = live_refresh.update(revoked=now, updated=now)
    except IntegrityError:
        # (token_checksum, revoked) is unique: one shared timestamp can collide; go row by
        # row, as DOT's revoke_family does.
        refreshed = 0
        for token in live_refresh:
            token.revoke()
            refreshed += 1
    accessed, _ = AccessToken.objects.filter(**scope).delete()
    Grant.objects.filter(**scope, redeemed_at__isnull=True).delete()
    return refreshed + accessed


def on_membership_ended(
    sender: Any, *, project: Project, user_id: Any, request_id: str = "", **kwargs: Any
) -> None:
    revoke_member_credentials(
        user_id=user_id, project=project, request_id=request_id, why="membership_ended"
    )


def on_user_saved(sender: Any, instance: Any, created: bool, **kwargs: Any) -> None:
    """A deactivated user loses every credential in every project they held one in."""
    if created or instance.is_active:
        return
    holders = (
        set(
            RefreshToken.objects.filter(user_id=instance.pk, revoked__isnull=True).values_list(
                "project_id", flat=True
            )
        )
        | set(AccessToken.objects.filter(user_id=instance.pk).values_list("project_id", flat=True))
        | set(
            instance.api_keys.filter(revoked_at__isnull=True).values_list("project_id", flat=True)
        )
    )
    for project in Project.objects.filter(pk__in=holders - {None}):
        revoke_member_credentials(
            user_id=instance.pk, project=project, request_id="", why="user_deactivated"
        )


def connect_receivers() -> None:
    membership_ended.connect(on_membership_ended, dispatch_uid="identity.membership_ended")
    post_save.connect(
        on_user_saved, sender=get_user_model(), dispatch_uid="identity.user_deactivated"
    )
