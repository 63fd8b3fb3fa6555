"""Small HTTP helpers shared by the OAuth views."""

from __future__ import annotations

import base64
import binascii
import json
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from django.http import HttpRequest, HttpResponse


def no_store(response: HttpResponse) -> HttpResponse:
    """Token and registration answers carry credentials: no cache may keep them."""
    response["Cache-Control"] = "no-store"
    response["Pragma"] = "no-cache"
    return response


def with_iss(url: str, issuer: str) -> str:
    """RFC 9207: every authorization response names the issuer, errors included (DOT adds it
    to successful responses only)."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    if any(name == "iss" for name, _ in query):
        return url
    return urlunsplit(parts._replace(query=urlencode([*query, ("iss", issuer)])))


def token_request_client_id(request: HttpRequest) -> str:
    """The client a token request claims to come from (body, or HTTP Basic), for the audit log."""
    client_id = request.POST.get("client_id", "")
    header = request.headers.get("Authorization", "")
    if not client_id and header[:6].lower() == "basic ":
        try:
            decoded = base64.b64decode(header[6:], validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            return ""
        client_id = unquote(decoded.partition(":")[0])
    return client_id[:100]


def json_error(body: bytes) -> str:
    """The `error` member of an OAuth JSON error body, or ""."""
    try:
        data = json.loads(body)
    except ValueError:
        return ""
    value = data.get("error") if isinstance(data, dict) else None
    return value if isinstance(value, str) else ""
