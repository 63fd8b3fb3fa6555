"""The few framework internals HeyAira still needs, each because no public API does the job in
the versions pinned in requirements.txt. Nothing else reaches into Django or psycopg_pool:
tests/core/test_framework_internals.py names the versions this was written against and fails on
another, so that an upgrade looks at each use below again (and deletes those it makes public).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.admin import ModelAdmin
from django.http import HttpRequest, HttpResponse

WRITTEN_FOR = {"django": (5, 2), "psycopg_pool": (3, 3)}


def set_pool_check(pool: Any, check: Callable[[Any], None]) -> None:
    """Make `check` the `check` callback of a pool Django built. Django 5.2 passes its own
    (`ConnectionPool.check_connection`, or None) to psycopg_pool's constructor and refuses a
    `check` in OPTIONS["pool"] (Django ticket 37075, public from a later Django: then put the
    check in OPTIONS["pool"] and delete this)."""
    pool._check = check


def pool_check(pool: Any) -> Callable[[Any], None] | None:
    """The `check` callback `pool` runs before handing out a connection."""
    check: Callable[[Any], None] | None = pool._check
    return check


def change_view_outside_transaction(
    admin: ModelAdmin[Any],
    request: HttpRequest,
    object_id: str | None,
    form_url: str,
    extra_context: dict[str, Any] | None,
) -> HttpResponse:
    """The admin's add/change view without the transaction Django's `changeform_view` wraps
    around every hook of a POST (get_form, save_model, response_add...): HeyAira's services run
    from the form's clean() in their own durable transaction, which may not nest in another."""
    response: HttpResponse = admin._changeform_view(  # type: ignore[attr-defined]
        request, object_id, form_url, extra_context
    )
    return response


def delete_view_outside_transaction(
    admin: ModelAdmin[Any],
    request: HttpRequest,
    object_id: str,
    extra_context: dict[str, Any] | None,
) -> HttpResponse:
    """The admin's delete view without Django's transaction around it (as above)."""
    response: HttpResponse = admin._delete_view(  # type: ignore[attr-defined]
        request, object_id, extra_context
    )
    return response
