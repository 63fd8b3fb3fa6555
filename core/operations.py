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
from typing import Any, Generic, Protocol, TypeVar

import pydantic
from django.db import transaction

from audit.recorder import AuditNote, defer_after_failure, record, record_after_failure
from core.access import Caller, Capability
from core.database import retry_lost_connection, unavailable_from, unreachable
from core.errors import HeyAiraError, ValidationError, WriteContextMismatch
from core.stepup import require_scopes

InputT = TypeVar("InputT", bound=pydantic.BaseModel)
ResultT = TypeVar("ResultT")

Body = Callable[[Caller, InputT, AuditNote], ResultT]


class Once(Protocol):
    """How an append runs at most once per idempotency key: `create` on the first use of a key,
    the stored result on a retry. The app that stores the keys supplies it (continuity's
    run_once); the Operation calls it with its own name, inside its transaction."""

    def __call__(
        self,
        caller: Caller,
        operation: str,
        args: Any,
        note: AuditNote,
        create: Callable[[], Any],
    ) -> Any: ...


class Operation(Generic[InputT, ResultT]):
    """A named, audited operation: call it with a Caller and the arguments."""

    def __init__(
        self,
        name: str,
        body: Body[InputT, ResultT],
        *,
        capability: Capability,
        input_model: type[InputT],
        writes: bool,
        once: Once | None = None,
    ) -> None:
        self.name = name
        self.body = body
        self.capability = capability
        self.input_model = input_model
        self.writes = writes
        self.once = once
        functools.update_wrapper(self, body)

    def __call__(
        self, caller: Caller, arguments: Mapping[str, Any] | InputT | None = None, **kwargs: Any
    ) -> ResultT:
        return self.noted(caller, arguments if arguments is not None else kwargs, AuditNote())

    def noted(
        self, caller: Caller, arguments: Mapping[str, Any] | InputT, note: AuditNote
    ) -> ResultT:
        """Call it, keeping what its audit row says in `note` (REST reads the outcome: an
        idempotent replay answers with a header)."""
        self.require_scopes(caller)
        try:
            caller.require(self.capability)
            args = parse_input(self.input_model, arguments)
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
    input_model: type[InputT],
    writes: bool = True,
    once: Once | None = None,
) -> Callable[[Body[InputT, ResultT]], Operation[InputT, ResultT]]:
    def wrap(body: Body[InputT, ResultT]) -> Operation[InputT, ResultT]:
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
