"""What follows a newest-first keyset page, for the pages' "and N more"."""

from __future__ import annotations

from typing import TypeVar

from django.db.models import Model, Q, QuerySet

M = TypeVar("M", bound=Model)


def rows_after(rows: QuerySet[M], last: M) -> QuerySet[M]:
    """The rows of a page ordered by (created_at, id), newest first, past `last`."""
    moment = last.created_at  # type: ignore[attr-defined]
    return rows.filter(Q(created_at__lt=moment) | Q(created_at=moment, id__lt=last.pk))
