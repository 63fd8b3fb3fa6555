"""What every page for signed-in people shares: sign-in required, the page headers, and a
typed error turned into the page's answer (a refusal or a missing row is the 404 page, so a
project or row that is not the person's looks exactly like one that does not exist; a bad
value in the address is a 400 page that says, in the person's words, which one), and the page
view counted once the page is served (web.access)."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from core.errors import Forbidden, HeyAiraError, NotFound, ValidationError
from core.pages import people_page
from web.access import count_page_view

View = Callable[..., HttpResponse]

DAMAGED_LINK = "This page link is damaged or out of date: start again from the first page."
# The address's values, as the pages name them (the operations' argument names are theirs).
VALUE_NAMES = {
    "kind": "the kind of entry",
    "status": "the task status",
    "query": "the search words",
    "agent": "the agent's name",
    "before_version": "the version to start before",
}


def people_message(error: HeyAiraError) -> str:
    """What went wrong, without naming code: which value of the address the page cannot use."""
    if not isinstance(error, ValidationError):
        return "This request could not be served as it is."
    if "cursor" in error.fields:
        return DAMAGED_LINK
    named = [VALUE_NAMES.get(name, "a value") for name in error.fields]
    return f"This address holds {', '.join(dict.fromkeys(named))} in a form this page cannot use."


def bad_request(request: HttpRequest, message: str) -> HttpResponse:
    context = {"message": message, "start_again": request.path}
    return render(request, "web/bad_request.html", context, status=400)


def person_page(view: View) -> View:
    """A page for a signed-in person (anonymous visitors go to sign in first)."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            response = view(request, *args, **kwargs)
        except (NotFound, Forbidden):
            raise Http404 from None
        except HeyAiraError as error:  # validation_error: a hand-edited query string
            return bad_request(request, people_message(error))
        count_page_view(request, response)
        return response

    return login_required(people_page(wrapped))
