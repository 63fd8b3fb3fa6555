"""Anonymous noise is counted, not stored row by row: 10,000 rejections without a valid
credential (bogus bearer on /mcp, bogus hak_ key on /api, sign-in POSTs without CSRF, failed
token requests, admin sign-ins from a locked-out address) add at most one audit row and one
counter row per (source, operation, reason) and window, and the operator still sees them all."""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.models import Sum
from django.test import Client

from audit import noise
from audit.models import AnonymousRejection, AuditEvent
from tests.continuity.mcp.inprocess import in_process_server

SOURCE = "203.0.113.9"
LIMIT = 3  # sign-in failures before the address is locked out
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
# Each flood may cross one window boundary: at most two buckets of each kind.
KINDS = 5
BOUND = 2 * KINDS

# The /mcp flood comes from several clients at once on PostgreSQL, as a real flood does (and
# each bogus request there waits on a new connection in the test set-up, no pool: in parallel
# they take a fraction of the time). SQLite's shared in-memory test database answers
# concurrent writers "unavailable" (locked): one client there. Fewer than the database
# executor's threads, so no request ever waits for one.
MCP_CLIENTS = 8 if connection.vendor == "postgresql" else 1

pytestmark = pytest.mark.django_db(transaction=True)


def _flood(count: int, send: Callable[[], int], status: int) -> None:
    statuses = {send() for _ in range(count)}
    assert statuses == {status}


def test_10000_bogus_requests_add_a_bounded_number_of_rows(settings, transactional_db):
    settings.HEYAIRA_SIGN_IN_FAILURES_PER_WINDOW = LIMIT
    plain, strict = Client(), Client(enforce_csrf_checks=True)
    for _ in range(LIMIT):  # the lockout: LIMIT failed sign-ins (counted), then one throttle row
        plain.post("/admin/login/", {"username": "x", "password": "y"}, REMOTE_ADDR=SOURCE)
    rows_before = AuditEvent.objects.count()

    with in_process_server() as server:
        bogus = {"authorization": "Bearer not-a-token", "content-type": "application/json"}
        statuses = server.post_many(INITIALIZE, bogus, 2500, concurrency=MCP_CLIENTS)
        assert len(statuses) == 2500
        assert set(statuses) == {401}
    key = "Bearer hak_abcdefgh_" + "x" * 43
    _flood(
        2500,
        lambda: (
            plain.get("/api/v1/identity", HTTP_AUTHORIZATION=key, REMOTE_ADDR=SOURCE).status_code
        ),
        401,
    )
    sign_in = {"username": "olivia", "password": "guess"}
    _flood(
        2000, lambda: strict.post("/accounts/login/", sign_in, REMOTE_ADDR=SOURCE).status_code, 403
    )
    grant = {"grant_type": "authorization_code", "code": "nope", "client_id": "nobody"}
    _flood(2000, lambda: plain.post("/oauth/token/", grant, REMOTE_ADDR=SOURCE).status_code, 401)
    _flood(
        1000,
        lambda: plain.post("/admin/login/", sign_in, REMOTE_ADDR=SOURCE).status_code,
        200,  # the admin's form again, with its error
    )

    # If the sign-in throttle's 15-minute window ended during the run, LIMIT of the flood's
    # admin sign-ins were checked again (wrong passwords for a name that is nobody's: counted
    # as such, not as throttled) before the next lockout (one more row).
    lockouts = AuditEvent.objects.filter(error_code="sign_in_throttled").count()
    assert lockouts in (1, 2)  # the lockout is recorded once; its attempts are only counted
    added = AuditEvent.objects.count() - rows_before
    assert added <= BOUND + (2 if lockouts == 2 else 0), added
    assert AuditEvent.objects.filter(project_id__isnull=False, outcome="rejected").count() == 0
    assert AnonymousRejection.objects.count() <= BOUND + 2
    total = AnonymousRejection.objects.aggregate(total=Sum("count"))["total"]
    assert total == 10_000 + LIMIT  # the flood and the failures that locked the address
    counted = {(row.source, row.operation, row.reason) for row in AnonymousRejection.objects.all()}
    assert counted == {
        ("127.0.0.1", "authenticate", "invalid_token"),
        (SOURCE, "authenticate", "invalid_api_key"),
        (SOURCE, "csrf_rejected", "csrf_failed"),
        (SOURCE, "oauth_code_exchange", "invalid_client"),
        (SOURCE, "sign_in", "sign_in_throttled"),
        (SOURCE, "sign_in", "invalid_credentials"),  # the wrong passwords that locked it
    }

    out = io.StringIO()
    call_command("audit_noise", stdout=out)
    # The key flood's count, summed over half-hour windows: the run may cross into the next.
    anonymous = out.getvalue().split("\n\n")[0].splitlines()[1:]
    rows = [line.split("\t") for line in anonymous]
    flood = [int(row[4]) for row in rows if row[1:4] == [SOURCE, "authenticate", "invalid_api_key"]]
    assert sum(flood) == 2500, anonymous
    assert 1 <= len(flood) <= 2, anonymous


def test_a_window_holds_a_bounded_number_of_sources(monkeypatch, transactional_db):
    monkeypatch.setattr(noise, "MAX_SOURCES_PER_WINDOW", 20)
    firsts = sum(
        noise.count_rejection("authenticate", "invalid_token", f"198.51.100.{n}") for n in range(60)
    )
    sources = set(AnonymousRejection.objects.values_list("source", flat=True))
    assert len(sources) <= 20 + 1
    assert noise.OVERFLOW_SOURCE in sources
    assert firsts == len(sources)  # one audit row may follow each new bucket, no more
    assert AnonymousRejection.objects.aggregate(total=Sum("count"))["total"] == 60


def test_it_counts_an_ipv6_host_per_64(transactional_db):
    for host in ("2001:db8:1:2::1", "2001:db8:1:2::ffff", "2001:db8:1:2:aaaa::9"):
        noise.count_rejection("authenticate", "invalid_token", host)
    [row] = AnonymousRejection.objects.all()
    assert (row.source, row.count) == ("2001:db8:1:2::/64", 3)


def test_the_operator_sees_the_counts_in_the_admin(transactional_db, admin_client: Client):
    noise.count_rejection("authenticate", "invalid_token", SOURCE)
    page = admin_client.get("/admin/audit/anonymousrejection/")
    assert page.status_code == 200
    assert SOURCE in page.content.decode()
