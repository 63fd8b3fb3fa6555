"""DRF's view of identity.authn: the Caller becomes `request.auth`.

Only the Authorization header counts. Session cookies are not read: a session is not bound to a
project, and a cookie-authenticated API would need CSRF protection.
"""

from __future__ import annotations

from dataclasses import dataclass

from rest_framework.authentication import BaseAuthentication
from rest_framework.request import Request

from core.access import Caller
from identity import authn


@dataclass(frozen=True)
class CallerUser:
    """What DRF keeps as `request.user`; everything real is on the Caller (`request.auth`)."""

    caller: Caller

    is_authenticated = True
    is_anonymous = False

    @property
    def pk(self) -> int | None:
        return self.caller.user_id


class CallerAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[CallerUser, Caller]:
        caller = authn.authenticate(
            request.META.get("HTTP_AUTHORIZATION"),
            resource="api",
            request_id=getattr(request, "request_id", ""),
            client_address=request.META.get("REMOTE_ADDR", ""),
        )
        return CallerUser(caller), caller

    def authenticate_header(self, request: Request) -> str:
        return authn.challenge("api")
