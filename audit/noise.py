"""Rejections without a valid credential, counted instead of stored row by row.

A bogus bearer on /mcp, a made-up `hak_` key on /api, a sign-in POST without a CSRF token, a
failed token request from nobody in particular, a sign-in attempt from a locked-out address:
anyone can send these as fast as the network allows, and a row each would let them grow the
audit log (and bury what matters) at will. Each is counted in one row per (time window, source,
operation, reason): one upsert per request. Only the first of each such bucket also gets an
audit row (in the security chain, never a project's), so a flood adds one row per source and
reason per window, however fast it comes.

Bounded: a window holds at most MAX_SOURCES_PER_WINDOW rows for named sources; past that, new
sources count under OVERFLOW_SOURCE (one row per operation and reason). A source is the
client's network (core.networks: the address for IPv4, the /64 for IPv6), as for every rate
limit. Operators see the counts in the admin ("Anonymous rejections") and with
`manage.py audit_noise`, which also purges old windows.
"""

from __future__ import annotations

import datetime as dt

from django.db import connection
from django.utils import timezone

from audit.models import AnonymousRejection
from core.networks import UNKNOWN_NETWORK, client_network

WINDOW_SECONDS = 600
MAX_SOURCES_PER_WINDOW = 1000
OVERFLOW_SOURCE = "other"
UNKNOWN_SOURCE = UNKNOWN_NETWORK

_TABLE = AnonymousRejection._meta.db_table
# One statement on PostgreSQL and SQLite alike: a new bucket, or one more in it. The count it
# returns is 1 only for a bucket this call created, the one case that checks the bound.
_UPSERT = (
    f"INSERT INTO {_TABLE} (window_start, source, operation, reason, count, first_at, last_at) "  # noqa: S608
    "VALUES (%s, %s, %s, %s, 1, %s, %s) "
    "ON CONFLICT (window_start, source, operation, reason) "
    f"DO UPDATE SET count = {_TABLE}.count + 1, last_at = excluded.last_at "
    "RETURNING count"
)


def source_of(address: str) -> str:
    """The source a rejection is counted under: an IPv4 address, an IPv6 /64, or "unknown"."""
    return client_network(address)


def window_of(moment: dt.datetime) -> dt.datetime:
    start = int(moment.timestamp()) // WINDOW_SECONDS * WINDOW_SECONDS
    return dt.datetime.fromtimestamp(start, tz=dt.UTC)


def count_rejection(operation: str, reason: str, address: str) -> bool:
    """Count one rejection without a valid credential. True when it is the first of its
    bucket (window, source, operation, reason): the caller may then write its one audit row,
    so the log shows that it began (with its request id) and the counter how often."""
    now = timezone.now()
    window = window_of(now)
    source = source_of(address)
    count = _upsert(window, source, operation, reason, now)
    if count == 1 and source != OVERFLOW_SOURCE:
        named = AnonymousRejection.objects.filter(window_start=window).exclude(
            source=OVERFLOW_SOURCE
        )
        if named.count() > MAX_SOURCES_PER_WINDOW:
            # Over the bound: this new source counts with the overflow instead.
            named.filter(source=source, operation=operation, reason=reason).delete()
            count = _upsert(window, OVERFLOW_SOURCE, operation, reason, now)
    return count == 1


def _upsert(window: dt.datetime, source: str, operation: str, reason: str, now: dt.datetime) -> int:
    when = connection.ops.adapt_datetimefield_value
    values = [when(window), source[:64], operation[:64], reason[:32], when(now), when(now)]
    with connection.cursor() as cursor:
        cursor.execute(_UPSERT, values)
        row = cursor.fetchone()
    return int(row[0]) if row else 0


def purge(older_than: dt.timedelta) -> int:
    """Drop the counts of windows that ended more than `older_than` ago; returns how many."""
    cutoff = timezone.now() - older_than
    deleted, _ = AnonymousRejection.objects.filter(window_start__lt=cutoff).delete()
    return deleted
