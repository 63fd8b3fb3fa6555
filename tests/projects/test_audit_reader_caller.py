"""An auditor's Caller (projects.audit_log.audit_reader) holds READ_AUDIT alone: the audit log's
operations serve it and every other operation refuses it, each refusal audited. No Caller can be
built holding more than that outside a membership."""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import replace
from typing import Any

import pytest

from audit.models import AuditEvent
from core.access import Capability, Credential, CredentialKind
from core.errors import Forbidden
from core.operations import Operation
from projects.audit_log import audit_reader
from projects.auditors import auditor_grant
from projects.callers import operator_caller
from tests.factories import World, make_user

pytestmark = pytest.mark.django_db

APPS = ("audit", "continuity", "core", "identity", "projects", "web")
AUDIT_READS = {"audit_list", "audit_chain", "audit_browse", "audit_event_view", "audit_export"}


def every_operation() -> dict[str, Operation[..., Any, Any]]:
    """Every Operation the project defines, found by importing each module of its apps."""
    found: dict[str, Operation[..., Any, Any]] = {}
    for app in APPS:
        package = importlib.import_module(app)
        for module in pkgutil.walk_packages(package.__path__, f"{app}."):
            if ".migrations" in module.name or ".management" in module.name:
                continue
            for value in vars(importlib.import_module(module.name)).values():
                if isinstance(value, Operation):
                    found[value.name] = value
    return found


def test_an_auditors_caller_reads_the_audit_log_and_every_other_operation_refuses_it(
    world: World,
):
    auditor = make_user("audrey")
    auditor_grant(operator_caller(world.alpha), user_id=auditor.pk)
    caller = audit_reader(auditor, "alpha")
    assert caller is not None
    assert caller.role is None
    assert caller.capabilities == {Capability.READ_AUDIT}

    operations = every_operation()
    assert {name for name, op in operations.items() if op.capability == Capability.READ_AUDIT} == (
        AUDIT_READS
    )
    others = sorted(set(operations) - AUDIT_READS)
    assert len(others) > 20, others  # the walk found the continuity and project operations
    for name in others:
        with pytest.raises(Forbidden):
            operations[name].call(caller, {})
        refused = AuditEvent.objects.filter(operation=name, actor_label="audrey").get()
        assert (refused.outcome, refused.error_code) == ("rejected", "forbidden"), name
    assert operations["audit_list"](caller, limit=1)["events"]


def test_no_one_without_the_rule_gets_an_audit_reader(world: World):
    assert audit_reader(world.viewer, "alpha") is None  # a member without READ_AUDIT
    assert audit_reader(world.outsider, "alpha") is None
    assert audit_reader(make_user("audrey"), "alpha") is None
    assert audit_reader(world.owner, "beta") is None
    owner = audit_reader(world.owner, "alpha")
    assert owner is not None
    assert owner.capabilities == {Capability.READ_AUDIT}  # the audit pages' Caller, even for owners


def test_no_caller_holds_more_than_read_audit_outside_a_membership(world: World):
    caller = audit_reader(world.owner, "alpha")
    assert caller is not None
    for capability in set(Capability) - {Capability.READ_AUDIT}:
        with pytest.raises(ValueError, match="no grant outside a membership"):
            replace(caller, grants=frozenset({capability}))
    with pytest.raises(ValueError, match="signed-in person"):
        replace(caller, credential=Credential(kind=CredentialKind.API_KEY, id="k"))
    with pytest.raises(ValueError, match="a role or a grant"):
        replace(caller, grants=frozenset())
