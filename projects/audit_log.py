"""Reading a project's audit log (admins and owners; auditors through the web UI later)."""

from __future__ import annotations

from typing import Any

from audit.models import AuditEvent
from audit.recorder import AuditNote
from core.access import Caller, Capability
from core.operations import operation
from projects.inputs import AuditListInput


def event_json(event: AuditEvent) -> dict[str, Any]:
    return {
        "id": str(event.pk),
        "occurred_at": event.occurred_at.isoformat(),
        "request_id": event.request_id,
        "actor": {"type": event.actor_type, "id": event.actor_id, "label": event.actor_label},
        "client_id": event.client_id,
        "credential": {"kind": event.credential_kind, "fingerprint": event.credential_fingerprint},
        "resource": event.resource,
        "instance": event.instance,
        "operation": event.operation,
        "target": {"type": event.target_type, "id": event.target_id},
        "outcome": event.outcome,
        "error_code": event.error_code,
    }


@operation("audit_list", capability=Capability.READ_AUDIT, input_model=AuditListInput, writes=False)
def audit_list(caller: Caller, args: AuditListInput, note: AuditNote) -> dict[str, Any]:
    """The newest audit events of the caller's project."""
    note.target("project", caller.project.pk)
    events = AuditEvent.objects.filter(project_id=caller.project.pk)
    if args.operation:
        events = events.filter(operation=args.operation)
    if args.outcome:
        events = events.filter(outcome=args.outcome)
    return {"events": [event_json(e) for e in events.order_by("-occurred_at", "-id")[: args.limit]]}
