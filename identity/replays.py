"""Replays: an authorization code or a refresh token presented a second time.

Either means the credential leaked (or a client misbehaves badly): every token issued from it
dies, its whole refresh-token family is revoked, and the audit log says so (RFC 6749 section
4.1.2, RFC 9700 section 4.14).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from oauthlib.common import Request

from audit.models import Outcome
from identity import audit
from identity.models import RefreshToken
from identity.refresh_window import Repeat


@dataclass(frozen=True)
class Replay:
    """A code or refresh token presented a second time, and whose tokens must now die."""

    operation: str  # audit.CODE_REPLAY or audit.REFRESH_REUSE
    family: Any  # the refresh-token family to revoke, when known
    project: Any
    user: Any
    client_id: str
    resource: list[str]

    @property
    def reason(self) -> str:
        return "code_replayed" if self.operation == audit.CODE_REPLAY else "refresh_reused"


class Replayed(Exception):
    """A replay found inside the issuing transaction: raised to roll that transaction back;
    the family is revoked afterwards, outside it."""

    def __init__(self, replay: Replay, grant_pk: Any = None) -> None:
        super().__init__(replay.operation)
        self.replay = replay
        self.grant_pk = grant_pk


def replay_of(operation: str, family: Any, request: Request) -> Replay:
    return Replay(
        operation,
        family,
        request.project,
        request.user,
        request.client.client_id,
        list(getattr(request, "heyaira_audience", None) or []),
    )


def revoke_replayed(replay: Replay) -> None:
    """Revoke every token of the family and say so in the audit log, in one transaction."""
    with transaction.atomic():
        if replay.family is not None:
            RefreshToken.revoke_family(replay.family)
        audit.record_oauth(
            replay.operation,
            Outcome.REJECTED,
            user=replay.user,
            project=replay.project,
            client_id=replay.client_id,
            resource=replay.resource[0] if replay.resource else "",
            target_type="token_family",
            target_id=str(replay.family or ""),
            error_code="family_revoked" if replay.family else "replayed",
        )
    audit.note(reason=replay.reason)


class Repeated(Exception):
    """A refresh token presented again within the repeat window, found under the row lock:
    raised to leave the issuing transaction with nothing written; the answer is the rotation's
    (identity.refresh_window)."""

    def __init__(self, repeat: Repeat) -> None:
        super().__init__("repeated")
        self.repeat = repeat
