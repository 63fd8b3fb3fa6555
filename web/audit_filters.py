"""The audit list's filters: a GET form whose values live in the URL, so a filtered view can be
bookmarked, shared and paged, and exported as exactly the same set."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlencode

from django import forms
from django.core.exceptions import NON_FIELD_ERRORS

from audit.models import Outcome
from web.selectors.audit import AuditFilters

FILTER_FIELDS = (
    "since",
    "until",
    "actor",
    "operation",
    "outcome",
    "error_code",
    "target",
    "request_id",
)


def _text(label: str, help_text: str = "", max_length: int = 150) -> forms.CharField:
    return forms.CharField(
        label=label, required=False, max_length=max_length, help_text=help_text, strip=True
    )


class AuditFilterForm(forms.Form):
    since = forms.DateTimeField(
        label="From (UTC)",
        required=False,
        widget=forms.DateTimeInput(attrs={"type": "datetime-local", "step": "1"}),
    )
    until = forms.DateTimeField(
        label="Until (UTC)",
        required=False,
        widget=forms.DateTimeInput(attrs={"type": "datetime-local", "step": "1"}),
        help_text="Events before this time.",
    )
    actor = _text("Actor", "A username, an API key's label or an actor id.")
    operation = _text("Operation", "For example task_update or sign_in.", 64)
    outcome = forms.ChoiceField(
        label="Outcome", required=False, choices=[("", "Any outcome"), *Outcome.choices]
    )
    error_code = _text("Error code", "For example forbidden or stale_version.", 32)
    target = _text("Target", "type:id (task:…) or an id alone.", 170)
    request_id = _text("Request id", max_length=64)

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        since, until = data.get("since"), data.get("until")
        if since and until and since >= until:
            self.add_error("until", "Must be later than the start.")
        return data

    def filters(self) -> AuditFilters:
        """The valid form's filters (none for an unbound form); times are read as UTC."""
        if not self.is_bound:
            return AuditFilters()
        data = self.cleaned_data
        return AuditFilters(
            since=_utc(data.get("since")),
            until=_utc(data.get("until")),
            actor=data.get("actor") or "",
            operation=data.get("operation") or "",
            outcome=data.get("outcome") or "",
            error_code=data.get("error_code") or "",
            target=data.get("target") or "",
            request_id=data.get("request_id") or "",
        )

    def active(self) -> bool:
        return self.is_bound and any(self.data.get(name) for name in FILTER_FIELDS)

    def query_with(self, **extra: str | None) -> str:
        """This form's filters as a query string (with `extra` added), for page and export
        links that keep exactly the filtered set."""
        pairs = [(n, self.data.get(n, "")) for n in FILTER_FIELDS if self.data.get(n)]
        pairs += [(n, v) for n, v in extra.items() if v]
        return f"?{urlencode(pairs)}" if pairs else ""


def _utc(moment: datetime | None) -> datetime | None:
    """A datetime-local value carries no zone: the form says UTC, so it is read as UTC."""
    return moment.replace(tzinfo=UTC) if moment is not None else None


def form_problems(form: forms.Form) -> list[tuple[str, str, str]]:
    """Each wrong value as (the filter's label, what is wrong, the field's id: "" for the
    form as a whole), for the summary above the form."""
    problems = []
    for name, errors in form.errors.items():
        field = form.fields.get(name)
        label = str(field.label) if field is not None and name != NON_FIELD_ERRORS else ""
        anchor = form[name].id_for_label if field is not None else ""
        for error in errors:
            problems.append((label, str(error), anchor))
    return problems
