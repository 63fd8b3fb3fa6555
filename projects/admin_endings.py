"""What each irreversible admin action ends, in the words its confirmation page uses
(projects.admin_confirm): the question, the things that end, and what follows at once."""

from __future__ import annotations

from core.access import Role
from projects.admin_confirm import Ending, plural, quoted
from projects.models import (
    ApiKey,
    AuditorGrant,
    Membership,
    Project,
    ProjectGroupPermission,
    ProjectUserPermission,
)


def api_keys_ending(keys: list[ApiKey], *, already: int) -> Ending:
    count = len(keys)
    them = "it" if count == 1 else "them"
    labels = quoted([key.label for key in keys])
    notes = [f"{plural(already, 'selected key is', 'selected keys are')} revoked already."]
    return Ending(
        question=f"Revoke {plural(count, 'API key', 'API keys')}: {labels}?",
        items=[
            f"'{key.label}' (hak_{key.prefix}_…) in {key.project.slug}, acting for "
            f"{key.user.get_username()}"
            for key in keys
        ],
        consequence=f"Agents using {them} will get 401 at once. A revoked key cannot be used "
        "again; make a new one if it is still needed.",
        confirm=f"Yes, revoke {plural(count, 'key', 'keys')}",
        notes=notes if already else [],
    )


def membership_ending(membership: Membership) -> Ending:
    """What removing a membership ends: the role, and at once every credential the person holds
    for the project (identity.revocation listens for membership_ended)."""
    person, project = membership.user.get_username(), membership.project
    keys = list(
        ApiKey.objects.filter(project=project, user=membership.user, revoked_at__isnull=True)
        .order_by("label")
        .values_list("label", flat=True)
    )
    role = Role(membership.role).label.lower()
    items = [f"{person}'s {role} role in {project.name} ({project.slug})"]
    if keys:
        items.append(f"{plural(len(keys), 'API key', 'API keys')} acting for them: {quoted(keys)}")
    items.append(f"every app {person} connected to {project.slug} (its tokens)")
    return Ending(
        question=f"Remove {person} from {project.name}?",
        items=items,
        consequence=f"{person} loses access to {project.slug} at once: their keys and apps "
        "get 401 from the next call. Adding them again gives the role back, not the keys.",
        confirm=f"Yes, remove {person}",
    )


def auditor_ending(grant: AuditorGrant) -> Ending:
    person, project = grant.user.get_username(), grant.content_object
    return Ending(
        question=f"Stop {person} reading {project.slug}'s audit log?",
        items=[str(grant)],
        consequence=f"From now on {person} cannot read {project.name}'s audit log: its pages at "
        f"/audit/{project.slug}/ and in the admin answer as if it did not exist. Their own "
        "reads stay in the log.",
        confirm=f"Yes, stop {person} reading it",
    )


# Guardian's rows are the roles' and auditors' own bookkeeping, counted as auditors below.
_BOOKKEEPING = (ProjectUserPermission, ProjectGroupPermission)


def project_holdings(project: Project) -> list[str]:
    """What a project holds, counted per kind of row that points at it (tasks, memories, work
    receipts, memberships, API keys...), without naming the apps that define them."""
    held = []
    for relation in Project._meta.related_objects:
        model = relation.related_model
        if isinstance(model, str) or not relation.one_to_many or model in _BOOKKEEPING:
            continue
        count = model._base_manager.filter(**{relation.field.name: project}).count()
        if count:
            meta = model._meta
            held.append(plural(count, str(meta.verbose_name), str(meta.verbose_name_plural)))
    auditors = AuditorGrant.objects.filter(content_object=project).count()
    if auditors:
        held.append(plural(auditors, "auditor", "auditors"))
    return held


def project_ending(project: Project) -> Ending:
    held = project_holdings(project)
    return Ending(
        question=f"Delete the project {project.name} ({project.slug}) and everything it holds?",
        items=held or ["nothing yet: no tasks, memories or members besides its owners"],
        consequence="This cannot be undone: every member, key and connected app loses it at "
        "once, and its tasks, memories and receipts are gone. Its audit log stays.",
        confirm=f"Yes, delete {project.slug}",
        notes=[f"Type the project's slug, {project.slug}, to confirm."],
    )
