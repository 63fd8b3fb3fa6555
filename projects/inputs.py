"""Input shapes of the tenancy operations (memberships, repository bindings, the audit log)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, StrictInt

from core.validation import BranchName, Input, RequiredText, not_a_token

RoleName = Literal["owner", "admin", "contributor", "viewer"]
Slug = Annotated[str, Field(min_length=1, max_length=50, pattern=r"^[a-z0-9][a-z0-9-]*$")]
RepoPart = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.-]+$")]


def _public_repository_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise ValueError("must be an http(s) URL")
    if parts.username or parts.password:
        raise ValueError("must not embed credentials")
    if parts.query or parts.fragment:
        raise ValueError("must not carry a query or fragment")
    return value


def _link_template(placeholder: str) -> Callable[[str], str]:
    """An http(s) URL with `placeholder` in it (and no other braces), or empty. A query is
    allowed: some hosts name a commit there (cgit's `/commit/?id=`)."""

    def check(value: str) -> str:
        if not value:
            return value
        parts = urlsplit(value.replace(placeholder, "x"))
        if parts.scheme not in ("https", "http") or not parts.hostname:
            raise ValueError("must be an http(s) URL")
        if parts.username or parts.password:
            raise ValueError("must not embed credentials")
        if placeholder not in value:
            raise ValueError(f"must contain {placeholder}")
        if "{" in value.replace(placeholder, "") or "}" in value.replace(placeholder, ""):
            raise ValueError(f"may contain only {placeholder} in braces")
        return value

    return check


LinkTemplate = Annotated[str, Field(max_length=300)]


class ProjectCreateInput(Input):
    slug: Slug
    name: Annotated[RequiredText, Field(max_length=200)]


class ProjectRenameInput(Input):
    name: Annotated[RequiredText, Field(max_length=200)]


class ProjectDeleteInput(Input):
    confirm_slug: Annotated[str, Field(max_length=50, description="The project's slug, again.")]


class MembershipAddInput(Input):
    user_id: StrictInt
    role: RoleName


class MembershipChangeInput(Input):
    membership_id: uuid.UUID
    role: RoleName


class MembershipRemoveInput(Input):
    membership_id: uuid.UUID


class RepositoryBindInput(Input):
    provider: Literal["github", "gitlab", "bitbucket", "other"]
    owner: RepoPart
    name: RepoPart
    url: Annotated[str, Field(max_length=300), AfterValidator(_public_repository_url)]
    default_branch: Annotated[BranchName, Field(max_length=100)] = "main"
    installation_ref: Annotated[
        str,
        Field(max_length=100, pattern=r"^[A-Za-z0-9_.:-]*$"),
        AfterValidator(not_a_token),
    ] = ""
    commit_url_template: Annotated[LinkTemplate, AfterValidator(_link_template("{commit}"))] = ""
    branch_url_template: Annotated[LinkTemplate, AfterValidator(_link_template("{branch}"))] = ""


class RepositoryUnbindInput(Input):
    binding_id: uuid.UUID


class AuditListInput(Input):
    operation: Annotated[str, Field(max_length=64, pattern=r"^[a-z_]+$")] | None = None
    outcome: Literal["success", "replayed", "rejected", "error"] | None = None
    limit: Annotated[StrictInt, Field(ge=1, le=200)] = 50
