"""The audit log's filters, declared once (django-filter): the web's list and exports and the
admin's audit list (projects.admin_audit_filters) read them from the URL, and the audit_list
operation from its arguments.

The form's values live in the URL, so a filtered view can be bookmarked, shared and paged, and
exported as exactly the same set. Times are UTC (the form says so; datetime-local carries no
zone).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

import django_filters  # type: ignore[import-untyped]
from django import forms
from django.db.models import Q, QuerySet

from audit.models import AuditEvent, Outcome


class AuditFilterForm(forms.Form):
    """The filters' form: one cross-field rule, and the URL it came from."""

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        since, until = data.get("since"), data.get("until")
        if since and until and since >= until:
            self.add_error("until", "Must be later than the start.")
        return data

    def active(self) -> bool:
        return self.is_bound and any(self.data.get(name) for name in self.fields)

    def query_with(self, **extra: str | None) -> str:
        """This form's filters as a query string (with `extra` added), for page and export
        links that keep exactly the filtered set."""
        pairs = [(n, self.data.get(n, "")) for n in self.fields if self.data.get(n)]
        pairs += [(n, v) for n, v in extra.items() if v]
        return f"?{urlencode(pairs)}" if pairs else ""


class _UtcMoment(django_filters.DateTimeFilter):
    def __init__(self, lookup_expr: str, label: str, help_text: str = "") -> None:
        widget = forms.DateTimeInput(attrs={"type": "datetime-local", "step": "1"})
        super().__init__(
            field_name="occurred_at",
            lookup_expr=lookup_expr,
            label=label,
            help_text=help_text,
            widget=widget,
        )

    def filter(self, qs: QuerySet[Any], value: datetime | None) -> QuerySet[Any]:
        return super().filter(qs, value.replace(tzinfo=UTC) if value is not None else None)


def _text(label: str, help_text: str = "", max_length: int = 150, **kwargs: Any) -> Any:
    return django_filters.CharFilter(
        label=label, help_text=help_text, max_length=max_length, **kwargs
    )


class AuditEventFilter(django_filters.FilterSet):
    since = _UtcMoment("gte", "From (UTC)")
    until = _UtcMoment("lt", "Until (UTC)", "Events before this time.")
    actor = _text("Actor", "A username, an API key's label or an actor id.", method="by_actor")
    operation = _text("Operation", "For example task_update or sign_in.", 64)
    outcome = django_filters.ChoiceFilter(
        label="Outcome", choices=Outcome.choices, empty_label="Any outcome"
    )
    error_code = _text("Error code", "For example forbidden or stale_version.", 32)
    target = _text("Target", "type:id (task:…) or an id alone.", 170, method="by_target")
    request_id = _text("Request id", max_length=64)

    class Meta:
        model = AuditEvent
        fields: list[str] = []
        form = AuditFilterForm

    def by_actor(self, events: QuerySet[AuditEvent], name: str, value: str) -> QuerySet[Any]:
        """An actor's label (a username, an API key's label) or id."""
        return events.filter(Q(actor_label=value) | Q(actor_id=value))

    def by_target(self, events: QuerySet[AuditEvent], name: str, value: str) -> QuerySet[Any]:
        kind, colon, target_id = value.partition(":")
        if colon and kind and target_id:
            return events.filter(target_type=kind, target_id=target_id)
        return events.filter(target_id=value)


def filter_values(query: Mapping[str, str]) -> dict[str, str]:
    """The filters' values in a query (an address's, say), without its other parameters."""
    return {name: query[name] for name in AuditEventFilter.base_filters if name in query}


def filtered(events: QuerySet[AuditEvent], filters: AuditEventFilter) -> QuerySet[AuditEvent]:
    """`events` narrowed by valid `filters` (none for unbound ones), newest first."""
    if filters.is_bound:
        filters.form.is_valid()
        events = filters.filter_queryset(events)
    return events.order_by("-occurred_at", "-id")
