"""Tenancy: projects, who belongs to them, and which repositories they bind."""

from __future__ import annotations

import uuid
from typing import ClassVar

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models.functions import Lower
from guardian.managers import UserObjectPermissionManager
from guardian.models import GroupObjectPermissionBase, UserObjectPermissionBase

from core.access import Role

# A claim's lease: the default length and its bounds, in seconds.
LEASE_DEFAULT_SECONDS = 900
LEASE_MIN_SECONDS = 30
LEASE_MAX_SECONDS = 86_400


class Project(models.Model):
    """The tenant and security boundary: every tenant row carries its id."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    slug = models.SlugField(max_length=50, unique=True)
    name = models.CharField(max_length=200)
    # How long a claim's lease lasts when the claim names no lease_seconds. The database holds
    # the default too, so rows written by code from before leases (a rolling upgrade) get it.
    lease_seconds = models.PositiveIntegerField(
        default=LEASE_DEFAULT_SECONDS,
        db_default=LEASE_DEFAULT_SECONDS,
        validators=[MinValueValidator(LEASE_MIN_SECONDS), MaxValueValidator(LEASE_MAX_SECONDS)],
    )
    # The audit chain its new events go to (audit.chain.live_chain); empty: the chain named by
    # its id. An imported project keeps its bundle's chains, archived, and starts a new one,
    # `<id>.<generation>` (continuity.bundle.load).
    # The project whose audit chains it holds archived when that is another project: a bundle
    # imported into this project over REST (POST /api/v1/import) keeps its project's chains
    # as they were. Empty: its archived chains, if any, are its own id's.
    audit_archive = models.CharField(
        max_length=36, blank=True, default="", db_default="", editable=False
    )
    audit_chain = models.CharField(
        max_length=40, blank=True, default="", db_default="", editable=False
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["slug"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(lease_seconds__gte=LEASE_MIN_SECONDS)
                & models.Q(lease_seconds__lte=LEASE_MAX_SECONDS),
                name="project_lease_seconds_bounded",
            ),
        ]
        # Object permissions held through django-guardian, derived from Membership.role
        # (projects.permissions) except view_project_audit, which owners may also grant to
        # auditors who are not members.
        permissions = [
            ("manage_members", "Manage viewer and contributor memberships"),
            ("manage_privileged_members", "Manage admin and owner memberships"),
            ("manage_repositories", "Manage repository bindings"),
            ("manage_api_keys", "Manage API keys"),
            ("view_project_audit", "Read the project's audit log"),
        ]

    def __str__(self) -> str:
        return self.slug


class Membership(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["project", "user"]
        constraints = [
            models.UniqueConstraint(fields=["project", "user"], name="membership_one_per_user"),
            models.CheckConstraint(
                condition=models.Q(role__in=Role.values), name="membership_role_known"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.project} as {self.role}"


class Provider(models.TextChoices):
    GITHUB = "github", "GitHub"
    GITLAB = "gitlab", "GitLab"
    BITBUCKET = "bitbucket", "Bitbucket"
    OTHER = "other", "Other"


class Repository(models.Model):
    """A repository's identity and refs only: HeyAira never copies repository contents."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    provider = models.CharField(max_length=16, choices=Provider.choices)
    owner = models.CharField(max_length=100)
    name = models.CharField(max_length=100)
    url = models.URLField(max_length=300)
    default_branch = models.CharField(max_length=100, default="main")
    # An app-installation reference (e.g. a GitHub App installation id), never a token.
    installation_ref = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["provider", "owner", "name"]
        verbose_name_plural = "repositories"
        constraints = [
            # Hosting providers treat owner and name case-insensitively.
            models.UniqueConstraint(
                "provider", Lower("owner"), Lower("name"), name="repository_identity_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.provider}:{self.full_name}"

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


class ProjectRepository(models.Model):
    """A project binds several repositories; a repository may serve several projects."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="bindings")
    repository = models.ForeignKey(Repository, on_delete=models.PROTECT, related_name="bindings")
    # Where the pages link a commit and a branch of this repository when its host is neither
    # GitHub nor GitLab (whose links follow from the URL): `{commit}` and `{branch}` are
    # replaced. Empty: the host's own pattern, or no link.
    commit_url_template = models.CharField(max_length=300, blank=True)
    branch_url_template = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "created_at"]
        verbose_name = "repository binding"
        constraints = [
            models.UniqueConstraint(
                fields=["project", "repository"], name="binding_one_per_repository"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.project} -> {self.repository}"


class ProjectUserPermission(UserObjectPermissionBase):
    """django-guardian object permissions on a Project, with a real foreign key."""

    content_object = models.ForeignKey(Project, on_delete=models.CASCADE)

    class Meta(UserObjectPermissionBase.Meta):
        abstract = False


class AuditorGrants(UserObjectPermissionManager["AuditorGrant"]):
    def get_queryset(self) -> models.QuerySet[AuditorGrant]:
        return super().get_queryset().filter(permission__codename="view_project_audit")


class AuditorGrant(ProjectUserPermission):
    """A person an owner made an auditor of one project: their projects.view_project_audit
    grant, as the admin lists, adds and removes it (projects.auditors audits each change)."""

    objects: ClassVar[AuditorGrants] = AuditorGrants()

    class Meta:
        proxy = True
        verbose_name = "auditor"
        verbose_name_plural = "auditors"

    def __str__(self) -> str:
        # What the grant means, as the admin's lists and confirmations say it (guardian's own
        # text is "demo | carol | view_project_audit").
        return f"{self.user} may read {self.content_object}'s audit log"


class ProjectGroupPermission(GroupObjectPermissionBase):
    content_object = models.ForeignKey(Project, on_delete=models.CASCADE)

    class Meta(GroupObjectPermissionBase.Meta):
        abstract = False


class ApiKey(models.Model):
    """A project API key (`hak_<prefix>_<secret>`) for clients without OAuth.

    It acts for one member: its role is that member's current role, its scopes never exceed that
    role. Only an HMAC-SHA256 of the key (with HEYAIRA_API_KEY_PEPPER) is stored; the public
    prefix finds the row. Keys are revoked, never deleted, so the audit trail keeps its subject.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="api_keys")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_keys"
    )
    label = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, unique=True, editable=False)
    secret_hash = models.CharField(max_length=64, editable=False)
    scopes = models.JSONField(default=list)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.CharField(max_length=150)

    class Meta:
        ordering = ["project", "-created_at"]
        verbose_name = "API key"
        indexes = [models.Index(fields=["project", "user"], name="apikey_project_user")]

    def __str__(self) -> str:
        return f"{self.label} (hak_{self.prefix}_…)"


class Invitation(models.Model):
    """An invitation to join a project with a role, sent to an email address as a link.

    The link carries a random token; only its SHA-256 is stored (`token_hash`), so a database
    dump opens no invitation. It works once (accepted_at, set by compare-and-set) and until
    expires_at; an owner or admin may revoke it before. Rows are kept after use, revocation or
    expiry, so the audit trail keeps its subject.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField(max_length=254)
    role = models.CharField(max_length=16, choices=Role.choices)
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    invited_by_label = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["project", "-created_at"]
        indexes = [
            models.Index(fields=["project", "-created_at"], name="invitation_project_newest"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(role__in=Role.values), name="invitation_role_known"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.email} to {self.project} as {self.role}"
