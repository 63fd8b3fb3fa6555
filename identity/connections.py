"""Connected apps: the OAuth clients a person authorized for a project, and ending one.

A person may disconnect only their own authorizations, in a project they belong to; the
tokens die in the operation's transaction and the audit row names the client, never a token.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from audit.recorder import AuditNote
from core.access import Caller, Capability
from core.errors import NotFound
from core.operations import operation
from core.validation import Input, RequiredText
from identity.models import Application
from identity.revocation import revoke_tokens


class ConnectedAppRevokeInput(Input):
    client_id: Annotated[RequiredText, Field(max_length=100)]


@operation("connected_app_revoke", capability=Capability.READ, input_model=ConnectedAppRevokeInput)
def connected_app_revoke(caller: Caller, args: ConnectedAppRevokeInput, note: AuditNote) -> int:
    """End every token the caller's person holds from this client for the caller's project;
    returns how many died. A client with none answers not_found, like an unknown one."""
    note.target("oauth_client", args.client_id)
    application = Application.objects.filter(client_id=args.client_id).first()
    ended = 0
    if application is not None and caller.user_id is not None:
        ended = revoke_tokens(
            user_id=caller.user_id, project=caller.project, application=application
        )
    if not ended:
        raise NotFound("This app is not connected to this project.")
    return ended
