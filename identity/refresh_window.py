"""A refresh token presented again just after its rotation gets the answer the rotation gave.

A client that refreshes on two connections at once presents one refresh token twice (or eight
times). Strict rotation calls the second use reuse and revokes the whole family, so the client
loses its grant for having been busy. Within HEYAIRA_REFRESH_REPEAT_WINDOW_SECONDS of the
rotation, every repeat therefore gets the same answer as the first use: the same new access
and refresh tokens, nothing new minted. After the window a repeat is reuse and revokes the
family, as RFC 9700 section 4.14 asks. Handing back the existing pair rather than a new pair
per repeat keeps reuse detection intact: whoever holds the pair second is found out at the
next rotation.

Tokens are stored only as SHA-256 checksums, so the answer cannot be rebuilt from the database.
The rotation seals it instead: AES-256-GCM under a key derived (HKDF-SHA256) from the refresh
token that was presented, which is itself not stored. Only someone presenting that very token
can open it, and a database read alone yields nothing usable. The sealed answer is kept on the
rotated row and wiped once the window has passed (at the family's next rotation, and by
`manage.py purge_oauth`).

Concurrency: the repeat waits on the row lock the rotation holds (PostgreSQL: SELECT ... FOR
UPDATE; SQLite: transactions begin IMMEDIATE), then finds the row rotated and its answer sealed.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.utils import timezone

from identity.models import AccessToken, RefreshToken

_INFO = b"heyaira refresh-token repeat answer v1"
_NONCE_BYTES = 12


@dataclass(frozen=True)
class Repeat:
    """The answer for a repeated refresh token: the token response to send again."""

    token: dict[str, Any]
    access_token: int  # the access token's row, for the audit log

    @property
    def checksum(self) -> str:
        return hashlib.sha256(str(self.token["access_token"]).encode()).hexdigest()


def window() -> timedelta:
    return timedelta(seconds=settings.HEYAIRA_REFRESH_REPEAT_WINDOW_SECONDS)


def seal(
    rotated: RefreshToken,
    presented: str,
    token: dict[str, Any],
    *,
    successor: RefreshToken,
    access: AccessToken,
) -> None:
    """Keep the rotation's answer on the rotated row (inside the rotating transaction)."""
    if settings.HEYAIRA_REFRESH_REPEAT_WINDOW_SECONDS <= 0:
        return
    payload = json.dumps(
        {
            "token": token,
            "issued_at": time.time(),
            "successor": successor.pk,
            "access_token": access.pk,
        }
    )
    nonce = os.urandom(_NONCE_BYTES)
    aad = rotated.token_checksum.encode()
    sealed = nonce + AESGCM(_key(presented, rotated)).encrypt(nonce, payload.encode(), aad)
    RefreshToken.objects.filter(pk=rotated.pk).update(
        successor_sealed=base64.urlsafe_b64encode(sealed).decode()
    )


def repeat_of(
    row: RefreshToken, presented: str, client_pk: int, arrived: datetime
) -> Repeat | None:
    """The answer for presenting this already-rotated token again, or None when that is reuse:
    arrived past the window, another client, a row revoked rather than rotated, or a successor
    that is no longer live (revoked, or rotated in turn).

    The window is judged by when the request arrived, not when it got the row lock: a repeat
    that waited its turn behind the rotation (and others) is still the same burst."""
    if not row.successor_sealed or row.revoked is None or row.application_id != client_pk:
        return None
    if arrived - row.revoked > window():
        return None
    payload = _open(row, presented)
    if payload is None:
        return None
    successor = RefreshToken.objects.filter(
        pk=payload["successor"], revoked__isnull=True, access_token_id=payload["access_token"]
    )
    if not successor.exists():
        return None  # the answer no longer stands: its pair was rotated or revoked since
    token = dict(payload["token"])
    # The access token was issued then: say how long it has left.
    left = float(payload["issued_at"]) + float(token.get("expires_in", 0)) - time.time()
    token["expires_in"] = max(0, int(left))
    return Repeat(token, access_token=int(payload["access_token"]))


def wipe_expired(family: Any = None) -> int:
    """Drop sealed answers whose window has passed (of one family, or all); returns how many."""
    rows = RefreshToken.objects.exclude(successor_sealed="").filter(
        revoked__lt=timezone.now() - window()
    )
    if family is not None:
        rows = rows.filter(token_family=family)
    return rows.update(successor_sealed="")


def _open(row: RefreshToken, presented: str) -> dict[str, Any] | None:
    try:
        sealed = base64.urlsafe_b64decode(row.successor_sealed)
        nonce, ciphertext = sealed[:_NONCE_BYTES], sealed[_NONCE_BYTES:]
        aad = row.token_checksum.encode()
        plain = AESGCM(_key(presented, row)).decrypt(nonce, ciphertext, aad)
        payload = json.loads(plain)
    except (ValueError, InvalidTag):
        return None
    return payload if isinstance(payload, dict) else None


def _key(presented: str, row: RefreshToken) -> bytes:
    # The refresh token carries well over 128 bits of randomness; HKDF spreads it into a key
    # bound to this row.
    derive = HKDF(
        algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO + str(row.pk).encode()
    )
    return derive.derive(presented.encode())
