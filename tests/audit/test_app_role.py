"""The application as a PostgreSQL role that owns nothing (docs/operating.md): with the grants
the docs give, it appends audit rows (the chain head is the trigger's, a SECURITY DEFINER), and
cannot UPDATE, DELETE or TRUNCATE them, move a chain head, nor lift a trigger."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from django.db import DatabaseError, transaction

from audit.models import AuditChainHead, AuditEvent
from tests.audit.helpers import security_event, sql

pytestmark = [pytest.mark.postgres]

# The grants of docs/operating.md, for the audit tables.
GRANTS = [
    "GRANT USAGE ON SCHEMA public TO {role}",
    "GRANT SELECT, INSERT ON audit_auditevent TO {role}",
    "GRANT SELECT ON audit_auditchainhead TO {role}",
    "GRANT SELECT, INSERT ON audit_auditverification, audit_auditcheckpoint TO {role}",
    "GRANT SELECT, INSERT, UPDATE, DELETE ON audit_anonymousrejection TO {role}",
    "GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {role}",
]

REFUSED = {
    "UPDATE": "UPDATE audit_auditevent SET error_code = 'x'",
    "DELETE": "DELETE FROM audit_auditevent",
    "TRUNCATE": "TRUNCATE audit_auditevent",
    "DISABLE TRIGGER": "ALTER TABLE audit_auditevent DISABLE TRIGGER audit_append_only",
    "DISABLE ALL TRIGGERS": "ALTER TABLE audit_auditevent DISABLE TRIGGER ALL",
    "DROP TRIGGER": "DROP TRIGGER audit_append_only ON audit_auditevent",
    "move a head": "UPDATE audit_auditchainhead SET seq = 0",
    "remove a head": "DELETE FROM audit_auditchainhead",
    "replace the chain function": "CREATE OR REPLACE FUNCTION audit_chain_append() "
    "RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$",
}


@pytest.fixture
def app_role(db: None) -> Iterator[str]:
    role = f"heyaira_app_test_{uuid.uuid4().hex[:12]}"
    sql(f'CREATE ROLE "{role}" NOLOGIN')
    try:
        for grant in GRANTS:
            sql(grant.format(role=f'"{role}"'))
        yield role
    finally:
        sql(f'DROP OWNED BY "{role}"')
        sql(f'DROP ROLE "{role}"')


def test_the_app_role_appends_to_the_chain(app_role: str):
    security_event(n=0)
    with transaction.atomic():
        sql(f'SET LOCAL ROLE "{app_role}"')
        security_event(n=1)
        sql("RESET ROLE")
    assert list(AuditEvent.objects.order_by("seq").values_list("seq", flat=True)) == [1, 2]
    assert AuditChainHead.objects.get().seq == 2


@pytest.mark.parametrize("what", list(REFUSED))
def test_the_app_role_cannot_change_remove_or_unguard_audit_rows(app_role: str, what: str):
    security_event(n=0)
    with pytest.raises(DatabaseError, match=r"permission denied|must be owner"):
        _as_role(app_role, REFUSED[what])
    assert AuditEvent.objects.count() == 1
    assert AuditChainHead.objects.get().seq == 1


def _as_role(role: str, statement: str) -> None:
    with transaction.atomic():
        sql(f'SET LOCAL ROLE "{role}"')
        sql(statement)
