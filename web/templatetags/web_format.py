"""How the pages show times and short ids (UTC, to the second, in a <time> element), and
whether a person is offered the audit log."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from projects.audit_log import readable_projects

register = template.Library()


@register.filter
def when(value: datetime | str | None) -> SafeString | str:
    """A model's datetime or a selector's RFC 3339 string, as `2026-12-01 11:40:03 UTC`."""
    moment = _utc(value)
    if moment is None:
        return "never"
    return format_html('<time datetime="{}">{}</time>', _rfc3339(moment), _seconds(moment))


@register.filter
def when_minute(value: datetime | str | None) -> SafeString | str:
    """Like `when`, to the minute (the full time is the element's title): for dense lists."""
    moment = _utc(value)
    if moment is None:
        return "never"
    return format_html(
        '<time datetime="{}" title="{}">{}</time>',
        _rfc3339(moment),
        _seconds(moment),
        moment.strftime("%Y-%m-%d %H:%M UTC"),
    )


def _utc(value: datetime | str | None) -> datetime | None:
    if value in (None, ""):
        return None
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    assert isinstance(moment, datetime)
    return moment.astimezone(UTC)


def _rfc3339(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def _seconds(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


@register.filter
def short_id(value: object) -> str:
    """The first eight characters of an id: enough to tell rows apart on a page."""
    return str(value)[:8]


@register.filter
def status_label(value: str) -> str:
    return str(value).replace("_", " ")


@register.simple_tag(takes_context=True)
def may_read_audit(context: template.Context) -> bool:
    """Whether the signed-in person may read any audit log (only then is one offered): one
    query per request, kept on the request."""
    request = context.get("request")
    if request is None or not request.user.is_authenticated:
        return False
    if not hasattr(request, "heyaira_may_read_audit"):
        request.heyaira_may_read_audit = readable_projects(request.user).exists()
    return bool(request.heyaira_may_read_audit)


@register.filter
def url_breaks(url: str) -> SafeString:
    """A URL that may wrap after its slashes (and only inside a part longer than the line)."""
    parts = re.split(r"(?<=/)(?!/)", str(url))  # after each slash that does not start a "//"
    return format_html_join(mark_safe("<wbr>"), "{}", ((part,) for part in parts))
