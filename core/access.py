"""Who may do what: roles, scopes, capabilities and the Caller, decided in this one module.

Effective capability = role capability AND credential scope (docs/architecture.md, "The tenancy
rule"). Anything not granted here is denied.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db import models

from core.errors import Forbidden

if TYPE_CHECKING:
    from projects.models import Project


class Role(models.TextChoices):
    OWNER = "owner", "Owner"
    ADMIN = "admin", "Admin"
    CONTRIBUTOR = "contributor", "Contributor"
    VIEWER = "viewer", "Viewer"


class Scope(enum.StrEnum):
    """OAuth scopes and API-key scopes (pinned names)."""

    CONTINUITY_READ = "continuity:read"
    CONTINUITY_WRITE = "continuity:write"
    AUDIT_READ = "audit:read"


class Capability(enum.StrEnum):
    READ = "read"  # identity, context, memory, tasks, receipts
    WRITE = "write"  # memory_add, task_create, task_update (+ receipts), state_put
    MANAGE = "manage"  # repository bindings, API keys, viewer/contributor memberships
    READ_AUDIT = "read_audit"  # the project's audit log
    OWN = "own"  # admin/owner memberships, rename/delete the project
    # End another session's lease on a task (task_lease_release): owners and admins, as people
    # or through a token or key with continuity:write (a stuck lease is ended over REST too).
    RELEASE_LEASES = "release_leases"


class CredentialKind(enum.StrEnum):
    OAUTH_TOKEN = "oauth_token"  # noqa: S105 (a kind, not a secret)
    API_KEY = "api_key"
    SESSION = "session"  # a signed-in person in the admin or web UI
    OPERATOR = "operator"  # manage.py commands run on the server


class ActorType(enum.StrEnum):
    USER = "user"
    API_KEY = "api_key"
    OPERATOR = "operator"
    OAUTH_CLIENT = "oauth_client"
    ANONYMOUS = "anonymous"


ROLE_CAPABILITIES: dict[Role, frozenset[Capability]] = {
    Role.VIEWER: frozenset({Capability.READ}),
    Role.CONTRIBUTOR: frozenset({Capability.READ, Capability.WRITE}),
    Role.ADMIN: frozenset(
        {
            Capability.READ,
            Capability.WRITE,
            Capability.MANAGE,
            Capability.READ_AUDIT,
            Capability.RELEASE_LEASES,
        }
    ),
    Role.OWNER: frozenset(Capability),
}

# The scope a delegated credential (OAuth token, API key) needs for each capability. None means
# no scope grants it: project administration is only for people signed in, or operators.
CAPABILITY_SCOPE: dict[Capability, Scope | None] = {
    Capability.READ: Scope.CONTINUITY_READ,
    Capability.WRITE: Scope.CONTINUITY_WRITE,
    Capability.READ_AUDIT: Scope.AUDIT_READ,
    Capability.MANAGE: None,
    Capability.OWN: None,
    Capability.RELEASE_LEASES: Scope.CONTINUITY_WRITE,
}

FIRST_PARTY_CREDENTIALS = frozenset({CredentialKind.SESSION, CredentialKind.OPERATOR})
ALL_SCOPES = frozenset(Scope)

# What a grant outside any membership may hold: an auditor (projects.auditors) reads one
# project's audit log and nothing else. A Caller without a role holds its grants alone, and
# only a signed-in person holds one.
GRANTABLE_WITHOUT_ROLE = frozenset({Capability.READ_AUDIT})


def scopes_for_role(role: Role) -> frozenset[Scope]:
    """The scopes a credential for this role may carry (consent never grants more)."""
    return frozenset(
        scope
        for capability, scope in CAPABILITY_SCOPE.items()
        if scope is not None and capability in ROLE_CAPABILITIES[role]
    )


def privileged(role: str) -> bool:
    """Roles whose memberships only owners may grant, change or remove."""
    return role in (Role.OWNER, Role.ADMIN)


def roles_grantable_by(role: Role | None) -> list[Role]:
    """The roles a person with this role may give, change or take away (docs/architecture.md, "The
    tenancy rule"): owners all four, admins viewer and contributor, everyone else none."""
    capabilities = ROLE_CAPABILITIES[role] if role is not None else frozenset()
    if Capability.OWN in capabilities:
        return list(Role)
    if Capability.MANAGE in capabilities:
        return [each for each in Role if not privileged(each)]
    return []


# What a refusal tells the person: plain words, never a capability's internal name.
REFUSALS: dict[Capability, str] = {
    Capability.READ: "Only members of this project can read it.",
    Capability.WRITE: "A viewer can read this project but not change it.",
    Capability.MANAGE: "Only the project's owners and admins can do this.",
    Capability.READ_AUDIT: "Only the project's owners and admins can read its audit log.",
    Capability.OWN: "Only the project's owners can do this.",
    Capability.RELEASE_LEASES: "Only the project's owners and admins can end a lease.",
}


@dataclass(frozen=True)
class Actor:
    type: ActorType
    id: str
    label: str


@dataclass(frozen=True)
class Credential:
    kind: CredentialKind
    id: str | None = None  # the token row or API key id, never the secret
    fingerprint: str = ""  # a short hash for the audit log, never the credential


@dataclass(frozen=True)
class WriteContext:
    resource: str
    instance: str
    project: str

    def as_dict(self) -> dict[str, str]:
        return {"resource": self.resource, "instance": self.instance, "project": self.project}


@dataclass(frozen=True)
class Caller:
    """Everything downstream knows about who is asking: built once per request.

    What it may do is its role's capabilities (none without a role) plus its `grants`, each
    capability also needing the credential's scope. A Caller for an auditor has no role and
    READ_AUDIT as its one grant, so every other operation refuses it.
    """

    project: Project
    role: Role | None  # None: not a member (an auditor reading the log)
    scopes: frozenset[str]
    actor: Actor
    user_id: int | None
    credential: Credential
    resource: str
    instance: str
    request_id: str
    client_id: str | None = None
    # A person reading pages (web.access): each page view is counted once, per person, page
    # and window (audit.noise), instead of an audit row per read the page makes. Writes and
    # refusals are recorded as always.
    reads_counted: bool = False
    # Capabilities held by a grant outside the membership (GRANTABLE_WITHOUT_ROLE only).
    grants: frozenset[Capability] = frozenset()

    def __post_init__(self) -> None:
        if not self.grants <= GRANTABLE_WITHOUT_ROLE:
            raise ValueError(f"no grant outside a membership holds {sorted(self.grants)}")
        if self.grants and self.credential.kind != CredentialKind.SESSION:
            raise ValueError("only a signed-in person holds a grant outside a membership")
        if self.role is None and not self.grants:
            raise ValueError("a Caller holds a role or a grant")

    @property
    def role_label(self) -> str:
        """The role as people read it ("" without one)."""
        return Role(self.role).label if self.role is not None else ""

    @property
    def capabilities(self) -> frozenset[Capability]:
        held = ROLE_CAPABILITIES[self.role] if self.role is not None else frozenset()
        return held | self.grants

    def missing_scope(self, capability: Capability) -> Scope | None:
        """The scope this credential lacks for a capability it holds, if any."""
        scope = CAPABILITY_SCOPE[capability]
        if self.credential.kind in FIRST_PARTY_CREDENTIALS or scope is None:
            return None
        return None if scope in self.scopes else scope

    def scope_shortfall(self, capability: Capability) -> Scope | None:
        """The scope to ask for (step-up) when the Caller holds a capability its scopes do not
        allow."""
        if capability not in self.capabilities:
            return None
        return self.missing_scope(capability)

    def can(self, capability: Capability) -> bool:
        if capability not in self.capabilities:
            return False
        if CAPABILITY_SCOPE[capability] is None:
            return self.credential.kind in FIRST_PARTY_CREDENTIALS
        return self.missing_scope(capability) is None

    def require(self, capability: Capability) -> None:
        if self.can(capability):
            return
        held = capability in self.capabilities
        missing = self.missing_scope(capability) if held else None
        if missing is not None:
            raise Forbidden(
                f"This credential lacks the {missing} scope.",
                required_scopes=[str(missing)],
            )
        if held:
            raise Forbidden("Project administration needs a signed-in person, not a token or key.")
        raise Forbidden(REFUSALS[capability])

    @property
    def write_context(self) -> WriteContext:
        return WriteContext(
            resource=self.resource, instance=self.instance, project=str(self.project.pk)
        )
