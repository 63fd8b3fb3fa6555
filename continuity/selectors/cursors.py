"""Opaque cursors for lists ordered newest first by (created_at, id)."""

from __future__ import annotations

import base64
import binascii
import uuid
from datetime import UTC, datetime
from typing import Any, TypeVar

from django.db.models import Model, Q, QuerySet

from core.errors import ValidationError

RowT = TypeVar("RowT", bound=Model)


def encode_cursor(row: Any) -> str:
    """A cursor just past `row`, which has created_at and pk."""
    raw = f"{row.created_at.isoformat()}|{row.pk}"
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str, listing: str) -> tuple[datetime, uuid.UUID]:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        created_at, _, row_id = base64.urlsafe_b64decode(padded).decode().partition("|")
        moment = datetime.fromisoformat(created_at)
        if moment.tzinfo is None:
            raise ValueError("naive time")
        # In UTC here, not in the database adapter: a time that leaves datetime's range in UTC
        # (9999-12-31T23:59-14:00) raises OverflowError, which must be a validation_error.
        return moment.astimezone(UTC), uuid.UUID(row_id)
    except (ValueError, OverflowError, binascii.Error, UnicodeDecodeError):
        raise ValidationError(fields={"cursor": f"is not a cursor returned by {listing}"}) from None


def page(
    rows: QuerySet[RowT], *, cursor: str | None, limit: int, listing: str
) -> tuple[list[RowT], str | None]:
    """One page newest first, and the cursor of the next one (None on the last page).

    One query: a row past the limit is fetched only to learn whether there is a next page.
    """
    if cursor:
        created_at, row_id = decode_cursor(cursor, listing)
        rows = rows.filter(Q(created_at__lt=created_at) | Q(created_at=created_at, id__lt=row_id))
    found = list(rows.order_by("-created_at", "-id")[: limit + 1])
    more = len(found) > limit
    found = found[:limit]
    return found, encode_cursor(found[-1]) if more else None
