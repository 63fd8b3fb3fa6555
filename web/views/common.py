"""What every page for signed-in people shares: sign-in required, the page headers, a typed
error turned into the page's answer (a refusal or a missing row is the 404 page, so a project or
row that is not the person's looks exactly like one that does not exist), and the page view
counted once the page is served (web.access)."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from core.errors import Forbidden, HeyAiraError, NotFound
from core.pages import people_page
from web.access import count_page_view

View = Callable[..., HttpResponse]


def person_page(view: View) -> View:
    """A page for a signed-in person (anonymous visitors go to sign in first)."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            response = view(request, *args, **kwargs)
        except (NotFound, Forbidden):
            raise Http404 from None
        except HeyAiraError as error:  # validation_error: a hand-edited query string
            return render(request, "web/bad_request.html", {"message": error.message}, status=400)
        count_page_view(request, response)
        return response

    return login_required(people_page(wrapped))
