"""django-oauth-toolkit's five models, swapped in so that grants and tokens carry a project.

All five live here: swapping only some creates a migration cycle with DOT's own migrations.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from django.core.exceptions import ValidationError
from django.db import models
from django.urls import reverse
from oauth2_provider.models import (
    AbstractAccessToken,
    AbstractApplication,
    AbstractGrant,
    AbstractIDToken,
    AbstractRefreshToken,
    ApplicationManager,
)

from identity.policy import redirect_uri_problems
from projects.models import Project

ProjectLink = models.ForeignKey[Project | None, Project | None]


class Application(AbstractApplication):
    """An OAuth client. Consent is never skipped, and only the code grant is available.

    Public clients hold no secret at all: DOT would otherwise generate one and PBKDF2-hash it
    on every save (a third of a second of CPU) for a value no one ever checks.
    """

    # When the client first obtained a token. Registered clients (DCR or CIMD) that never do
    # are removed after a while (identity.registration), so that anonymous registration
    # cannot grow the table without bound.
    first_token_at: models.DateTimeField[datetime | None, datetime | None] = models.DateTimeField(
        null=True, blank=True, editable=False
    )

    objects = ApplicationManager()

    class Meta(AbstractApplication.Meta):
        swappable = "OAUTH2_PROVIDER_APPLICATION_MODEL"
        indexes = [
            # The never-used registrations, oldest first: counted against the cap, purged.
            models.Index(
                fields=["created"],
                name="oauth_app_unused_created",
                condition=models.Q(first_token_at__isnull=True),
            )
        ]

    def natural_key(self) -> tuple[str]:
        return (self.client_id,)

    def clean(self) -> None:
        super().clean()
        errors: dict[str, list[str]] = {}
        problems = redirect_uri_problems(self.redirect_uris.split())
        if problems:
            errors["redirect_uris"] = problems
        if self.authorization_grant_type != self.GRANT_AUTHORIZATION_CODE:
            errors["authorization_grant_type"] = [
                "HeyAira clients use the authorization code grant"
            ]
        if self.client_type == self.CLIENT_CONFIDENTIAL and not self.client_secret:
            errors["client_secret"] = ["A confidential client needs a client secret"]
        if errors:
            raise ValidationError(errors)

    def save(self, *args: Any, **kwargs: Any) -> None:
        # skip_authorization would issue a code without the consent page, hence without a
        # project: the grant would then fail closed, but the flag has no legitimate use here.
        self.skip_authorization = False
        if self.client_type == self.CLIENT_PUBLIC:
            self.client_secret = ""
        # A confidential client's secret is always stored hashed (pre-hashed values are kept).
        self.hash_client_secret = self.client_type != self.CLIENT_PUBLIC
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        # DOT's own application pages are not mounted; the admin is the management UI.
        return reverse("admin:oauth_application_change", args=[self.pk])


class Grant(AbstractGrant):
    """An authorization code. `code` holds the code's SHA-256 digest, never the code."""

    project: ProjectLink = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    # A redeemed grant is kept (until it expires and is cleared) so that a replayed code is
    # recognised and the tokens issued from it revoked (RFC 6749 section 4.1.2).
    redeemed_at: models.DateTimeField[datetime | None, datetime | None] = models.DateTimeField(
        null=True, blank=True
    )
    issued_family: models.UUIDField[UUID | None, UUID | None] = models.UUIDField(
        null=True, blank=True
    )

    class Meta(AbstractGrant.Meta):
        swappable = "OAUTH2_PROVIDER_GRANT_MODEL"


class AccessToken(AbstractAccessToken):
    project: ProjectLink = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )

    class Meta(AbstractAccessToken.Meta):
        swappable = "OAUTH2_PROVIDER_ACCESS_TOKEN_MODEL"


class RefreshToken(AbstractRefreshToken):
    project: ProjectLink = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    # When the family's first token was issued; rotation copies it. The family dies
    # REFRESH_FAMILY_LIFETIME after it, whatever the activity (DOT only has an idle expiry).
    family_started: models.DateTimeField[datetime | None, datetime | None] = models.DateTimeField(
        null=True, blank=True
    )
    # The answer its rotation gave, encrypted with a key derived from this token (which is
    # not stored): a client that presents it again within the repeat window gets the same
    # answer (identity.refresh_window). Wiped once the window has passed.
    successor_sealed: models.TextField[str, str] = models.TextField(
        blank=True, default="", editable=False
    )

    class Meta(AbstractRefreshToken.Meta):
        swappable = "OAUTH2_PROVIDER_REFRESH_TOKEN_MODEL"


class IDToken(AbstractIDToken):
    class Meta(AbstractIDToken.Meta):
        swappable = "OAUTH2_PROVIDER_ID_TOKEN_MODEL"
