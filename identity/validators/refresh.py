"""Refresh tokens: rotated on every use; presented again within the repeat window they get the
rotation's own answer (identity.refresh_window), later (or once revoked) they revoke their
whole family; a family ends 30 days after it began."""

from __future__ import annotations

import hashlib
from typing import Any

from django.db.models import F
from django.utils import timezone
from oauthlib.common import Request

from identity import audit, refresh_window
from identity.models import RefreshToken
from identity.policy import refresh_family_expired, refresh_token_usable
from identity.replays import Repeated, Replay, Replayed, replay_of, revoke_replayed
from identity.validators.binding import Binding


class RefreshRules(Binding):
    # ---- token endpoint: refresh token --------------------------------------------------

    def validate_refresh_token(
        self, refresh_token: str, client: Any, request: Request, *args: Any, **kwargs: Any
    ) -> bool:
        request.heyaira_arrived = timezone.now()  # the repeat window is judged from here
        checksum = hashlib.sha256(refresh_token.encode()).hexdigest()
        row = (
            RefreshToken.objects.select_related("user", "project", "access_token")
            .filter(token_checksum=checksum)
            .order_by(F("revoked").desc(nulls_first=True))
            .first()
        )
        if row is None:
            audit.note(reason="refresh_unknown")
            return False
        audit.note(project=row.project, user=row.user)
        if row.revoked is not None:
            return self._repeat_or_replay(row, refresh_token, client, request)
        if refresh_family_expired(row.family_started or row.created):
            RefreshToken.revoke_family(row.token_family)
            audit.note(reason="refresh_family_expired")
            return False
        # DOT's own checks, on this very row: DOT's validate_refresh_token would read it
        # again, and a rotation by a concurrent request in between would look to DOT like
        # reuse (it would revoke the family on the spot).
        if not refresh_token_usable(row, client.pk):
            audit.note(reason="refresh_refused")
            return False
        request.refresh_token_instance = row
        request.heyaira_audience = list(row.resource)
        return self._bind(request, row.user, row.project, [])

    def _repeat_or_replay(
        self, row: RefreshToken, refresh_token: str, client: Any, request: Request
    ) -> bool:
        """A rotated (or revoked) token: answered again within the repeat window, or a replay
        that revokes the family. DOT's grace period stays 0."""
        if refresh_window.repeat_of(row, refresh_token, client.pk, request.heyaira_arrived):
            # The issuing step finds the answer again under the row lock (_lock_refresh_token).
            request.refresh_token_instance = row
            request.heyaira_audience = list(row.resource)
            return self._bind(request, row.user, row.project, [])
        revoke_replayed(
            Replay(
                audit.REFRESH_REUSE,
                row.token_family,
                row.project,
                row.user,
                client.client_id,
                list(row.resource),
            )
        )
        return False

    def _lock_refresh_token(self, request: Request) -> None:
        """Two refreshes of one token may both pass validation; the row lock orders them and
        the second sees the token already rotated: within the repeat window it gets the
        first one's answer, past it that is a replay; never a second family."""
        row = RefreshToken.objects.select_for_update().get(pk=request.refresh_token_instance.pk)
        if row.revoked is not None:
            repeat = refresh_window.repeat_of(
                row, request.refresh_token, request.client.pk, request.heyaira_arrived
            )
            if repeat is not None:
                raise Repeated(repeat)
            raise Replayed(replay_of(audit.REFRESH_REUSE, row.token_family, request))
        request.refresh_token_instance = row
        request.heyaira_rotated = row  # DOT rotates it next; its answer is sealed after
