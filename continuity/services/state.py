from __future__ import annotations

from audit.recorder import AuditNote
from continuity.inputs import StatePutInput
from continuity.models import StateVersion
from continuity.outputs import StateAckOut
from continuity.state_blocks import clean_running_summary
from core.access import Caller, Capability
from core.errors import StaleVersion
from core.operations import operation
from core.statements import insert_unless_taken

# Without expected_version a put appends after whatever is newest; a concurrent put for the same
# agent makes it retry on the new newest version this many times.
_APPEND_ATTEMPTS = 3


@operation("state_put", capability=Capability.WRITE, input_model=StatePutInput)
def state_put(caller: Caller, args: StatePutInput, note: AuditNote) -> StateAckOut:
    """Append a new immutable version of an agent's running summary."""
    note.target("state", args.agent)
    body = clean_running_summary(args.body)
    for _ in range(_APPEND_ATTEMPTS):
        latest = _latest_version(caller, args.agent)
        if args.expected_version is not None and args.expected_version != latest:
            raise StaleVersion(current_version=latest)
        state = StateVersion(
            project=caller.project,
            agent=args.agent,
            version=latest + 1,
            body=body,
            author=caller.actor.label,
        )
        if not insert_unless_taken(state):
            continue  # another put took latest + 1 first (and committed)
        return StateAckOut(
            agent=state.agent,
            version=state.version,
            chars=len(state.body),
            created_at=state.created_at,
        )
    raise StaleVersion(current_version=_latest_version(caller, args.agent))


def _latest_version(caller: Caller, agent: str) -> int:
    latest = (
        StateVersion.objects.filter(project=caller.project, agent=agent)
        .order_by("-version")
        .values_list("version", flat=True)
        .first()
    )
    return latest or 0
