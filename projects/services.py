"""Tenancy services: projects, memberships and repository bindings. Every change is audited.

Rules (docs/architecture.md, "The tenancy rule"): admins manage viewer and contributor memberships;
only owners touch admin and owner memberships; a project always keeps at least one owner.
"""

from __future__ import annotations

import uuid

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, User
from django.db import IntegrityError, transaction

from audit.models import Outcome
from audit.recorder import AuditNote, SecurityContext, record, record_security_event
from core.access import ActorType, Caller, Capability, CredentialKind, Role, privileged
from core.errors import Forbidden, HeyAiraError, NotFound, ValidationError
from core.lookups import delete_found, project_object
from core.operations import operation, parse_input
from projects.callers import operator_caller, session_caller
from projects.inputs import (
    MembershipAddInput,
    MembershipChangeInput,
    MembershipRemoveInput,
    ProjectCreateInput,
    ProjectDeleteInput,
    ProjectRenameInput,
    RepositoryBindInput,
    RepositoryUnbindInput,
)
from projects.models import Membership, Project, ProjectRepository, Repository
from projects.permissions import sync_object_permissions
from projects.signals import membership_ended


def project_create(
    *,
    slug: str,
    name: str,
    owner_username: str,
    operator: str = "",
    by: AbstractBaseUser | None = None,
    request_id: str = "",
) -> Project:
    """Create a project with its first owner. An operator (manage.py create_project, make run)
    or a superuser in the admin (`by`) does it; the audit rows name whichever it was."""
    try:
        if by is not None and not getattr(by, "is_superuser", False):
            raise Forbidden("Only a superuser can create projects.")
        args = parse_input(ProjectCreateInput, {"slug": slug, "name": name})
        with transaction.atomic(durable=True):
            owner = _new_project_owner(owner_username, args.slug)
            project = Project.objects.create(slug=args.slug, name=args.name)
            membership = Membership.objects.create(project=project, user=owner, role=Role.OWNER)
            sync_object_permissions(project, owner)
            caller = _creator(project, operator=operator, by=by, request_id=request_id)
            _record_created(caller, project, membership)
            return project
    except HeyAiraError as error:
        record_security_event(
            "project_create",
            Outcome.REJECTED,
            _creator_context(operator=operator, by=by, request_id=request_id),
            error_code=error.code,
        )
        raise


def _record_created(caller: Caller, project: Project, membership: Membership) -> None:
    record(
        caller, "project_create", Outcome.SUCCESS, target_type="project", target_id=str(project.pk)
    )
    record(
        caller,
        "membership_add",
        Outcome.SUCCESS,
        target_type="membership",
        target_id=str(membership.pk),
    )


def _new_project_owner(owner_username: str, slug: str) -> User:
    """The user who will own a new project under `slug`, once both are known to be right."""
    owner = get_user_model().objects.filter(username=owner_username).first()
    if owner is None:
        raise NotFound(f"No user named {owner_username!r}.")
    if Project.objects.filter(slug=slug).exists():
        raise ValidationError(
            "Another project already has this slug.", fields={"slug": "is taken by another project"}
        )
    return owner


def _creator(
    project: Project, *, operator: str, by: AbstractBaseUser | None, request_id: str
) -> Caller:
    if by is None:
        return operator_caller(project, label=operator, request_id=request_id)
    caller = session_caller(by, project, request_id=request_id)
    assert caller is not None  # a superuser acts as an owner of every project
    return caller


def _creator_context(
    *, operator: str, by: AbstractBaseUser | None, request_id: str
) -> SecurityContext:
    if by is None:
        return SecurityContext(
            actor_type=ActorType.OPERATOR,
            actor_id=operator,
            actor_label=operator,
            request_id=request_id,
            credential_kind=CredentialKind.OPERATOR,
        )
    return SecurityContext.of_session(by, request_id=request_id)


@operation("project_rename", capability=Capability.OWN, input_model=ProjectRenameInput)
def project_rename(caller: Caller, args: ProjectRenameInput, note: AuditNote) -> Project:
    note.target("project", caller.project.pk)
    Project.objects.filter(pk=caller.project.pk).update(name=args.name)
    return Project.objects.get(pk=caller.project.pk)


@operation("project_delete", capability=Capability.OWN, input_model=ProjectDeleteInput)
def project_delete(caller: Caller, args: ProjectDeleteInput, note: AuditNote) -> None:
    """Delete the project and everything it holds; its audit rows stay (they have no FK)."""
    note.target("project", caller.project.pk)
    if args.confirm_slug != caller.project.slug:
        raise ValidationError(
            f"The slug typed does not match {caller.project.slug}; nothing was deleted.",
            fields={"confirm_slug": "does not match the project's slug"},
        )
    members = list(
        Membership.objects.filter(project=caller.project).values_list("user_id", flat=True)
    )
    Project.objects.filter(pk=caller.project.pk).delete()
    for user_id in members:
        membership_ended.send(
            sender=Membership, project=caller.project, user_id=user_id, request_id=caller.request_id
        )


@operation("membership_add", capability=Capability.MANAGE, input_model=MembershipAddInput)
def membership_add(caller: Caller, args: MembershipAddInput, note: AuditNote) -> Membership:
    _lock_project(caller)
    if privileged(args.role):
        _require_owner(caller)
    user = get_user_model().objects.filter(pk=args.user_id, is_active=True).first()
    if user is None:
        raise NotFound("No such active user.")
    try:
        with transaction.atomic():
            membership = Membership.objects.create(
                project=caller.project, user=user, role=args.role
            )
    except IntegrityError:
        raise ValidationError(
            "This person is already a member of this project.",
            fields={"user_id": "is already a member of this project"},
        ) from None
    note.target("membership", membership.pk)
    sync_object_permissions(caller.project, user)
    return membership


@operation("membership_change", capability=Capability.MANAGE, input_model=MembershipChangeInput)
def membership_change(caller: Caller, args: MembershipChangeInput, note: AuditNote) -> Membership:
    membership = _membership_leaving_its_role(caller, note, args.membership_id, args.role)
    membership.role = args.role
    membership.save(update_fields=["role", "updated_at"])
    sync_object_permissions(caller.project, membership.user)
    return membership


@operation("membership_remove", capability=Capability.MANAGE, input_model=MembershipRemoveInput)
def membership_remove(caller: Caller, args: MembershipRemoveInput, note: AuditNote) -> None:
    membership = _membership_leaving_its_role(caller, note, args.membership_id, None)
    user = membership.user
    membership.delete()
    sync_object_permissions(caller.project, user)
    membership_ended.send(
        sender=Membership, project=caller.project, user_id=user.pk, request_id=caller.request_id
    )


@operation("repository_bind", capability=Capability.MANAGE, input_model=RepositoryBindInput)
def repository_bind(
    caller: Caller, args: RepositoryBindInput, note: AuditNote
) -> ProjectRepository:
    """Bind a repository by identity; an existing Repository row (shared) is reused as is."""
    repository = Repository.objects.filter(
        provider=args.provider, owner__iexact=args.owner, name__iexact=args.name
    ).first()
    if repository is None:
        repository = Repository.objects.create(
            provider=args.provider,
            owner=args.owner,
            name=args.name,
            url=args.url,
            default_branch=args.default_branch,
            installation_ref=args.installation_ref,
        )
    try:
        with transaction.atomic():
            binding = ProjectRepository.objects.create(
                project=caller.project,
                repository=repository,
                commit_url_template=args.commit_url_template,
                branch_url_template=args.branch_url_template,
            )
    except IntegrityError:
        raise ValidationError(
            fields={"name": "this repository is already bound to the project"}
        ) from None
    note.target("repository_binding", binding.pk)
    return binding


@operation("repository_unbind", capability=Capability.MANAGE, input_model=RepositoryUnbindInput)
def repository_unbind(caller: Caller, args: RepositoryUnbindInput, note: AuditNote) -> None:
    note.target("repository_binding", args.binding_id)
    delete_found(
        ProjectRepository.objects.filter(project=caller.project, pk=args.binding_id),
        missing="No such repository binding in this project.",
    )


def _membership_leaving_its_role(
    caller: Caller, note: AuditNote, membership_id: uuid.UUID, new_role: str | None
) -> Membership:
    """The membership about to take `new_role` (None: to end), read under the project's lock,
    once the role rules allow it: only an owner moves anyone into or out of the admin and owner
    roles, and the last owner stays."""
    note.target("membership", membership_id)
    _lock_project(caller)
    membership = _membership(caller, membership_id)
    if privileged(membership.role) or (new_role is not None and privileged(new_role)):
        _require_owner(caller)
    if membership.role == Role.OWNER and new_role != Role.OWNER:
        _keep_an_owner(caller, membership)
    return membership


def _require_owner(caller: Caller) -> None:
    if not caller.can(Capability.OWN):
        raise Forbidden(
            "Only an owner of this project can give, change or remove the admin and owner roles."
        )


def _lock_project(caller: Caller) -> None:
    """Serialize membership changes per project, so the last-owner rule holds under races."""
    Project.objects.select_for_update().filter(pk=caller.project.pk).first()


def _membership(caller: Caller, membership_id: uuid.UUID) -> Membership:
    return project_object(
        Membership.objects.select_related("user"),
        caller,
        membership_id,
        missing="No such membership in this project.",
    )


def _keep_an_owner(caller: Caller, leaving: Membership) -> None:
    others = (
        Membership.objects.filter(project=caller.project, role=Role.OWNER)
        .exclude(pk=leaving.pk)
        .exists()
    )
    if not others:
        raise ValidationError(
            "A project must keep at least one owner.",
            fields={"role": "the last owner cannot be removed or demoted"},
        )
