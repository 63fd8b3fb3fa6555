"""Sign-in throttling: after too many failed sign-ins from one network, refuse for a while.

Counted per client network (not per account, which would let anyone lock a person out) over a
fixed window: the address for IPv4, the /64 for IPv6 (identity.ratelimit keys by
core.networks), so one host cannot try ten passwords from each of its addresses. While a
network is over the limit even a correct password is refused, so a guessing run learns nothing;
the sign-in page says why and when to retry.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest

from audit.models import Outcome
from audit.noise import count_rejection
from identity import audit
from identity.ratelimit import hit, peek

WINDOW_SECONDS = 15 * 60
_BUCKET = "sign-in-failures"


def address_of(request: HttpRequest | None) -> str:
    return "" if request is None else str(request.META.get("REMOTE_ADDR", ""))


def locked_out(request: HttpRequest | None) -> bool:
    """Has this address failed too often in the current window? (Reads; counts nothing.)"""
    failures = peek(_BUCKET, address_of(request), window=WINDOW_SECONDS)
    return failures >= settings.HEYAIRA_SIGN_IN_FAILURES_PER_WINDOW


def count_failure(request: HttpRequest | None) -> None:
    failures = hit(
        _BUCKET,
        address_of(request),
        limit=settings.HEYAIRA_SIGN_IN_FAILURES_PER_WINDOW - 1,
        window=WINDOW_SECONDS,
    )
    if failures.first_refusal:
        # One row when an address crosses the line, not one per further guess.
        audit.record_oauth(
            audit.SIGN_IN,
            Outcome.REJECTED,
            error_code="sign_in_throttled",
            request_id=getattr(request, "request_id", ""),
        )


def count_locked_out(request: HttpRequest | None) -> None:
    """An attempt from a locked-out address: counted per source (audit.noise), no row each."""
    count_rejection(audit.SIGN_IN, "sign_in_throttled", address_of(request))


class ThrottledModelBackend(ModelBackend):
    """Django's username/password backend, closed to an address that failed too often.

    Raising PermissionDenied stops Django from trying further backends and counts as another
    failure, for the admin's sign-in page as for ours.
    """

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> Any:
        if locked_out(request):
            raise PermissionDenied
        return super().authenticate(request, username=username, password=password, **kwargs)
