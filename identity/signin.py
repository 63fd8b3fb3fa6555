"""Sign-in at /accounts/login/, its audit trail, and the audited CSRF refusal.

A failed sign-in is recorded with the account it named only when that account exists: the text
typed into the username box may be a password typed in the wrong box, so unknown names are never
stored, not even hashed. Failures are counted (audit.noise): the first of each window per
account (or, for unknown names, per network) is a row, every one is counted. Passwords never
reach this module (Django masks them in the signal).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_login_failed
from django.contrib.auth.views import LoginView
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.decorators import method_decorator

from audit.models import Outcome
from audit.noise import count_event, count_rejection
from core.pages import people_page, with_page_headers
from identity import audit, throttle
from identity.throttle import address_of

USERNAME_MAX_LENGTH = 150


@method_decorator(people_page, name="dispatch")
class SignInView(LoginView):
    template_name = "oauth/sign_in.html"

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if throttle.locked_out(request):
            # Say why, without checking the password (it would be refused anyway). The lockout
            # has its one audit row; the attempts made during it are only counted.
            throttle.count_locked_out(request)
            form = self.get_form_class()(request)
            context = self.get_context_data(form=form, throttled=True)
            return self.render_to_response(context, status=429)
        return super().post(request, *args, **kwargs)


def on_login_failed(
    sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **kwargs: Any
) -> None:
    if throttle.locked_out(request):
        # Refused by the throttle (the admin's sign-in too): counted, the lockout is recorded.
        throttle.count_locked_out(request)
        return
    username = credentials.get("username")
    user = None
    if isinstance(username, str) and 0 < len(username) <= USERNAME_MAX_LENGTH:
        user = get_user_model().objects.filter(username=username).first()
    if _first_of_window(request, user):
        audit.record_oauth(
            audit.SIGN_IN,
            Outcome.REJECTED,
            user=user,
            error_code="invalid_credentials",
            request_id=getattr(request, "request_id", ""),
        )
    throttle.count_failure(request)


def _first_of_window(request: HttpRequest | None, user: Any) -> bool:
    """Wrong passwords are counted, not stored one by one (audit.noise): for an account, the
    first of each window is a row naming it; for a name that is nobody's, the first of each
    window from the network (anyone can type names as fast as the lockout allows)."""
    if user is None:
        return count_rejection(audit.SIGN_IN, "invalid_credentials", address_of(request))
    return count_event(
        project_id=None,
        subject=f"user:{user.pk}",
        operation=audit.SIGN_IN,
        reason="invalid_credentials",
    )


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """A POST without a valid CSRF token (a forged consent, say) is refused and audited: one
    row per person, and for nobody signed in the first of each source's window (audit.noise)."""
    user = getattr(request, "user", None)
    signed_in = user is not None and user.is_authenticated
    if signed_in or count_rejection(audit.CSRF_REJECTED, "csrf_failed", address_of(request)):
        _audit_csrf(request, user if signed_in else None)
    # Django's reason names what failed (a foreign Origin, a missing cookie): it echoes only
    # what the browser sent, and tells an operator behind a proxy what to fix.
    return with_page_headers(render(request, "csrf_failed.html", {"reason": reason}, status=403))


def _audit_csrf(request: HttpRequest, user: Any) -> None:
    audit.record_oauth(
        audit.CSRF_REJECTED,
        Outcome.REJECTED,
        user=user,
        target_type="path",
        target_id=request.path[:64],
        error_code="csrf_failed",
        request_id=getattr(request, "request_id", ""),
    )


def connect_receivers() -> None:
    user_login_failed.connect(on_login_failed, dispatch_uid="identity.sign_in_failed")
