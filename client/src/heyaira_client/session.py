"""One pinned connection to HeyAira over the official MCP SDK (Streamable HTTP).

    async with HeyAira(load_profile("demo")) as heyaira:
        recovery = await heyaira.recover()          # server_identity, checked, then context
        await heyaira.note("The runbook is docs/operating.md.")

Writes are refused until server_identity has matched the profile; each carries that verified
write_context. Keyed writes go through the journal (journal.py) before they are sent; a
task_update whose answer is lost is read back, not sent again blindly.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from types import TracebackType
from typing import Any, TypeVar

import anyio
import httpx2
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.types import (
    CONNECTION_CLOSED,
    REQUEST_TIMEOUT,
    CallToolResult,
    DiscoverResult,
    GetPromptResult,
)

from heyaira_client.errors import (
    CredentialRefused,
    HeyAiraClientError,
    LostResponse,
    NotVerified,
    ProfileMismatch,
    ServerFault,
    ServerRefused,
    ToolError,
    find_client_error,
)
from heyaira_client.journal import Entry, Journal
from heyaira_client.models import (
    Context,
    Identity,
    MemorySearch,
    Receipt,
    Recovery,
    StateVersion,
    Task,
    TaskDetail,
    TaskUpdate,
    WriteContext,
    Written,
)
from heyaira_client.oauth import stored_provider
from heyaira_client.profile import Profile, credential_source

EventHook = Callable[[Any], Awaitable[None]]  # httpx2 request or response hooks
# A lost answer or a brief outage is tried this many times in all, with a fresh connection each.
SEND_ATTEMPTS = 3
# The SDK's own codes for a request whose answer never came, as opposed to a server's refusal.
_NO_ANSWER = (CONNECTION_CLOSED, REQUEST_TIMEOUT)
_TASK_FIELDS = ("status", "next_step", "blockers", "handoff_note")
# The server's prompt whose text is the continuity brief (what the session hooks inject).
RESUME_PROMPT = "resume"
T = TypeVar("T")


def check_identity(profile: Profile, identity: Identity) -> None:
    """Refuse a server that is not the one the profile pins (resource, instance, project)."""
    if identity.resource != profile.resource:
        raise ProfileMismatch("resource", profile.resource, identity.resource)
    if identity.instance != profile.instance:
        raise ProfileMismatch("instance", profile.instance, identity.instance)
    actual = identity.project.id if profile.project_is_id else identity.project.slug
    if actual != profile.project:
        raise ProfileMismatch("project", profile.project, actual)
    expected = WriteContext(identity.resource, identity.instance, identity.project.id)
    if identity.write_context != expected:
        raise ProfileMismatch(
            "write_context", json.dumps(expected.as_json()), json.dumps(identity.raw)
        )


class HeyAira:
    def __init__(
        self,
        profile: Profile,
        *,
        journal: Journal | None = None,
        event_hooks: Mapping[str, list[EventHook]] | None = None,
        timeout: float = 60.0,
        auth: httpx2.Auth | None = None,
    ) -> None:
        self.profile = profile
        self.journal = journal or Journal()
        self._event_hooks = dict(event_hooks or {})
        self._timeout = timeout
        self._auth = auth
        self._stack: AsyncExitStack | None = None
        self._http_client: httpx2.AsyncClient | None = None
        self._discovered: tuple[str, DiscoverResult] | None = None
        self._last_status = 0
        self.identity: Identity | None = None  # set once verified against the profile

    # --- the connection -----------------------------------------------------------------------

    async def __aenter__(self) -> HeyAira:
        await self._connect()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self._disconnect()

    def _http(self) -> httpx2.AsyncClient:
        source = credential_source(self.profile)
        headers: dict[str, str] = {}
        auth = self._auth
        if source.kind == "oauth":
            auth = auth or stored_provider(self.profile)
        else:
            headers["Authorization"] = f"Bearer {source.bearer()}"
        hooks = {**self._event_hooks}
        hooks["response"] = [*hooks.get("response", []), self._note_status]
        return httpx2.AsyncClient(
            auth=auth, headers=headers, timeout=self._timeout, event_hooks=hooks
        )

    async def _note_status(self, response: httpx2.Response) -> None:
        # The SDK turns an HTTP refusal into a bare JSON-RPC error; the status says which.
        self._last_status = response.status_code

    async def _connect(self) -> None:
        stack = AsyncExitStack()
        self._http_client = await stack.enter_async_context(self._http())
        self._stack = stack

    async def _disconnect(self) -> None:
        stack, self._stack, self._http_client = self._stack, None, None
        if stack is not None:
            # A broken connection may fail to close as well; it is gone either way.
            with contextlib.suppress(Exception):
                await stack.aclose()

    async def _reconnect(self) -> None:
        await self._disconnect()
        await self._connect()

    async def _call_tool(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        return await self._in_session(lambda client: client.call_tool(tool, arguments))

    async def _in_session(self, work: Callable[[Client], Awaitable[T]]) -> T:
        """One request in an MCP session of its own over the shared HTTP client. The server
        is stateless, and a session that breaks cancels whatever runs inside it: kept to one
        request, a lost answer surfaces here as an exception instead. After the first session
        the server's discover result is reused, so later ones need no handshake."""
        if self._http_client is None:
            await self._connect()
        assert self._http_client is not None
        transport = streamable_http_client(self.profile.url, http_client=self._http_client)
        mode: str = self.profile.mode
        if self._discovered is not None and mode == "auto":
            mode = self._discovered[0]
        prior = self._discovered[1] if self._discovered is not None else None
        async with Client(transport, mode=mode, prior_discover=prior) as client:
            if mode == "auto" and client.session.discover_result is not None:
                self._discovered = (client.protocol_version, client.session.discover_result)
            return await work(client)

    # --- calls ----------------------------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """One tool call's structuredContent; a tool error is raised as ToolError."""
        result = await self._request(tool, lambda: self._call_tool(tool, arguments))
        data = dict(result.structured_content or {})
        if result.is_error:
            detail = dict(data.get("error") or {})
            code = str(detail.pop("code", "error"))
            message = str(detail.pop("message", "the tool failed"))
            raise ToolError(code, message, detail)
        return data

    async def _request(self, what: str, send: Callable[[], Awaitable[T]]) -> T:
        """One request's answer; a refusal or a failure raised as the client's errors say."""
        self._last_status = 0
        try:
            return await send()
        except Exception as error:
            found = find_client_error(error)
            if found is not None:
                raise found from None
            if self._last_status >= 500:
                # The caller decides whether to resend; the status says what happened.
                raise ServerFault(self.profile.url, self._last_status) from error
            refusal = _mcp_error(error)
            if refusal is None or refusal.code in _NO_ANSWER:
                raise  # no answer came back: the caller decides whether to resend
            if self._last_status in (401, 403):
                raise CredentialRefused(
                    f"the server refused the credential of profile {self.profile.name} "
                    f"(HTTP {self._last_status}): check the key, or run `heyaira login`"
                ) from None
            raise ServerRefused(f"{what}: {refusal.error.message}") from None

    async def _send(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A keyed write: sent again with the same key after a lost answer or `unavailable`."""
        last: BaseException | None = None
        for attempt in range(SEND_ATTEMPTS):
            if attempt:
                await anyio.sleep(0.2 * 2**attempt)
                await self._reconnect()
            try:
                return await self.call(tool, arguments)
            except ToolError as error:
                if error.code != "unavailable":
                    raise
                last = error
            except HeyAiraClientError:
                raise
            except Exception as error:  # the answer never arrived: transport, protocol, timeout
                last = error
        raise LostResponse(f"{tool}: no answer after {SEND_ATTEMPTS} attempts ({last!r})")

    # --- reads ----------------------------------------------------------------------------------

    async def server_identity(self) -> Identity:
        return Identity.of(await self.call("server_identity", {}))

    async def verify(self) -> Identity:
        """server_identity, checked against the profile; writes are allowed only after this."""
        self.identity = None
        identity = await self.server_identity()
        check_identity(self.profile, identity)
        self.identity = identity
        return identity

    async def continuity_context(self, *, agent: str | None = None, **limits: int) -> Context:
        arguments: dict[str, Any] = dict(limits)
        if agent:
            arguments["agent"] = agent
        return Context.of(await self.call("continuity_context", arguments))

    async def recover(self, *, agent: str | None = None, **limits: int) -> Recovery:
        """The protocol's first two steps: a verified identity, then one continuity_context."""
        identity = await self.verify()
        context = await self.continuity_context(agent=agent or self.profile.agent, **limits)
        return Recovery(identity=identity, context=context)

    async def resume_brief(self) -> str:
        """The continuity brief a session starts from, once server_identity has matched the
        profile: the server's `resume` prompt, the same text whichever client asks for it."""
        await self.verify()
        prompt = RESUME_PROMPT

        async def get() -> GetPromptResult:
            return await self._in_session(lambda client: client.get_prompt(prompt))

        result = await self._request(f"prompt {prompt}", get)
        return "".join(
            message.content.text for message in result.messages if message.content.type == "text"
        )

    async def memory_search(
        self, query: str, *, kind: str | None = None, limit: int | None = None
    ) -> MemorySearch:
        """Decisions and notes matching `query`, best first (previews; memory_get has all)."""
        arguments = {"query": query, **_present(kind=kind, limit=limit)}
        return MemorySearch.of(await self.call("memory_search", arguments))

    async def task_get(self, task_id: str) -> TaskDetail:
        return TaskDetail.of(await self.call("task_get", {"task_id": task_id}))

    async def task_list(self, *, status: str | None = None, limit: int = 20) -> list[Task]:
        arguments: dict[str, Any] = {"limit": limit}
        if status:
            arguments["status"] = status
        data = await self.call("task_list", arguments)
        return [Task.of(t) for t in data.get("tasks", [])]

    async def memory_get(self, memory_id: str) -> dict[str, Any]:
        return dict((await self.call("memory_get", {"memory_id": memory_id}))["memory"])

    async def state_get(self, agent: str | None = None) -> StateVersion | None:
        try:
            data = await self.call("state_get", {"agent": agent or self.profile.agent})
        except ToolError as error:
            if error.code == "not_found":
                return None
            raise
        state = data.get("state")
        return StateVersion.of(state) if state else None

    # --- writes ---------------------------------------------------------------------------------

    def _verified(self) -> Identity:
        if self.identity is None:
            raise NotVerified("call verify() or recover() before writing")
        return self.identity

    @property
    def _scope(self) -> str:
        wc = self._verified().write_context
        return f"{wc.resource}|{wc.instance}|{wc.project}"

    async def _keyed(
        self, operation: str, arguments: dict[str, Any], key: str | None
    ) -> tuple[dict[str, Any], Entry]:
        payload = {**arguments, "write_context": self._verified().write_context.as_json()}
        entry = self.journal.begin(scope=self._scope, operation=operation, payload=payload, key=key)
        try:
            data = await self._send(operation, {**payload, "idempotency_key": entry.key})
        except ToolError:
            self.journal.fail(entry)  # refused for good: a rerun must not resume it
            raise
        self.journal.finish(entry, result_id=str(data.get("id", "")))
        return data, entry

    async def memory_add(
        self,
        *,
        kind: str,
        content: str,
        title: str | None = None,
        rationale: str | None = None,
        source: str | None = None,
        supersedes: str | None = None,
        idempotency_key: str | None = None,
    ) -> Written:
        arguments = _present(
            kind=kind,
            content=content,
            title=title,
            rationale=rationale,
            source=source,
            supersedes=supersedes,
        )
        data, entry = await self._keyed("memory_add", arguments, idempotency_key)
        return Written(id=str(data["id"]), raw=data, replayed=entry.resumed)

    async def note(self, content: str, *, title: str | None = None) -> Written:
        return await self.memory_add(kind="note", content=content, title=title)

    async def decide(
        self,
        title: str,
        content: str,
        *,
        rationale: str,
        source: str,
        supersedes: str | None = None,
    ) -> Written:
        return await self.memory_add(
            kind="decision",
            title=title,
            content=content,
            rationale=rationale,
            source=source,
            supersedes=supersedes,
        )

    async def task_create(
        self,
        *,
        title: str,
        description: str,
        next_step: str | None = None,
        status: str | None = None,
        repository_ref: dict[str, Any] | None = None,
        blocked_by: list[str] | None = None,
        idempotency_key: str | None = None,
    ) -> Written:
        """A new task; blocked_by names the tasks to finish first."""
        arguments = _present(
            title=title,
            description=description,
            next_step=next_step,
            status=status,
            repository_ref=repository_ref,
            blocked_by=blocked_by,
        )
        data, entry = await self._keyed("task_create", arguments, idempotency_key)
        return Written(id=str(data["id"]), raw=data, replayed=entry.resumed)

    async def task_update(
        self,
        task_id: str,
        *,
        expected_version: int,
        status: str | None = None,
        next_step: str | None = None,
        blockers: list[str] | None = None,
        handoff_note: str | None = None,
        repository_ref: dict[str, Any] | None = None,
        blocked_by: list[str] | None = None,
        work_receipt: dict[str, Any] | None = None,
        session_ref: str | None = None,
        lease_seconds: int | None = None,
    ) -> TaskUpdate:
        """Compare-and-set on expected_version. None leaves a field as it is; "", [] and {}
        clear (repository_ref={} drops the reference, blocked_by=[] every dependency). If an
        answer is lost (here or in a process that died), the task is read back: applied means
        done; untouched means send; moved on by someone else means stale_version. Never sent
        twice without that check."""
        changes = _present(
            status=status,
            next_step=next_step,
            blockers=blockers,
            handoff_note=handoff_note,
            repository_ref=repository_ref,
            blocked_by=blocked_by,
            work_receipt=work_receipt,
        )
        payload = {
            "write_context": self._verified().write_context.as_json(),
            "task_id": task_id,
            "expected_version": expected_version,
            **changes,
            **_present(session_ref=session_ref, lease_seconds=lease_seconds),
        }
        entry = self.journal.begin(
            scope=self._scope,
            operation="task_update",
            payload=payload,
            target=task_id,
            expected_version=expected_version,
        )
        resumed = entry.resumed
        for attempt in range(SEND_ATTEMPTS):
            if resumed:
                outcome = await self._read_back(task_id, expected_version, changes)
                if outcome is not None:
                    self.journal.finish(entry, result_id=task_id)
                    return outcome
            try:
                data = await self.call("task_update", payload)
            except ToolError as error:
                if error.code != "unavailable":
                    self.journal.fail(entry)
                    raise
            except HeyAiraClientError:
                raise
            except Exception:  # noqa: S110 (lost: read it back before anything else)
                pass
            else:
                self.journal.finish(entry, result_id=task_id)
                receipt = data.get("receipt")
                return TaskUpdate(
                    task=Task.of(data["task"]), receipt=Receipt.of(receipt) if receipt else None
                )
            resumed = True
            await anyio.sleep(0.2 * 2**attempt)
            await self._reconnect()
        raise LostResponse(f"task_update of {task_id}: no answer after {SEND_ATTEMPTS} attempts")

    async def task_claim_next(
        self, *, session_ref: str, lease_seconds: int | None = None
    ) -> Task | None:
        """The next task, claimed for this session with a lease (a task whose lease expired,
        else the oldest ready one); None when there is none. Keep the lease with
        task_heartbeat, or `keep_lease` (heyaira_client.leases)."""
        payload = {
            "write_context": self._verified().write_context.as_json(),
            "session_ref": session_ref,
            **_present(lease_seconds=lease_seconds),
        }
        data = await self.call("task_claim_next", payload)
        return Task.of(data["task"]) if data["task"] else None

    async def task_heartbeat(self, task_id: str, *, session_ref: str) -> dict[str, Any]:
        """Renew this session's lease on a task; a ToolError lease_lost means it is gone."""
        payload = {
            "write_context": self._verified().write_context.as_json(),
            "task_id": task_id,
            "session_ref": session_ref,
        }
        return await self.call("task_heartbeat", payload)

    async def task_version(self, task_id: str) -> int:
        """The version to update `task_id` against: an unfinished update's (so that running the
        same command again resolves it by reading back), else the task's current one."""
        pending = self.journal.unfinished_version(self._scope, "task_update", task_id)
        if pending is not None:
            return pending
        return (await self.task_get(task_id)).task.version

    async def _read_back(
        self, task_id: str, expected_version: int, changes: dict[str, Any]
    ) -> TaskUpdate | None:
        """The lost update's outcome from task_get: a TaskUpdate if it was applied, None if the
        task is untouched (safe to send), stale_version if another update came first."""
        detail = await self.task_get(task_id)
        task = detail.task
        if task.version == expected_version:
            return None
        receipt_ref = (changes.get("work_receipt") or {}).get("session_ref")
        mine = [
            r
            for r in detail.receipts
            if r.session_ref == receipt_ref and r.raw.get("task_version") == expected_version + 1
        ]
        fields_match = all(
            task.raw.get(name) == changes[name] for name in _TASK_FIELDS if name in changes
        )
        actor = self._verified().principal.actor
        if (
            task.version >= expected_version + 1
            and fields_match
            and (mine if receipt_ref else task.raw.get("updated_by") == actor)
        ):
            return TaskUpdate(task=task, receipt=mine[0] if mine else None, recovered=True)
        raise ToolError(
            "stale_version",
            f"task {task_id} moved to version {task.version} by another update; "
            "this one was not applied",
            {"current_version": task.version},
        )

    async def state_put(
        self, body: str, *, agent: str | None = None, expected_version: int | None = None
    ) -> dict[str, Any]:
        arguments: dict[str, Any] = {
            "write_context": self._verified().write_context.as_json(),
            "agent": agent or self.profile.agent,
            "body": body,
        }
        if expected_version is not None:
            arguments["expected_version"] = expected_version
        return await self.call("state_put", arguments)


def _mcp_error(error: BaseException) -> MCPError | None:
    """The server's JSON-RPC error inside whatever the SDK wrapped it in."""
    if isinstance(error, MCPError):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            if (found := _mcp_error(inner)) is not None:
                return found
    return None


def _present(**values: Any) -> dict[str, Any]:
    return {name: value for name, value in values.items() if value is not None}
