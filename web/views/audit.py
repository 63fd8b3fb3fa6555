"""/audit/: the audit log for the people who may read it, per project.

Owners, admins and auditors (a django-guardian grant of projects.view_project_audit) read it;
for everyone else a project's audit pages answer exactly as for a project that does not exist.
Reading the log is itself audited: each view is counted per person, page and 10-minute window,
the first of each window an audit event (`audit_browse`, `audit_event_view`; web.access), and
every refusal and every export is an event of its own.
"""

from __future__ import annotations

from typing import cast
from uuid import UUID

from django import forms
from django.core.exceptions import NON_FIELD_ERRORS
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_safe

from audit.export import export_csv, export_jsonl
from audit.filters import AuditEventFilter
from audit.models import Outcome
from audit.recorder import record_security_event
from audit.state import chain_state, event_proof
from projects.audit_log import readable_projects
from web.access import AuditReader, audit_reader, note_page_view
from web.selectors.audit import (
    MORE_COUNTED,
    audit_event,
    audit_page,
    decode_cursor,
    filtered_events,
)
from web.views.common import DAMAGED_LINK, bad_request, person_page

AUDIT_BROWSE = "audit_browse"
AUDIT_EVENT_VIEW = "audit_event_view"
AUDIT_EXPORT = "audit_export"
PROJECTS_SHOWN = 200


@require_safe
@person_page
def audit_home(request: HttpRequest) -> HttpResponse:
    readable = readable_projects(request.user)
    projects = list(readable.order_by("name", "slug")[: PROJECTS_SHOWN + 1])
    more = readable.count() - PROJECTS_SHOWN if len(projects) > PROJECTS_SHOWN else 0
    context = {"projects": projects[:PROJECTS_SHOWN], "more": more}
    return render(request, "web/audit_projects.html", context)


@require_safe
@person_page
def audit_list(request: HttpRequest, slug: str) -> HttpResponse:
    reader = audit_reader(request, slug)
    filters = AuditEventFilter(request.GET or None)
    form = filters.form
    cursor_text = request.GET.get("after", "")
    cursor = decode_cursor(cursor_text) if cursor_text else None
    context: dict[str, object] = {"project": reader.project, "form": form, "section": "audit"}
    if (form.is_bound and not form.is_valid()) or (cursor_text and cursor is None):
        # The page stays whole (the chain, the form with each wrong value marked): only the
        # list waits until the filters mean something.
        if cursor_text and cursor is None:
            form.add_error(None, DAMAGED_LINK)
        context.update(chain=chain_state(reader.project.pk), problems=form_problems(form))
        _read(reader, AUDIT_BROWSE, Outcome.REJECTED, error_code="validation_error")
        return render(request, "web/audit_list.html", context, status=400)
    found = audit_page(reader.project, filters, cursor=cursor)
    state = chain_state(reader.project.pk)
    # Counted once the page is served, so the page never lists its own view.
    note_page_view(
        request,
        reader.project,
        AUDIT_BROWSE,
        target_type="project",
        target_id=str(reader.project.pk),
    )
    context.update(
        chain=state,
        export_query=form.query_with(),
        events=found.events,
        more=found.more,
        more_capped=found.more > MORE_COUNTED,
        next_query=form.query_with(after=found.next_cursor) if found.next_cursor else "",
        first_query=form.query_with() if cursor else "",
    )
    return render(request, "web/audit_list.html", context)


@require_safe
@person_page
def audit_detail(request: HttpRequest, slug: str, event_id: UUID) -> HttpResponse:
    reader = audit_reader(request, slug)
    event = audit_event(reader.project, event_id)
    if event is None:
        _read(reader, AUDIT_EVENT_VIEW, Outcome.REJECTED, str(event_id), "not_found")
        raise Http404
    state = chain_state(reader.project.pk)
    note_page_view(
        request,
        reader.project,
        AUDIT_EVENT_VIEW,
        target_type="audit_event",
        target_id=str(event.pk),
    )
    back = request.GET.get("back", "")
    context = {
        "project": reader.project,
        "event": event,
        "proof": event_proof(event),
        "chain": state,
        "back_query": back if back.startswith("?") else "",
        "section": "audit",
    }
    return render(request, "web/audit_event.html", context)


EXPORTS = {
    "jsonl": (export_jsonl, "application/x-ndjson; charset=utf-8"),
    "csv": (export_csv, "text/csv; charset=utf-8"),
}


@require_safe
@person_page
def audit_export(request: HttpRequest, slug: str, kind: str) -> HttpResponse:
    """Exactly the list's filtered set, streamed in constant memory in the format
    `verify_audit --file` checks (a complete chain when no filter is set)."""
    reader = audit_reader(request, slug)
    filters = AuditEventFilter(request.GET or None)
    form = filters.form
    if kind not in EXPORTS:
        raise Http404
    if form.is_bound and not form.is_valid():
        _read(reader, AUDIT_EXPORT, Outcome.REJECTED, error_code="validation_error")
        wrong = "; ".join(f"{label}: {problem}" for label, problem, _ in form_problems(form))
        return bad_request(request, f"Nothing was exported: a filter is wrong. {wrong}")
    # Recorded before the stream starts, so the export holds its own row when the filters
    # select it, and never half a chain's tail.
    _read(reader, AUDIT_EXPORT, Outcome.SUCCESS)
    encode, content_type = EXPORTS[kind]
    events = filtered_events(reader.project, filters)
    lines = encode(events, filtered=form.active())
    response = StreamingHttpResponse((line.encode() for line in lines), content_type=content_type)
    stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
    name = f"heyaira-audit-{reader.project.slug}-{stamp}.{kind}"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    # The page wrappers only set headers, which a streaming response has like any other.
    return cast(HttpResponse, response)


def _read(
    reader: AuditReader,
    operation: str,
    outcome: Outcome,
    target_id: str = "",
    error_code: str = "",
) -> None:
    """A refusal or an export: an audit event of its own each time (views are counted)."""
    record_security_event(
        operation,
        outcome,
        reader.context,
        project=reader.project,
        target_type="audit_event" if target_id else "project",
        target_id=target_id or str(reader.project.pk),
        error_code=error_code,
    )


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
