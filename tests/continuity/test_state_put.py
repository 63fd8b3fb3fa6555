"""state_put and state_get: a running summary as immutable versions (docs/architecture.md)."""

from __future__ import annotations

from typing import Any

import pytest

from continuity.models import StateVersion
from continuity.selectors import state_get
from continuity.services import state_put
from core.access import Caller
from tests.continuity.helpers import as_json, audit_rows, last_audit, rejected
from tests.factories import World, wc

SUMMARY = "# Running summary\n## Goal\n- Ship the core\n## Done\n- Models\n## Pending\n- Tests"


def _put(caller: Caller, body: str = SUMMARY, agent: str = "codex", **extra: Any) -> Any:
    return as_json(state_put(caller, write_context=wc(caller), agent=agent, body=body, **extra))


def test_it_appends_the_first_version(world: World) -> None:
    contributor = world.caller("contributor")
    result = _put(contributor)
    assert result == {
        "agent": "codex",
        "version": 1,
        "chars": len(SUMMARY),
        "created_at": result["created_at"],
    }
    stored = StateVersion.objects.get()
    assert (stored.project, stored.agent, stored.version, stored.body, stored.author) == (
        world.alpha,
        "codex",
        1,
        SUMMARY,
        "carla",
    )
    event = last_audit(world.alpha)
    assert (event.operation, event.outcome, event.target_type, event.target_id) == (
        "state_put",
        "success",
        "state",
        "codex",
    )


def test_each_put_is_a_new_immutable_version(world: World) -> None:
    owner = world.caller("owner")
    _put(owner, SUMMARY)
    first = StateVersion.objects.values().get()
    second_body = SUMMARY + "\n- More tests"
    assert _put(owner, second_body)["version"] == 2
    assert StateVersion.objects.values().get(version=1) == first
    assert StateVersion.objects.count() == 2
    newest = as_json(state_get(world.caller("viewer"), agent="codex"))["state"]
    assert (newest["version"], newest["body"], newest["author"]) == (2, second_body, "olivia")


def test_each_agent_has_its_own_versions(world: World) -> None:
    owner = world.caller("owner")
    _put(owner, agent="codex")
    _put(owner, agent="codex")
    assert _put(owner, agent="claude")["version"] == 1
    assert as_json(state_get(owner, agent="codex"))["state"]["version"] == 2
    assert as_json(state_get(owner, agent="claude"))["state"]["version"] == 1


def test_it_appends_when_the_expected_version_is_current(world: World) -> None:
    owner = world.caller("owner")
    assert _put(owner, expected_version=0)["version"] == 1
    assert _put(owner, expected_version=1)["version"] == 2


@pytest.mark.parametrize(("existing", "expected"), [(0, 1), (2, 1), (2, 0), (1, 5)])
def test_it_rejects_a_stale_expected_version(world: World, existing: int, expected: int) -> None:
    owner = world.caller("owner")
    for _ in range(existing):
        _put(owner)
    error = rejected(
        "stale_version",
        state_put,
        owner,
        write_context=wc(owner),
        agent="codex",
        body=SUMMARY + "\n- new",
        expected_version=expected,
    )
    assert error.details == {"current_version": existing}
    assert StateVersion.objects.count() == existing
    event = last_audit(world.alpha)
    assert (event.operation, event.outcome, event.error_code) == (
        "state_put",
        "rejected",
        "stale_version",
    )


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"agent": ""}, "agent"),
        ({"agent": "has space"}, "agent"),
        ({"agent": ".hidden"}, "agent"),
        ({"agent": "a" * 101}, "agent"),
        ({"agent": "codex/other"}, "agent"),
        ({"body": ""}, "body"),
        ({"body": "# Running summary\n" + "x" * 24_000}, "body"),
        ({"body": "# Running summary\n- a\x00b"}, "body"),
        ({"body": ["# Running summary"]}, "body"),
        ({"expected_version": -1}, "expected_version"),
        ({"expected_version": "0"}, "expected_version"),
        ({"expected_version": 2**31}, "expected_version"),
    ],
)
def test_it_rejects_bad_arguments(world: World, arguments: dict[str, Any], field: str) -> None:
    owner = world.caller("owner")
    full = {"write_context": wc(owner), "agent": "codex", "body": SUMMARY, **arguments}
    error = rejected("validation_error", state_put, owner, **full)
    assert list(error.details["fields"]) == [field]
    assert not StateVersion.objects.exists()


def test_a_refused_body_keeps_the_last_good_version(world: World) -> None:
    owner = world.caller("owner")
    _put(owner)
    rejected(
        "validation_error",
        state_put,
        owner,
        write_context=wc(owner),
        agent="codex",
        body="I'm sorry, but I can't help with that.",
    )
    assert as_json(state_get(owner, agent="codex"))["state"]["body"] == SUMMARY
    assert [(e.outcome, e.error_code) for e in audit_rows(world.alpha, "state_put")] == [
        ("success", ""),
        ("rejected", "validation_error"),
    ]


def test_state_get_answers_not_found_when_there_is_no_summary(world: World) -> None:
    error = rejected("not_found", state_get, world.caller("viewer"), agent="codex")
    assert error.message == "No running summary is stored for agent 'codex'."
    event = last_audit(world.alpha)
    assert (event.operation, event.outcome, event.error_code, event.target_id) == (
        "state_get",
        "rejected",
        "not_found",
        "codex",
    )


def test_state_get_returns_the_newest_version(world: World) -> None:
    owner = world.caller("owner")
    for n in range(3):
        _put(owner, SUMMARY + f"\n- step {n}")
    state = as_json(state_get(owner, agent="codex"))["state"]
    assert set(state) == {"agent", "version", "body", "author", "created_at"}
    assert (state["version"], state["body"].endswith("- step 2")) == (3, True)
