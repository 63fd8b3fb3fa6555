"""The audit list's filters in the admin: the audit log's own (audit.filters.AuditEventFilter,
the web list's, its exports' and audit_list's), as a form in the list's sidebar."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from audit.filters import AuditEventFilter, filtered

NAMES: list[str] = list(AuditEventFilter.base_filters)


class AuditEventFilters(admin.ListFilter):
    title = "Audit log filters"
    template = "admin/audit/auditevent/filters.html"

    def __init__(
        self, request: HttpRequest, params: dict[str, Any], model: Any, model_admin: Any
    ) -> None:
        super().__init__(request, params, model, model_admin)
        # Taken out of `params`, so that the admin neither reads them as field lookups nor
        # filters by them twice.
        for name in NAMES:
            value = params.pop(name, [""])[-1]
            if value:
                self.used_parameters[name] = value
        self.filters = AuditEventFilter(self.used_parameters or None)

    def expected_parameters(self) -> list[str | None]:
        return [*NAMES]

    def has_output(self) -> bool:
        return True

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return filtered(queryset, self.filters)

    def choices(self, changelist: Any) -> Iterator[Any]:
        """One choice: the form, with the list's other parameters (search, order, the date
        drill-down) kept as hidden fields."""
        others = [(name, v) for name, v in changelist.params.items() if name not in NAMES]
        yield {"form": self.filters.form, "others": others}
