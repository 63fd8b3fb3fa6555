"""Events counted instead of stored row by row: anonymous rejections, a known actor's repeats.

**Anonymous rejections** (`count_rejection`). A bogus bearer on /mcp, a made-up `hak_` key on
/api, a sign-in POST without a CSRF token, a failed token request from nobody in particular, a
sign-in attempt from a locked-out network, a body over its cap: anyone can send these as fast
as the network allows, and a row each would let them grow the audit log (and bury what matters)
at will. Each is counted in one row per (time window, source, operation, reason): one upsert
per request. Only the first of each such bucket also gets an audit row (in the security chain,
never a project's), so a flood adds one row per source and reason per window, however fast it
comes. Bounded: a window holds at most MAX_SOURCES_PER_WINDOW rows for named sources; past that,
new sources count under OVERFLOW_SOURCE (one row per operation and reason). A source is the
client's network (core.networks: the address for IPv4, the /64 for IPv6), as for every rate
limit.

**A known actor's repeats** (`count_event`). A revoked or expired key or token used again and
again, wrong passwords for one account, a person's page views: each names someone, but a row
per repeat would grow a project's chain without bound (a leaked revoked key) or bury its
writes (every page view). They are counted per (window, chain, subject, operation, reason), and
the first of each bucket is an audit event in that chain, so the log shows who, what and when
it began, and the count exactly how often. Bounded by the actors and pages that exist.

Operators see both in the admin (Audit: "Anonymous rejections", "Counted events") and with
`manage.py audit_noise`, which also purges old windows.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db import connection
from django.utils import timezone

from audit.chain import chain_of
from audit.models import AnonymousRejection, CountedEvent
from core.networks import UNKNOWN_NETWORK, client_network

WINDOW_SECONDS = 600
MAX_SOURCES_PER_WINDOW = 1000
OVERFLOW_SOURCE = "other"
UNKNOWN_SOURCE = UNKNOWN_NETWORK


def _upsert_statement(table: str, key: tuple[str, ...]) -> str:
    """One statement on PostgreSQL and SQLite alike: a new bucket, or one more in it. The count
    it returns is 1 only for a bucket this call created."""
    columns = ", ".join((*key, "count", "first_at", "last_at"))
    values = ", ".join(["%s"] * len(key) + ["1", "%s", "%s"])
    return (
        f"INSERT INTO {table} ({columns}) VALUES ({values}) "  # noqa: S608
        f"ON CONFLICT ({', '.join(key)}) "
        f"DO UPDATE SET count = {table}.count + 1, last_at = excluded.last_at "
        "RETURNING count"
    )


_NOISE_KEY = ("window_start", "source", "operation", "reason")
_NOISE_UPSERT = _upsert_statement(AnonymousRejection._meta.db_table, _NOISE_KEY)
_COUNTED_KEY = ("window_start", "chain", "subject", "operation", "reason")
_COUNTED_UPSERT = _upsert_statement(CountedEvent._meta.db_table, _COUNTED_KEY)


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
    count = _noise(window, source, operation, reason, now)
    if count == 1 and source != OVERFLOW_SOURCE:
        named = AnonymousRejection.objects.filter(window_start=window).exclude(
            source=OVERFLOW_SOURCE
        )
        if named.count() > MAX_SOURCES_PER_WINDOW:
            # Over the bound: this new source counts with the overflow instead.
            named.filter(source=source, operation=operation, reason=reason).delete()
            count = _noise(window, OVERFLOW_SOURCE, operation, reason, now)
    return count == 1


def count_event(*, project_id: object, subject: str, operation: str, reason: str) -> bool:
    """Count one repeat of a known actor's event (a rejection of a known credential, a page
    view). True when it is the first of its bucket: the caller then writes it as an audit
    event, in the chain of `project_id` (None: the security chain)."""
    now = timezone.now()
    key: list[str | dt.datetime] = [window_of(now), chain_of(project_id), subject[:64]]
    key += [operation[:64], reason[:64]]
    return _upsert(_COUNTED_UPSERT, key, now) == 1


def _noise(window: dt.datetime, source: str, operation: str, reason: str, now: dt.datetime) -> int:
    return _upsert(_NOISE_UPSERT, [window, source[:64], operation[:64], reason[:32]], now)


def _upsert(statement: str, key: list[str | dt.datetime], now: dt.datetime) -> int:
    when = connection.ops.adapt_datetimefield_value
    values: list[Any] = [when(v) if isinstance(v, dt.datetime) else v for v in key]
    with connection.cursor() as cursor:
        cursor.execute(statement, [*values, when(now), when(now)])
        row = cursor.fetchone()
    return int(row[0]) if row else 0


def purge(older_than: dt.timedelta) -> int:
    """Drop the counts of windows that ended more than `older_than` ago; returns how many."""
    cutoff = timezone.now() - older_than
    deleted, _ = AnonymousRejection.objects.filter(window_start__lt=cutoff).delete()
    counted, _ = CountedEvent.objects.filter(window_start__lt=cutoff).delete()
    return deleted + counted
