from __future__ import annotations

from typing import Any

from audit.recorder import AuditNote
from continuity.inputs import NoInput
from continuity.presenters import project_json
from core.access import Caller, Capability
from core.operations import operation


@operation("server_identity", capability=Capability.READ, input_model=NoInput, writes=False)
def server_identity(caller: Caller, args: NoInput, note: AuditNote) -> dict[str, Any]:
    """Who this server is and who you are here, for checking against a pinned profile."""
    note.target("project", caller.project.pk)
    return {
        "resource": caller.resource,
        "instance": caller.instance,
        "project": project_json(caller.project),
        "principal": {
            "actor": caller.actor.label,
            "role": str(caller.role),
            "scopes": sorted(str(scope) for scope in caller.scopes),
            "credential": str(caller.credential.kind),
        },
        "write_context": caller.write_context.as_dict(),
    }
