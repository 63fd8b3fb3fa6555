"""The client's typed errors. A server refusal arrives as a ToolError carrying the pinned code
(the server's architecture.md); everything the client refuses on its own has a class of its own."""

from __future__ import annotations

from typing import Any


class HeyAiraClientError(Exception):
    """Anything the client refuses or could not do."""

    exit_code = 1


class ProfileError(HeyAiraClientError):
    """The profile file or a profile in it is missing or malformed."""

    exit_code = 2


class ProfileMismatch(HeyAiraClientError):
    """The server is not the one the profile pins: every write is refused."""

    exit_code = 3

    def __init__(self, field: str, expected: str, actual: str) -> None:
        super().__init__(
            f"server_identity {field} is {actual!r} but the profile pins {expected!r}; "
            "refusing to write"
        )
        self.field = field
        self.expected = expected
        self.actual = actual


class NotVerified(HeyAiraClientError):
    """A write was attempted before server_identity was checked against the profile."""

    exit_code = 3


class CredentialMissing(HeyAiraClientError):
    """The profile's credential is not there (unset variable, missing file, no login yet)."""

    exit_code = 4


class CredentialRefused(HeyAiraClientError):
    """The server answered 401 (or 403): the key is wrong, expired or revoked, or the login
    lacks a scope."""

    exit_code = 4


class ServerRefused(HeyAiraClientError):
    """The server answered the request with a JSON-RPC error (not a tool error): the call was
    refused, not lost."""

    exit_code = 5


class ToolError(HeyAiraClientError):
    """The server answered a tool call with isError: its code, message and details."""

    exit_code = 5

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.details = details or {}

    @property
    def current_version(self) -> int | None:
        value = self.details.get("current_version")
        return value if isinstance(value, int) else None


class ServerFault(Exception):
    """The server answered with an HTTP 5xx status: the call may or may not have happened.

    Not a HeyAiraClientError on purpose: a keyed write that meets it is sent again with the same
    key (session._send), exactly like one whose answer was lost."""

    def __init__(self, url: str, status: int) -> None:
        super().__init__(f"{url} answered HTTP {status}")
        self.status = status


class LostResponse(HeyAiraClientError):
    """A write was sent and no answer came back, and re-reading could not tell the outcome."""

    exit_code = 6


class SummaryRejected(HeyAiraClientError):
    """A summarizer's reply is not a running summary (refusal, error text, no heading, too
    long); it is never stored."""


def find_client_error(error: BaseException) -> HeyAiraClientError | None:
    """Our own typed error inside whatever the SDK wrapped it in (exception groups, causes)."""
    if isinstance(error, HeyAiraClientError):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            if (found := find_client_error(inner)) is not None:
                return found
    for linked in (error.__cause__, error.__context__):
        if linked is not None and linked is not error:
            found = find_client_error(linked)
            if found is not None:
                return found
    return None
