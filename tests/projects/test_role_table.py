"""The tenancy rule (docs/architecture.md), its management rows: who may manage what, in person.

Continuity rows (read, write) are pinned in tests/continuity/test_access_table.py. Here: repository
bindings, API keys and viewer/contributor memberships (admin, owner); the audit log (admin,
owner); admin/owner memberships and renaming the project (owner). A delegated credential (an
OAuth token or API key, whatever its scopes) manages nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from audit.models import AuditEvent
from core.access import Caller, CredentialKind
from core.errors import Forbidden
from projects.api_keys import api_key_create
from projects.audit_log import audit_list
from projects.callers import session_caller
from projects.services import membership_add, project_rename, repository_bind
from tests.factories import World, make_user, token_caller

ROLES = ("owner", "admin", "contributor", "viewer")


def bind(caller: Caller) -> Any:
    return repository_bind(
        caller, provider="gitlab", owner="acme", name="tools", url="https://gitlab.com/acme/tools"
    )


def add_viewer(caller: Caller) -> Any:
    return membership_add(caller, user_id=make_user("newcomer").pk, role="viewer")


def add_admin(caller: Caller) -> Any:
    return membership_add(caller, user_id=make_user("newcomer").pk, role="admin")


def make_key(caller: Caller) -> Any:
    return api_key_create(caller, user_id=caller.user_id, label="ci", scopes=["continuity:read"])


def read_audit(caller: Caller) -> Any:
    return audit_list(caller, limit=5)


def rename(caller: Caller) -> Any:
    return project_rename(caller, name="Renamed")


# operation -> the roles the table allows it to
TABLE: dict[str, tuple[Callable[[Caller], Any], set[str]]] = {
    "repository_bind": (bind, {"owner", "admin"}),
    "membership_add (viewer)": (add_viewer, {"owner", "admin"}),
    "api_key_create": (make_key, {"owner", "admin"}),
    "audit_list": (read_audit, {"owner", "admin"}),
    "membership_add (admin)": (add_admin, {"owner"}),
    "project_rename": (rename, {"owner"}),
}


@pytest.mark.django_db
@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("operation", list(TABLE))
def test_the_role_table_decides_each_management_operation(world: World, operation: str, role: str):
    action, allowed = TABLE[operation]
    user = {
        "owner": world.owner,
        "admin": world.admin,
        "contributor": world.contributor,
        "viewer": world.viewer,
    }[role]
    caller = session_caller(user, world.alpha)
    assert caller is not None
    if role in allowed:
        action(caller)
        return
    with pytest.raises(Forbidden):
        action(caller)
    latest = AuditEvent.objects.filter(project_id=world.alpha.pk).order_by("-occurred_at").first()
    assert latest is not None
    assert (latest.outcome, latest.error_code, latest.actor_label) == (
        "rejected",
        "forbidden",
        user.username,
    )


@pytest.mark.django_db
@pytest.mark.parametrize("kind", [CredentialKind.OAUTH_TOKEN, CredentialKind.API_KEY])
@pytest.mark.parametrize(
    "operation", ["repository_bind", "membership_add (viewer)", "api_key_create", "project_rename"]
)
def test_a_delegated_credential_manages_nothing_even_for_an_owner(
    world: World, operation: str, kind: CredentialKind
):
    action, _ = TABLE[operation]
    caller = token_caller(world.owner, world.alpha, kind=kind)
    with pytest.raises(Forbidden, match="signed-in person"):
        action(caller)


@pytest.mark.django_db
def test_an_audit_read_scope_lets_an_admins_token_read_the_log(world: World):
    with_scope = token_caller(world.admin, world.alpha, scopes={"audit:read"})
    without = token_caller(world.admin, world.alpha, scopes={"continuity:read"})
    assert audit_list(with_scope, limit=1)["events"]
    with pytest.raises(Forbidden) as refused:
        audit_list(without, limit=1)
    assert refused.value.details["required_scopes"] == ["audit:read"]


@pytest.mark.django_db
def test_a_non_member_has_no_caller_at_all(world: World):
    assert session_caller(world.outsider, world.alpha) is None
