"""Anonymous registration cannot grow the database without bound: a cap on clients that never
obtained a token, and their removal after HEYAIRA_UNUSED_CLIENT_HOURS."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

from django.core.management import call_command
from django.test import Client, override_settings
from django.utils import timezone

from audit.models import AnonymousRejection, AuditEvent
from identity.models import AccessToken, Application
from tests.factories import World
from tests.identity.conftest import signed_in
from tests.identity.flows import REDIRECT_URI, register, register_raw, tokens_for


def registered_ago(client_id: str, hours: float) -> None:
    Application.objects.filter(client_id=client_id).update(
        created=timezone.now() - timedelta(hours=hours)
    )


@override_settings(HEYAIRA_UNUSED_CLIENTS_MAX=2)
def test_it_refuses_registrations_past_the_cap_on_unused_clients(api: Client):
    register(api, address="192.0.2.1")
    register(api, address="198.51.100.1")  # another network: the cap is overall

    refused = register_raw(api, {"redirect_uris": [REDIRECT_URI]}, address="203.0.113.1")
    again = register_raw(api, {"redirect_uris": [REDIRECT_URI]}, address="203.0.113.1")

    assert refused.status_code == again.status_code == 429
    assert refused.json()["error"] == "registration_cap"
    assert "retry later" in refused.json()["error_description"]
    # Room comes back when the oldest unused registration is removed (24 hours from now).
    assert 23 * 3600 < int(refused["Retry-After"]) <= 24 * 3600
    assert Application.objects.count() == 2
    counted = AnonymousRejection.objects.get(reason="registration_cap")
    assert counted.count == 2
    rows = AuditEvent.objects.filter(error_code="registration_cap")
    assert rows.count() == 1  # counted, not a row per refusal


@override_settings(HEYAIRA_UNUSED_CLIENTS_MAX=2)
def test_clients_that_obtained_a_token_do_not_count(world: World, api: Client):
    used = register(api)
    tokens_for(signed_in(world.owner), used, world.alpha)
    register(api)

    assert register_raw(api, {"redirect_uris": [REDIRECT_URI]}).status_code == 201
    assert register_raw(api, {"redirect_uris": [REDIRECT_URI]}).status_code == 429


@override_settings(HEYAIRA_UNUSED_CLIENTS_MAX=2, HEYAIRA_UNUSED_CLIENT_HOURS=24)
def test_it_makes_room_by_removing_stale_unused_clients(api: Client):
    stale = register(api)
    register(api)
    registered_ago(stale.client_id, 25)

    response = register_raw(api, {"redirect_uris": [REDIRECT_URI]})

    assert response.status_code == 201
    assert not Application.objects.filter(client_id=stale.client_id).exists()
    assert Application.objects.count() == 2


@override_settings(HEYAIRA_UNUSED_CLIENT_HOURS=24)
def test_the_purge_command_removes_only_stale_unused_registrations(world: World, api: Client):
    stale = register(api)
    young = register(api)
    used = register(api)
    tokens_for(signed_in(world.owner), used, world.alpha)
    manual = Application.objects.create(
        name="operator's own",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=REDIRECT_URI,
    )
    for client_id in (stale.client_id, used.client_id, manual.client_id):
        registered_ago(client_id, 48)
    registered_ago(young.client_id, 23)

    output = StringIO()
    call_command("purge_oauth", stdout=output)

    remaining = set(Application.objects.values_list("client_id", flat=True))
    assert remaining == {young.client_id, used.client_id, manual.client_id}
    assert "Removed 1 clients" in output.getvalue()
    # Its registration token went with it.
    assert not AccessToken.objects.filter(application__client_id=stale.client_id).exists()
