"""The one wrapper every service and audited read goes through.

It checks the capability (a scope shortfall is a step-up: core.stepup), validates the input,
verifies the write_context, runs the body (in one durable transaction when it writes) and audits
the attempt: a success inside the transaction, a rejection after the rollback so that it is
never lost. Writing this once keeps the MCP and REST
transports from ever disagreeing about a rule.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, Generic, ParamSpec, Protocol, TypeVar, cast

import pydantic
from django.db import transaction

from audit.recorder import AuditNote, defer_after_failure, record, record_after_failure
from core.access import Caller, Capability
from core.database import retry_lost_connection, unavailable_from, unreachable
from core.errors import HeyAiraError, ValidationError, WriteContextMismatch
from core.stepup import require_scopes

# The input model's fields, as keyword arguments (the pydantic mypy plugin gives a model's
# __init__ its field names).
Fields = ParamSpec("Fields")
InputT = TypeVar("InputT", bound=pydantic.BaseModel)
ResultT = TypeVar("ResultT")

Body = Callable[[Caller, InputT, AuditNote], ResultT]
# The arguments as they arrived (a JSON object), or how to read them: a transport that can refuse
# them for reasons of its own (REST: its headers, a body that is not an object) passes a reader,
# which runs after the capability check, its refusals audited like the model's.
Arguments = Mapping[str, Any] | Callable[[], Mapping[str, Any]]


class Once(Protocol[ResultT]):
    """How an append runs at most once per idempotency key: `create` on the first use of a key,
    the stored result on a retry. The app that stores the keys supplies it (continuity's
    run_once); the Operation calls it with its own name, inside its transaction."""

    def __call__(
        self,
        caller: Caller,
        operation: str,
        args: pydantic.BaseModel,
        note: AuditNote,
        create: Callable[[], ResultT],
    ) -> ResultT: ...


class Operation(Generic[Fields, InputT, ResultT]):
    """A named, audited operation taking an InputT and returning a ResultT.

    Code calls it with a Caller and the input's fields by name (`task_get(caller, task_id=…)`,
    names checked by mypy); a transport passes the arguments as they arrived to `call`.
    """

    def __init__(
        self,
        name: str,
        body: Body[InputT, ResultT],
        *,
        capability: Capability,
        input_model: Callable[Fields, InputT],
        writes: bool,
        once: Once[ResultT] | None = None,
    ) -> None:
        self.name = name
        self.body = body
        self.capability = capability
        # A model class: typed as its constructor above only to lend its fields to __call__.
        self.input_model = cast("type[InputT]", input_model)
        self.writes = writes
        self.once = once
        functools.update_wrapper(self, body)

    def __call__(self, caller: Caller, /, *args: Fields.args, **kwargs: Fields.kwargs) -> ResultT:
        if args:
            raise TypeError(f"{self.name} takes its input fields by name")
        return self.call(caller, kwargs)

    def call(
        self,
        caller: Caller,
        arguments: Arguments | InputT,
        note: AuditNote | None = None,
    ) -> ResultT:
        """Call it, keeping what its audit row says in `note` (REST reads the outcome: an
        idempotent replay answers with a header)."""
        note = AuditNote() if note is None else note
        self.require_scopes(caller)
        try:
            caller.require(self.capability)
            args = parse_input(self.input_model, arguments() if callable(arguments) else arguments)
            check_write_context(caller, args)
            return self._execute(caller, args, note)
        except HeyAiraError as error:
            record_after_failure(caller, self.name, note, error.code)
            raise
        except Exception as error:
            unavailable = unavailable_from(error)
            if unavailable is None:
                record_after_failure(caller, self.name, note, "internal")
                raise
            # The database went away or a lock/statement timeout fired, and the transaction
            # rolled back (a connection lost during COMMIT itself may hide a commit: the
            # client's retry then meets stale_version, or its idempotency key's first result).
            audit = defer_after_failure if unreachable(error) else record_after_failure
            audit(caller, self.name, note, unavailable.code)
            raise unavailable from error

    def require_scopes(self, caller: Caller) -> None:
        """The first check of the order: a scope shortfall is a step-up (core.stepup), answered
        and audited the same way on every transport. A transport that must refuse before any
        operation of a request runs (a JSON-RPC batch, a request the MCP SDK serves) asks it
        on its own first."""
        require_scopes(caller, self.name, self.capability)

    def _execute(self, caller: Caller, args: InputT, note: AuditNote) -> ResultT:
        """Run the body once, or twice when the connection died before anything was committed
        (a read, or a write whose transaction never reached COMMIT)."""
        committing = False

        def once() -> ResultT:
            nonlocal committing
            if not self.writes:
                return self._run(caller, args, note)
            with transaction.atomic(durable=True):
                result = self._run(caller, args, note)
                committing = True  # a connection lost from here on may hide a commit
            return result

        return retry_lost_connection(once, repeatable=lambda: not committing)

    def _run(self, caller: Caller, args: InputT, note: AuditNote) -> ResultT:
        def work() -> ResultT:
            return self.body(caller, args, note)

        result: ResultT = (
            work() if self.once is None else self.once(caller, self.name, args, note, work)
        )
        if not self.writes and caller.reads_counted:
            return result  # the page that read it is counted as one view (web.access)
        record(
            caller,
            self.name,
            note.outcome,
            target_type=note.target_type,
            target_id=note.target_id,
        )
        return result


def operation(
    name: str,
    *,
    capability: Capability,
    input_model: Callable[Fields, InputT],
    writes: bool = True,
    once: Once[ResultT] | None = None,
) -> Callable[[Body[InputT, ResultT]], Operation[Fields, InputT, ResultT]]:
    def wrap(body: Body[InputT, ResultT]) -> Operation[Fields, InputT, ResultT]:
        return Operation(
            name, body, capability=capability, input_model=input_model, writes=writes, once=once
        )

    return wrap


def parse_input(model: type[InputT], arguments: Mapping[str, Any] | InputT) -> InputT:
    if isinstance(arguments, model):
        return arguments
    try:
        return model.model_validate(arguments)
    except pydantic.ValidationError as error:
        raise ValidationError(fields=field_errors(error)) from None


# Enough to act on; a request with thousands of bad (or absurdly named) fields must not turn
# into an equally large error.
MAX_FIELD_ERRORS = 20
MAX_LOCATION_CHARS = 100


def field_errors(error: pydantic.ValidationError) -> dict[str, str]:
    """pydantic's errors as {"dotted.field": "message"}; never echoes the rejected value."""
    fields: dict[str, str] = {}
    for item in error.errors(include_url=False, include_input=False):
        location = ".".join(str(part) for part in item["loc"]) or "arguments"
        fields.setdefault(location[:MAX_LOCATION_CHARS], _message(item))
        if len(fields) == MAX_FIELD_ERRORS:
            break
    return fields


def _message(item: Any) -> str:
    message = str(item["msg"]).removeprefix("Value error, ")
    if item["type"] == "too_long" and message.startswith("Value should have at most"):
        # A text cap applied after our text validators: pydantic words it for sequences.
        return f"should have at most {item['ctx']['max_length']} characters"
    return message


def check_write_context(caller: Caller, args: pydantic.BaseModel) -> None:
    given = getattr(args, "write_context", None)
    if given is None:
        return
    expected = caller.write_context.as_dict()
    mismatched = [name for name, value in expected.items() if getattr(given, name) != value]
    if mismatched:
        raise WriteContextMismatch(mismatched=mismatched, expected=expected)
