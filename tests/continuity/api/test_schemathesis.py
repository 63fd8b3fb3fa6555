"""Schemathesis against /api/schema/: every operation, valid and invalid data, every default
check (no 500, responses and statuses as the schema says, negative data refused), with an API
key, through the real WSGI application.

One default check is narrowed, not dropped: "schema-valid data is accepted" also allows a 400
whose `fields` name only rules that no schema can state (a cursor this server did not issue, a
repository not bound to the project, a decision already superseded, a refusal text as a running
summary). Any other 400 for schema-valid data still fails.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import GenerationMode
from schemathesis.specs.openapi.checks import positive_data_acceptance

from heyaira.wsgi import application
from tests.continuity.api.helpers import api_key
from tests.factories import World

EXAMPLES = 25


def served_as_testserver(environ: dict[str, Any], start_response: Any) -> Any:
    """The application as the tests' ALLOWED_HOSTS know it (Schemathesis says localhost)."""
    environ["HTTP_HOST"] = "testserver"
    return application(environ, start_response)


# Input rules the server checks against its data, which a schema cannot describe.
BEYOND_THE_SCHEMA = frozenset({"cursor", "repository_ref.repository", "supersedes", "body"})


@pytest.fixture
def api_schema() -> Any:
    """Loaded when the test runs, not when it is collected: Schemathesis builds each
    operation's boundary cases as it loads them (about 20 s of CPU), which every xdist worker
    would otherwise pay at collection. The operations run as subtests of one test, each
    reported on its own."""
    loaded = schemathesis.openapi.from_wsgi("/api/schema/", served_as_testserver)
    loaded.config.generation.update(
        modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE],
        max_examples=EXAMPLES,
        deterministic=True,
        database="none",
    )
    # RFC 6585: an update without its precondition (If-Match) is 428 Precondition Required.
    missing_header = loaded.config.checks.missing_required_header
    missing_header.expected_statuses = [*missing_header.expected_statuses, "428"]
    return loaded


schema = schemathesis.pytest.from_fixture("api_schema")


@schemathesis.serializer("application/x-ndjson")
def bundle_lines(ctx: Any, value: Any) -> bytes:
    """The import's body, a bundle of JSON Lines: what is generated goes as its text (a
    generated string is no valid bundle, so the server's answer is a 400 naming the body)."""
    text = value if isinstance(value, str | bytes) else json.dumps(value)
    return text.encode() if isinstance(text, str) else text


@schemathesis.check
def schema_valid_data_is_accepted(ctx: Any, response: Any, case: Any) -> bool | None:
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return None
    if response.status_code == 400:
        fields = set(response.json()["error"].get("fields", {}))
        if fields and fields <= BEYOND_THE_SCHEMA:
            return None
    return positive_data_acceptance(ctx, response, case)


@pytest.fixture
def secret(transactional_db: None, world: World) -> str:
    # Committed: requests authenticate on the database executor's own connections.
    return api_key(world, "owner")


@pytest.mark.django_db(transaction=True)
@schema.parametrize()
@settings(suppress_health_check=list(HealthCheck), deadline=None)
def test_every_operation_holds_to_its_schema(case: Any, secret: str) -> None:
    case.call_and_validate(
        headers={"Authorization": f"Bearer {secret}"},
        excluded_checks=[positive_data_acceptance],
        additional_checks=[schema_valid_data_is_accepted],
    )
