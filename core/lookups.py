"""The one way to fetch (or delete) a row of the caller's project: it is there, or it is
`not_found`.

A row of another project answers exactly like an id that does not exist, so existence never
leaks across the tenant boundary (docs/architecture.md, "The tenancy rule").
"""

from __future__ import annotations

from typing import Any, TypeVar

from django.db import models

from core.access import Caller
from core.errors import NotFound

M = TypeVar("M", bound=models.Model)


def project_object(
    rows: type[M] | models.QuerySet[M], caller: Caller, pk: Any, *, missing: str
) -> M:
    """The row `pk` of the caller's project among `rows` (a model or a queryset, for
    select_related and the like), or NotFound(missing)."""
    queryset = rows if isinstance(rows, models.QuerySet) else rows._default_manager.all()
    found = queryset.filter(project=caller.project, pk=pk).first()
    if found is None:
        raise NotFound(missing)
    return found


def delete_found(rows: models.QuerySet[Any], *, missing: str) -> None:
    """Delete `rows` (already narrowed to the caller's project), or NotFound(missing) when
    there is none."""
    deleted, _ = rows.delete()
    if not deleted:
        raise NotFound(missing)
