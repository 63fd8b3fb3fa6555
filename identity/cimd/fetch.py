"""Fetching a client ID metadata document safely (DOT's CIMD_METADATA_FETCHER).

- https only, to a public address (identity.cimd.addresses), resolved once: the connection
  goes to that very address, with the certificate checked against the URL's host name, so a
  second DNS answer cannot redirect it (no time-of-check/time-of-use rebinding);
- no redirects, no content encodings, at most CIMD_MAX_DOCUMENT_SIZE bytes (5 KB), within
  CIMD_FETCH_TIMEOUT_SECONDS in all (3 s), whatever the number of addresses;
- certificates checked against the system's trust store, or HEYAIRA_CIMD_CA_BUNDLE's;
- cached for the document's Cache-Control max-age, between CIMD_METADATA_MIN_AGE_SECONDS and
  CIMD_METADATA_MAX_AGE_SECONDS (no max-age, no-cache or no-store: the minimum);
- the pooled database connection is handed back while waiting on the network.

DOT upserts the Application from what this returns; every check it makes is made here first,
so that a refusal says why (identity.cimd.refusals).
"""

from __future__ import annotations

import json
import re
import ssl
import time
from functools import lru_cache
from typing import Any

import urllib3
from django.conf import settings
from django.db import connection
from oauth2_provider.cimd import CIMDError
from oauth2_provider.settings import oauth2_settings

from identity import audit
from identity.cimd import refusals
from identity.cimd.addresses import resolve
from identity.cimd.document import check_document, parse_client_id
from identity.cimd.refusals import Refused

MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*\"?(\d+)\"?\s*(?:,|$)", re.IGNORECASE)
JSON_TYPE = re.compile(r"application/(?:[\w.+-]+\+)?json", re.IGNORECASE)


class PinnedFetcher:
    """DOT's fetcher interface: fetch(client_id) -> (document, max_age) or CIMDError."""

    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        try:
            return fetch_document(client_id)
        except Refused as refused:
            refusals.remember(client_id, refused.code)
            audit.note(cimd_refusal=refused.code)
            raise CIMDError(str(refused)) from None


def fetch_document(client_id: str) -> tuple[dict[str, Any], int]:
    url = parse_client_id(client_id)
    assert url.hostname is not None
    port = url.port or 443
    addresses = resolve(url.hostname, port)
    if not connection.in_atomic_block:
        # Hand the pooled connection back while the network answers (it may take seconds);
        # the next query takes one again.
        connection.close()
    path = url.path + (f"?{url.query}" if url.query else "")
    deadline = time.monotonic() + oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS
    failure = Refused("cimd_unreachable", "out of time")
    for address in addresses:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        try:
            document, max_age = _get(address, port, url.hostname, url.netloc, path, remaining)
        except urllib3.exceptions.SSLError as error:
            failure = Refused("cimd_tls_failed", str(error)[:200])
        except urllib3.exceptions.HTTPError as error:
            failure = Refused("cimd_unreachable", str(error)[:200])
        else:
            check_document(document, client_id)
            return document, max_age
    raise failure


def _get(
    address: str, port: int, hostname: str, netloc: str, path: str, timeout: float
) -> tuple[dict[str, Any], int]:
    # Connect to the address judged above; SNI and certificate checks use the URL's host.
    pool = urllib3.HTTPSConnectionPool(
        host=address,
        port=port,
        timeout=urllib3.Timeout(connect=timeout, read=timeout, total=timeout),
        retries=False,
        maxsize=1,
        ssl_context=_tls_context(settings.HEYAIRA_CIMD_CA_BUNDLE),
        server_hostname=hostname,
    )
    try:
        response = pool.urlopen(
            "GET",
            path,
            headers={
                "Host": netloc,
                "Accept": "application/json",
                "Accept-Encoding": "identity",
                "User-Agent": "HeyAira (client ID metadata document fetch)",
            },
            redirect=False,
            preload_content=False,
            decode_content=False,
        )
        try:
            return _read(response)
        finally:
            response.release_conn()
    finally:
        pool.close()


def _read(response: urllib3.BaseHTTPResponse) -> tuple[dict[str, Any], int]:
    if 300 <= response.status < 400:
        raise Refused("cimd_redirect", f"HTTP {response.status}")
    if response.status != 200:
        raise Refused("cimd_http_status", f"HTTP {response.status}")
    media_type = response.headers.get("Content-Type", "").split(";")[0].strip()
    if not JSON_TYPE.fullmatch(media_type):
        raise Refused("cimd_not_json", f"Content-Type {media_type[:80]!r}")
    if response.headers.get("Content-Encoding", "identity").strip().lower() != "identity":
        raise Refused("cimd_not_json", "a content encoding was used")
    limit = oauth2_settings.CIMD_MAX_DOCUMENT_SIZE
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > limit:
        raise Refused("cimd_too_large", f"{declared} bytes")
    body = response.read(limit + 1, decode_content=False)
    if len(body) > limit:
        raise Refused("cimd_too_large", f"over {limit} bytes")
    try:
        document = json.loads(body)
    except ValueError:
        raise Refused("cimd_not_json", "not JSON") from None
    if not isinstance(document, dict):
        raise Refused("cimd_not_json", "not a JSON object")
    return document, max_age(response.headers.get("Cache-Control", ""))


def max_age(cache_control: str) -> int:
    """How long to keep the document: its max-age, within the configured bounds."""
    floor = oauth2_settings.CIMD_METADATA_MIN_AGE_SECONDS
    ceiling = oauth2_settings.CIMD_METADATA_MAX_AGE_SECONDS
    lowered = cache_control.lower()
    match = MAX_AGE.search(cache_control)
    if "no-store" in lowered or "no-cache" in lowered or match is None:
        return int(floor)
    return int(max(floor, min(int(match.group(1)), ceiling)))


@lru_cache(maxsize=4)
def _tls_context(ca_bundle: str) -> ssl.SSLContext:
    """Certificates and host names checked; the operator's CA bundle replaces the system's."""
    context = ssl.create_default_context(cafile=ca_bundle or None)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context
