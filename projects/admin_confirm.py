"""The confirmation step of every admin action that ends something for good.

The first POST (an action chosen on a list, or a Delete link followed) answers with a page that
names what will end and what follows from it; only the second POST, the person's "Yes", does
it. The page is an ordinary form: its two choices are a submit button and a link, both reached
by Tab and pressed with Enter or Space.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.contrib import admin
from django.contrib.admin import helpers
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse

CONFIRMED = "confirmed"  # the field the confirmation page posts back, with "yes"


@dataclass(frozen=True)
class Ending:
    """What a confirmation page says: the question, the things that end, and what follows."""

    question: str  # "Revoke 3 API keys?"
    items: Sequence[str]  # one line for each thing that ends
    consequence: str  # "Agents using them will get 401 at once."
    confirm: str  # the button: "Yes, revoke 3 keys"
    notes: Sequence[str] = field(default_factory=tuple)


def confirmed(request: HttpRequest) -> bool:
    return request.POST.get(CONFIRMED) == "yes"


def plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def quoted(names: Sequence[str], limit: int = 5) -> str:
    """'ci-bot', 'laptop' and 2 more."""
    shown = [f"'{name}'" for name in names[:limit]]
    rest = len(names) - len(shown)
    if rest:
        return ", ".join(shown) + f" and {rest} more"
    if len(shown) > 1:
        return ", ".join(shown[:-1]) + f" and {shown[-1]}"
    return "".join(shown)


def action_confirmation(
    model_admin: admin.ModelAdmin[Any],
    request: HttpRequest,
    *,
    action: str,
    selected: Sequence[Any],
    ending: Ending,
) -> TemplateResponse:
    """The page an action answers its first POST with: posting it back runs the action on the
    same selection, confirmed."""
    opts = model_admin.model._meta
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": opts,
        "title": ending.question,
        "ending": ending,
        "action": action,
        "selected": [str(pk) for pk in selected],
        "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        "confirmed_field": CONFIRMED,
        "back": request.get_full_path(),
    }
    return TemplateResponse(request, "admin/confirm_action.html", context)


def delete_context(ending: Ending, *, back: str) -> dict[str, Any]:
    """What a delete confirmation page (templates/admin/confirm_delete.html) needs beyond
    Django's own context: the title is the question."""
    return {"title": ending.question, "ending": ending, "back": back}


def change_url(obj: Any) -> str:
    opts = obj._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk])
