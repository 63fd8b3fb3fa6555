"""/audit/: the audit log for the people who may read it, per project.

Owners, admins and auditors (projects.audit_log's rule) read it, through a Caller that holds
READ_AUDIT alone; for everyone else a project's audit pages answer exactly as for a project
that does not exist. Every read of the log is an Operation (web.selectors.audit), so reading it
is itself audited: each view is counted per person, page and 10-minute window, the first of
each window an audit event (`audit_browse`, `audit_event_view`; web.access), and every refusal
and every export is an event of its own.
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
from audit.filters import AuditEventFilter, filter_values
from core.errors import ValidationError
from projects.audit_log import readable_projects
from web.access import audit_caller, audit_page_view
from web.selectors.audit import MORE_COUNTED, audit_browse, audit_chain, audit_event_view
from web.selectors.audit import audit_export as export_events
from web.views.common import DAMAGED_LINK, bad_request, person_page

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
    caller = audit_caller(request, slug)
    project = caller.project
    # Counted once the page is served, so the page never lists its own view.
    caller = audit_page_view(
        request, caller, audit_browse.name, target_type="project", target_id=str(project.pk)
    )
    form = AuditEventFilter(request.GET or None).form  # the form as the page shows it
    context: dict[str, object] = {"project": project, "form": form, "section": "audit"}
    context["chain"] = audit_chain(caller)
    after = request.GET.get("after", "")
    try:
        found = audit_browse(caller, filters=filter_values(request.GET), after=after or None)
    except ValidationError as refused:
        # The page stays whole (the chain, the form with each wrong value marked): only the
        # list waits until the filters mean something. The refusal is the page's audit row.
        if "after" in refused.fields:
            form.add_error(None, DAMAGED_LINK)
        context["problems"] = form_problems(form)
        return render(request, "web/audit_list.html", context, status=400)
    context.update(
        export_query=form.query_with(),
        events=found.events,
        more=found.more,
        more_capped=found.more > MORE_COUNTED,
        next_query=form.query_with(after=found.next_cursor) if found.next_cursor else "",
        first_query=form.query_with() if after else "",
    )
    return render(request, "web/audit_list.html", context)


@require_safe
@person_page
def audit_detail(request: HttpRequest, slug: str, event_id: UUID) -> HttpResponse:
    caller = audit_caller(request, slug)
    caller = audit_page_view(
        request, caller, audit_event_view.name, target_type="audit_event", target_id=str(event_id)
    )
    viewed = audit_event_view(caller, event_id=event_id)  # not_found: the 404 page
    back = request.GET.get("back", "")
    context = {
        "project": caller.project,
        "event": viewed.event,
        "proof": viewed.proof,
        "chain": viewed.chain,
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
    caller = audit_caller(request, slug)  # every export is an audit row of its own
    if kind not in EXPORTS:
        raise Http404
    try:
        exported = export_events(caller, filters=filter_values(request.GET))
    except ValidationError:
        form = AuditEventFilter(request.GET or None).form
        wrong = "; ".join(f"{label}: {problem}" for label, problem, _ in form_problems(form))
        return bad_request(request, f"Nothing was exported: a filter is wrong. {wrong}")
    encode, content_type = EXPORTS[kind]
    lines = encode(exported.events, filtered=exported.filtered)
    response = StreamingHttpResponse((line.encode() for line in lines), content_type=content_type)
    stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
    name = f"heyaira-audit-{caller.project.slug}-{stamp}.{kind}"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    # The page wrappers only set headers, which a streaming response has like any other.
    return cast(HttpResponse, response)


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
