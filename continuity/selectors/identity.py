from __future__ import annotations

from audit.recorder import AuditNote
from continuity.inputs import NoInput
from continuity.outputs import IdentityOut, PrincipalOut, WriteContextOut
from continuity.presenters import project_out
from core.access import Caller, Capability
from core.operations import operation


@operation("server_identity", capability=Capability.READ, input_model=NoInput, writes=False)
def server_identity(caller: Caller, args: NoInput, note: AuditNote) -> IdentityOut:
    """Who this server is and who you are here, for checking against a pinned profile."""
    note.target("project", caller.project.pk)
    return IdentityOut(
        resource=caller.resource,
        instance=caller.instance,
        project=project_out(caller.project),
        principal=PrincipalOut(
            actor=caller.actor.label,
            role=caller.role,
            scopes=sorted(str(scope) for scope in caller.scopes),
            credential=caller.credential.kind,
        ),
        write_context=WriteContextOut(**caller.write_context.as_dict()),
    )
