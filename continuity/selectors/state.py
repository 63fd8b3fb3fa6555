from __future__ import annotations

from audit.recorder import AuditNote
from continuity.inputs import StateGetInput
from continuity.models import StateVersion
from continuity.outputs import StateGetOut
from continuity.presenters import state_out
from core.access import Caller, Capability
from core.errors import NotFound
from core.operations import operation


@operation("state_get", capability=Capability.READ, input_model=StateGetInput, writes=False)
def state_get(caller: Caller, args: StateGetInput, note: AuditNote) -> StateGetOut:
    """The newest running-summary version of one agent."""
    note.target("state", args.agent)
    state = (
        StateVersion.objects.filter(project=caller.project, agent=args.agent)
        .order_by("-version")
        .first()
    )
    if state is None:
        raise NotFound(f"No running summary is stored for agent {args.agent!r}.")
    return StateGetOut(state=state_out(state))
