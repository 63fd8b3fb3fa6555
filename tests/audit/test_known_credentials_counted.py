"""Rejections of credentials that exist (a revoked or expired key, an expired token, a wrong
password for an account) are counted, not stored one by one: the first of each (credential,
reason) per window is an audit row naming the credential and its project, every one is counted
exactly, and a new window starts with a row again. tests/audit/test_known_credentials_live.py
does it with 10,000 requests to a real server."""

from __future__ import annotations

import datetime as dt
import io
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db.models import Sum
from django.test import Client
from django.utils import timezone

from audit import noise
from audit.models import AnonymousRejection, AuditEvent, CountedEvent
from audit.recorder import fingerprint
from identity.models import AccessToken
from projects.api_keys import api_key_create, api_key_revoke
from projects.callers import operator_caller
from projects.models import ApiKey
from tests.factories import World
from tests.identity.conftest import signed_in
from tests.identity.flows import API, bearer, register, tokens_for

pytestmark = pytest.mark.django_db


def _key(world: World) -> tuple[str, ApiKey]:
    issued = api_key_create(
        operator_caller(world.alpha),
        user_id=world.contributor.pk,
        label="ci",
        scopes=["continuity:read"],
    )
    return issued.secret, issued.api_key


def _use(client: Client, secret: str, times: int) -> set[int]:
    return {
        client.get("/api/v1/identity", headers=bearer(secret)).status_code for _ in range(times)
    }


def _rows(reason: str) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(operation="authenticate", error_code=reason))


def _counted(reason: str) -> int:
    found = CountedEvent.objects.filter(operation="authenticate", reason=reason)
    return int(found.aggregate(total=Sum("count"))["total"] or 0)


def test_a_revoked_key_used_again_and_again_is_one_row_and_an_exact_count(world: World):
    secret, key = _key(world)
    api_key_revoke(operator_caller(world.alpha), api_key_id=key.pk)
    assert _use(Client(), secret, 200) == {401}
    rows = _rows("api_key_revoked")
    assert 1 <= len(rows) <= 2  # one per window: the run may cross into a second
    row = rows[0]
    assert (row.project_id, row.actor_id, row.credential_kind) == (
        world.alpha.pk,
        str(key.pk),
        "api_key",
    )
    assert row.credential_fingerprint == fingerprint(key.prefix)
    assert _counted("api_key_revoked") == 200
    buckets = CountedEvent.objects.filter(reason="api_key_revoked")  # one per window crossed
    assert {(bucket.chain, bucket.subject) for bucket in buckets} == {
        (str(world.alpha.pk), f"api_key:{fingerprint(key.prefix)}")
    }


def test_each_credential_and_reason_has_its_own_count(world: World):
    revoked, revoked_key = _key(world)
    api_key_revoke(operator_caller(world.alpha), api_key_id=revoked_key.pk)
    expired, expired_key = _key(world)
    ApiKey.objects.filter(pk=expired_key.pk).update(expires_at=timezone.now() - timedelta(days=1))
    client = Client()
    _use(client, revoked, 3)
    _use(client, expired, 4)
    assert len(_rows("api_key_revoked")) in (1, 2)  # 2: the test crossed into a new window
    assert len(_rows("api_key_expired")) in (1, 2)
    assert (_counted("api_key_revoked"), _counted("api_key_expired")) == (3, 4)


def test_an_expired_token_is_counted_too(world: World):
    api = Client(enforce_csrf_checks=True)
    tokens = tokens_for(signed_in(world.owner), register(api), world.alpha, resource=API)
    AccessToken.objects.filter(project__isnull=False).update(
        expires=timezone.now() - timedelta(seconds=1)
    )
    assert _use(api, tokens["access_token"], 25) == {401}
    rows = _rows("token_expired")
    assert len(rows) in (1, 2)
    row = rows[0]
    assert (row.project_id, row.user_id) == (world.alpha.pk, world.owner.pk)
    assert _counted("token_expired") == 25


def test_a_new_window_starts_with_a_row_again(world: World, monkeypatch):
    secret, key = _key(world)
    api_key_revoke(operator_caller(world.alpha), api_key_id=key.pk)
    client = Client()
    _use(client, secret, 5)
    later = noise.window_of(timezone.now()) + dt.timedelta(seconds=noise.WINDOW_SECONDS)
    monkeypatch.setattr(noise, "window_of", lambda moment: later)
    _use(client, secret, 5)
    assert len(_rows("api_key_revoked")) == 2
    assert CountedEvent.objects.filter(reason="api_key_revoked").count() == 2
    assert _counted("api_key_revoked") == 10


def test_wrong_passwords_are_one_row_per_account_and_an_exact_count(world: World, settings):
    settings.HEYAIRA_SIGN_IN_FAILURES_PER_WINDOW = 50
    client = Client()
    for _ in range(8):
        client.post("/accounts/login/", {"username": "olivia", "password": "nope-Nope-1"})
    for name in ("nobody", "olivia-typo", "my-password-in-the-wrong-box"):
        client.post("/accounts/login/", {"username": name, "password": "nope-Nope-1"})
    rows = AuditEvent.objects.filter(operation="sign_in", error_code="invalid_credentials")
    named = rows.filter(user_id=world.owner.pk)
    assert named.count() in (1, 2)  # 2: the test crossed into a new window
    assert rows.count() - named.count() in (1, 2)  # and one for the names that are nobody's
    counted = CountedEvent.objects.filter(subject=f"user:{world.owner.pk}")
    assert counted.aggregate(total=Sum("count"))["total"] == 8
    # Unknown names are anonymous noise, counted per network, never stored.
    unknown = AnonymousRejection.objects.filter(reason="invalid_credentials")
    assert unknown.aggregate(total=Sum("count"))["total"] == 3
    assert not AuditEvent.objects.filter(actor_label__contains="typo").exists()


def test_the_counts_are_in_audit_noise_and_the_admin(world: World, admin_client: Client):
    secret, key = _key(world)
    api_key_revoke(operator_caller(world.alpha), api_key_id=key.pk)
    _use(Client(), secret, 7)
    out = io.StringIO()
    call_command("audit_noise", stdout=out)
    subject = f"api_key:{fingerprint(key.prefix)}"
    assert f"{world.alpha.pk}\t{subject}\tauthenticate\tapi_key_revoked\t7\t" in out.getvalue()
    page = admin_client.get("/admin/audit/countedevent/").content.decode()
    assert subject in page
    assert "api_key_revoked" in page
