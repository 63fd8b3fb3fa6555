"""A client ID metadata document seen for the first time is a registration: the same limits
as dynamic registration apply (DOT's CIMD_REGISTRATION_PERMISSION_CLASSES hook).

DOT asks before every fetch, first sight and stale re-fetch alike; only a first sight counts
against the limits (a known client refreshing its document adds nothing to the database).
"""

from __future__ import annotations

from oauthlib.common import Request

from identity import audit, registration
from identity.cimd import refusals
from identity.models import Application


class RegistrationLimits:
    def has_permission(self, request: Request, client_id: str) -> bool:
        known = Application.objects.filter(client_id=client_id).exists()
        audit.note(cimd_fetch="refreshed" if known else "first_seen")
        if known:
            return True
        # The address the rest of the server counts requests under (DOT copies the Django
        # request's META into the oauthlib request's headers).
        address = str(request.headers.get("REMOTE_ADDR", ""))
        refusal = registration.admit_network(address) or registration.admit_growth()
        if refusal is not None:
            audit.note(cimd_refusal=refusal.code)
            return False
        # Still refused from a recent attempt? DOT will not fetch again yet (its backoff):
        # say why it was refused then.
        if earlier := refusals.remembered(client_id):
            audit.note(cimd_refusal=earlier)
        return True
