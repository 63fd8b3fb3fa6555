"""After the validator looked a client up: the audit events of a metadata document fetched for
this request, and the reason an unknown URL client is unknown.

DOT reports only "found" or "not found"; what happened on the way was noted by
identity.cimd.limits and identity.cimd.fetch in this request's notes (identity.audit).
"""

from __future__ import annotations

from audit.models import Outcome
from identity import audit
from identity.cimd.document import is_url_client_id, parse_client_id
from identity.cimd.refusals import Refused
from identity.models import Application


def settle(client_id: str, client: Application | None) -> None:
    notes = audit.current_notes()
    fetched, refusal = notes.cimd_fetch, notes.cimd_refusal
    notes.cimd_fetch = notes.cimd_refusal = ""  # each is reported once
    if client is None:
        if not refusal and is_url_client_id(client_id):
            try:
                parse_client_id(client_id)
            except Refused as refused:  # an http:// URL never reaches DOT's fetcher
                refusal = refused.code
        if refusal:
            audit.note(reason=refusal)  # the error page and its audit row say why
        return
    if not fetched or client.registration_source != Application.RegistrationSource.CIMD:
        return
    if fetched == "first_seen" and not refusal:
        _record(audit.CLIENT_REGISTER, Outcome.SUCCESS, client_id)
    elif fetched == "refreshed":
        # A failed re-fetch keeps the last good document (the draft forbids caching an error).
        outcome = Outcome.REJECTED if refusal else Outcome.SUCCESS
        _record(audit.CLIENT_METADATA_REFRESH, outcome, client_id, refusal)


def _record(operation: str, outcome: Outcome, client_id: str, error_code: str = "") -> None:
    # Only the URL is recorded; the document's content lives in the Application row alone.
    audit.record_oauth(
        operation,
        outcome,
        client_id=client_id,
        target_type="cimd_client",
        target_id=client_id,
        error_code=error_code,
    )
