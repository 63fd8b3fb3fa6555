"""`heyaira export`: the project's bundle from GET /api/v1/export, written as it arrives.
`heyaira import FILE`: a bundle sent to POST /api/v1/import, into the profile's own project.

The REST API takes the project API keys that the MCP endpoint takes; an OAuth token is bound to
the MCP resource alone, so an OAuth profile cannot export or import. To export, the key must be
an owner's or an admin's with the `audit:read` scope (the bundle holds the audit log); to
import, an owner's with `continuity:write`, for a project that holds no records yet."""

from __future__ import annotations

import json
from typing import Any, BinaryIO

import httpx2

from heyaira_client.errors import CredentialRefused, HeyAiraClientError, ProfileError, ToolError
from heyaira_client.profile import Profile, credential_source

TRAILER = b'"record":"trailer"}'


class IncompleteBundle(HeyAiraClientError):
    """The download ended before the bundle's trailer: the file is not a whole bundle."""

    exit_code = 6


def api_base(profile: Profile) -> str:
    """The server's REST base from the profile's MCP URL (…/mcp -> …/api/v1)."""
    url = profile.url.rstrip("/")
    return (url.removesuffix("/mcp") if url.endswith("/mcp") else url) + "/api/v1"


def _headers(profile: Profile, doing: str) -> dict[str, str]:
    source = credential_source(profile)
    if source.kind == "oauth":
        raise ProfileError(
            f"profile {profile.name} signs in with OAuth, whose tokens are for /mcp only: "
            f"{doing} with a profile that uses a project API key (env: or file:)"
        )
    return {"Authorization": f"Bearer {source.bearer()}"}


def import_bundle(
    profile: Profile, bundle: BinaryIO, *, dry_run: bool = False, timeout: float = 600.0
) -> dict[str, Any]:
    """Send the bundle (a file: its length goes with it, and it is read as it is sent);
    returns the server's report."""
    headers = {**_headers(profile, "import"), "Content-Type": "application/x-ndjson"}
    params = {"dry_run": "true"} if dry_run else {}
    with httpx2.Client(timeout=timeout) as http:
        answer = http.post(
            api_base(profile) + "/import", content=bundle, headers=headers, params=params
        )
    if answer.status_code not in (200, 201):
        _refused(answer)
    report: dict[str, Any] = answer.json()
    return report


def export_bundle(profile: Profile, out: BinaryIO, *, timeout: float = 600.0) -> int:
    """Stream the bundle into `out`; returns the bytes written."""
    headers = _headers(profile, "export")
    written, last = 0, b""
    with (
        httpx2.Client(timeout=timeout) as http,
        http.stream("GET", api_base(profile) + "/export", headers=headers) as answer,
    ):
        if answer.status_code != 200:
            _refused(answer)
        for chunk in answer.iter_bytes():
            out.write(chunk)
            written += len(chunk)
            last = (last + chunk)[-64:]
    if not last.rstrip(b"\n").endswith(TRAILER):
        raise IncompleteBundle(f"the download ended after {written} bytes, before the trailer")
    return written


def _refused(answer: httpx2.Response) -> None:
    answer.read()
    try:
        error = json.loads(answer.content)["error"]
        code, message = str(error["code"]), str(error["message"])
    except (ValueError, KeyError, TypeError):
        raise HeyAiraClientError(f"the server answered HTTP {answer.status_code}") from None
    if answer.status_code == 401:
        raise CredentialRefused(f"{code}: {message}")
    raise ToolError(code, message, error)
