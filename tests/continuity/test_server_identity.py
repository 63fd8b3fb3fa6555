"""server_identity: who this server is and who the caller is here."""

from __future__ import annotations

from continuity.selectors import server_identity
from continuity.services import memory_add
from core.access import CredentialKind
from tests.continuity.helpers import as_json, last_audit
from tests.factories import World


def test_it_names_the_resource_the_instance_the_project_and_the_principal(world: World) -> None:
    viewer = world.caller("viewer", scopes={"continuity:read", "audit:read"})
    identity = as_json(server_identity(viewer))
    assert identity == {
        "resource": "http://testserver/mcp",
        "instance": "test",
        "project": {"id": str(world.alpha.pk), "slug": "alpha", "name": "Alpha"},
        "principal": {
            "actor": "victor",
            "role": "viewer",
            "scopes": ["audit:read", "continuity:read"],
            "credential": "oauth_token",
        },
        "write_context": {
            "resource": "http://testserver/mcp",
            "instance": "test",
            "project": str(world.alpha.pk),
        },
    }
    event = last_audit(world.alpha)
    assert (event.operation, event.outcome, event.target_type, event.target_id) == (
        "server_identity",
        "success",
        "project",
        str(world.alpha.pk),
    )


def test_the_write_context_it_gives_is_the_one_writes_accept(world: World) -> None:
    owner = world.caller("owner", kind=CredentialKind.API_KEY)
    context = as_json(server_identity(owner))["write_context"]
    assert (
        as_json(memory_add(owner, write_context=context, kind="note", content="x"))["kind"]
        == "note"
    )


def test_each_project_has_its_own_write_context(world: World) -> None:
    alpha = as_json(server_identity(world.caller("owner")))["write_context"]
    beta = as_json(server_identity(world.caller("outsider")))["write_context"]
    assert alpha["project"] != beta["project"]
    assert (alpha["resource"], alpha["instance"]) == (beta["resource"], beta["instance"])
