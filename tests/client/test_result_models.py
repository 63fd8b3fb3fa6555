"""The client's result models cannot drift from the server's: each typed view
(heyaira_client.models) is held to the output model it reads (continuity.outputs), through the
schema the server advertises for it.

- every field the client reads is a property of that schema, with the JSON type the field's
  annotation says (a string, an integer, a list, an object, or null where it may be null);
- results generated from the server's output schemas (hypothesis-jsonschema) parse, and every
  field comes out as the server sent it.

A server field that is renamed, dropped or retyped fails here instead of reading as an empty
default in the client. The client imports nothing of the server; this test reads both.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from continuity import outputs
from continuity.mcp.schemas import model_schema
from heyaira_client import models

# Fields of the client's own, not read from a result.
LOCAL = {"raw", "recovered", "replayed"}
# (client model, server model it reads, fields the client has that this result lacks): a
# task_list item is a Task without its texts, which then read as empty.
MIRRORS: tuple[tuple[type, type[pydantic.BaseModel], frozenset[str]], ...] = (
    (models.ProjectRef, outputs.ProjectOut, frozenset()),
    (models.WriteContext, outputs.WriteContextOut, frozenset()),
    (models.Principal, outputs.PrincipalOut, frozenset()),
    (models.Identity, outputs.IdentityOut, frozenset()),
    (models.MemoryPreview, outputs.ContextMemoryOut, frozenset()),
    (models.TaskSummary, outputs.ContextTaskOut, frozenset()),
    (models.ReceiptSummary, outputs.ContextReceiptOut, frozenset()),
    (models.StatePreview, outputs.ContextStateOut, frozenset()),
    (models.Context, outputs.ContextOut, frozenset()),
    (models.Task, outputs.TaskOut, frozenset()),
    (models.Task, outputs.TaskListItemOut, frozenset({"description", "blockers", "handoff_note"})),
    (models.Receipt, outputs.ReceiptOut, frozenset()),
    (models.TaskDetail, outputs.TaskGetOut, frozenset()),
    (models.StateVersion, outputs.StateOut, frozenset()),
    (models.SearchHit, outputs.SearchHitOut, frozenset()),
    (models.MemorySearch, outputs.MemorySearchOut, frozenset()),
)
JSON_TYPES = {str: "string", int: "integer", bool: "boolean", tuple: "array", dict: "object"}


def json_types(annotation: Any) -> set[str]:
    """The JSON types a field's annotation reads: str is "string", `X | None` adds "null"."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        return set().union(*(json_types(arg) for arg in typing.get_args(annotation)))
    if annotation is type(None):
        return {"null"}
    origin = typing.get_origin(annotation) or annotation
    if dataclasses.is_dataclass(origin):
        return {"object"}
    return {JSON_TYPES[origin]}


def schema_types(schema: dict[str, Any]) -> set[str]:
    if "anyOf" in schema:
        return set().union(*(schema_types(option) for option in schema["anyOf"]))
    kind = schema.get("type")
    if kind is None and "enum" in schema:
        return {"string"}  # a Literal of strings
    return {kind} if isinstance(kind, str) else set(kind or ())


def mirrored(client: type) -> dict[str, Any]:
    hints = typing.get_type_hints(client, vars(models))
    return {f.name: hints[f.name] for f in dataclasses.fields(client) if f.name not in LOCAL}


def drift(client: type, server: type[pydantic.BaseModel], lacking: frozenset[str]) -> list[str]:
    """Where `client` no longer reads what `server` sends, or []."""
    faults = []
    properties = model_schema(server)["properties"]
    for name, annotation in mirrored(client).items():
        if name in lacking:
            if name in properties:
                faults.append(f"{server.__name__} now has {name}: read it")
            continue
        if name not in properties:
            faults.append(f"{client.__name__}.{name} is not in {server.__name__}")
            continue
        wanted, sent = json_types(annotation), schema_types(properties[name])
        if not sent - {"null"} <= wanted:
            faults.append(f"{client.__name__}.{name} reads {wanted}, the server sends {sent}")
        if "null" in sent and "null" not in wanted:
            faults.append(f"{client.__name__}.{name} may be null")
    return faults


@pytest.mark.parametrize(
    ("client", "server", "lacking"),
    MIRRORS,
    ids=[f"{c.__name__}-{s.__name__}" for c, s, _ in MIRRORS],
)
def test_every_field_the_client_reads_is_in_the_servers_schema(client, server, lacking):
    assert drift(client, server, lacking) == []


def _same(read: Any, sent: Any) -> None:
    """A parsed value against the JSON it came from: field by field, item by item."""
    if dataclasses.is_dataclass(read):
        for name in mirrored(type(read)):
            if name in sent:
                _same(getattr(read, name), sent[name])
    elif isinstance(read, tuple):
        assert len(read) == len(sent)
        for one, other in zip(read, sent, strict=True):
            _same(one, other)
    else:
        assert read == sent, (read, sent)


PARSERS = (
    (models.Identity, outputs.IdentityOut),
    (models.Context, outputs.ContextOut),
    (models.TaskDetail, outputs.TaskGetOut),
    (models.Task, outputs.TaskListItemOut),
    (models.StateVersion, outputs.StateOut),
    (models.MemorySearch, outputs.MemorySearchOut),
)


@pytest.mark.parametrize(("client", "server"), PARSERS, ids=[c.__name__ for c, _ in PARSERS])
def test_results_generated_from_the_servers_schema_parse_as_sent(client, server):
    @settings(
        max_examples=25,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(data=st.data())
    def parse(data: st.DataObject) -> None:
        sent = data.draw(from_schema(model_schema(server)))
        _same(client.of(sent), sent)

    parse()


def test_the_check_fails_on_a_renamed_a_retyped_or_a_nullable_field():
    class Changed(outputs.Output):
        id: str
        title: str
        status: str
        version: str  # was an integer
        next_step: str | None  # may be null now
        blocker_total: int  # was blocker_count
        ready: bool
        waiting_on_count: int
        waiting_on: list[str]
        lease: dict[str, str] | None

    assert drift(models.TaskSummary, Changed, frozenset()) == [
        "TaskSummary.version reads {'integer'}, the server sends {'string'}",
        "TaskSummary.next_step may be null",
        "TaskSummary.blocker_count is not in Changed",
    ]
