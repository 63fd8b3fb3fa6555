from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.db import connection

from audit import triggers
from audit.models import AuditChainHead, AuditEvent
from continuity.models import Memory
from projects.callers import operator_caller
from projects.models import Project, Repository
from projects.services import project_delete
from tests.continuity.bundle.projects import fill
from tests.factories import World
from tests.live import asgi_server  # noqa: F401  (the live-server fixture)


def export_bytes(slug: str) -> bytes:
    out = io.StringIO()
    call_command("project_export", slug, stdout=out)
    return out.getvalue().encode()


def vanish(project: Project) -> None:
    """The project and its audit chain gone, as if the bundle went to another instance (an
    operator's database surgery: the audit triggers are lifted for it)."""
    chain = str(project.pk)
    archive = project.audit_archive  # the chains of the project a bundle came from, if any
    # Superseded memories are PROTECTed: project_delete alone refuses such a project.
    Memory.objects.filter(project=project).update(supersedes=None)
    project_delete(operator_caller(project), confirm_slug=project.slug)
    triggers.uninstall(connection)
    try:
        with connection.cursor() as cursor:
            # Its first chain and the later ones of an imported project (audit.chain).
            for table in ("audit_auditevent", "audit_auditchainhead"):
                for first in filter(None, (chain, archive)):
                    cursor.execute(
                        f"DELETE FROM {table} WHERE chain = %s OR chain LIKE %s",  # noqa: S608
                        [first, f"{first}.%"],
                    )
        Repository.objects.filter(bindings__isnull=True).delete()
    finally:
        triggers.install(connection)
    assert not AuditEvent.objects.filter(chain__startswith=chain).exists()
    assert not AuditChainHead.objects.filter(chain__startswith=chain).exists()


@pytest.fixture
def small(world: World) -> World:
    """alpha with a little of everything."""
    fill(world.caller("owner"), memories=10, tasks=6, audit_events=60)
    return world


@pytest.fixture
def full(world: World) -> World:
    """alpha with every record type at the sizes the issue names."""
    fill(world.caller("owner"))
    return world
