"""Step-up: the one answer to a credential whose role allows an operation but whose scopes do not.

The Operation raises it, as the first check of its order (core.operations,
`Operation.require_scopes`); the transports answer it as an HTTP 403 with a challenge, not a
tool result. A transport that must refuse before any operation of a request runs (a JSON-RPC
batch, a request the MCP SDK serves) asks the Operation first. So the rule is written once:

- the refusal is audited exactly once: the operation's name, outcome `rejected`, code
  `forbidden`, target type `scope` with the missing scopes as the target id (no secret);
- the error (`forbidden`) names the scopes the operation needs and the credential lacks, in
  `required_scopes`;
- the challenge (`WWW-Authenticate: Bearer error="insufficient_scope", scope="..."`) names every
  scope the credential holds plus every scope the operation needs. A client that replaces its
  scopes with the challenge's (the 2025-11-25 advice) keeps what it had; one that adds the
  challenge's to its own (2026-07-28, SEP-2350) asks for the same set. Neither loses a scope
  and loops between two step-ups.

A role that does not allow the operation at all is no step-up (no scope would help): the
Operation wrapper refuses it with the role's message, audited there.
"""

from __future__ import annotations

from audit.recorder import AuditNote, record_after_failure
from core.access import Caller, Capability
from core.errors import Forbidden


class InsufficientScope(Forbidden):
    """A scope shortfall: the client can fix it by asking for `challenge_scopes`."""

    def __init__(self, *, needed: list[str], challenge_scopes: list[str]) -> None:
        names = ", ".join(needed)
        super().__init__(f"This credential lacks the {names} scope.", required_scopes=needed)
        self.needed = needed
        self.challenge_scopes = challenge_scopes


def shortfall(caller: Caller, capability: Capability) -> InsufficientScope | None:
    """The step-up refusal for this capability, if the caller needs one (no database)."""
    missing = caller.scope_shortfall(capability)
    if missing is None:
        return None
    needed = [str(missing)]
    return InsufficientScope(
        needed=needed, challenge_scopes=sorted({*map(str, caller.scopes), *needed})
    )


def refuse(caller: Caller, operation: str, refusal: InsufficientScope) -> InsufficientScope:
    """Audit a step-up refusal (once, whatever the transport) and hand it back to raise."""
    note = AuditNote(target_type="scope", target_id=" ".join(refusal.needed))
    record_after_failure(caller, operation, note, refusal.code)
    return refusal


def require_scopes(caller: Caller, operation: str, capability: Capability) -> None:
    """Raise the audited step-up refusal when the caller's scopes fall short of its role."""
    refusal = shortfall(caller, capability)
    if refusal is not None:
        raise refuse(caller, operation, refusal)
