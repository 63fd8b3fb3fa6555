#!/usr/bin/env python
"""The continuity protocol, end to end, against a running HeyAira server.

Two separate MCP clients, each with its own credential, play two agent sessions with the
official MCP SDK:

  Session A checks the server's identity, records a decision and a note and creates a task
  (each with an idempotency key), retries all three with the same keys (no duplicates), retries
  one with a changed payload (idempotency_conflict), and closes.
  Session B recovers everything through continuity_context alone, reads the task, claims it
  with expected_version, tries a stale version (stale_version, nothing changed), completes the
  task with a work receipt, and retries the receipt (duplicate_receipt, nothing changed).
  Session A, connecting again, sees the new state.

Credentials: `--api-key KEY_A --api-key-b KEY_B`, or OAuth with the SDK's OAuthClientProvider
(discovery, dynamic registration, PKCE, resource) and headless consent for a named person:
`--user NAME --password PASSWORD --project SLUG` (each session registers its own client).

Each step is printed; any deviation exits with status 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)


class Deviation(Exception):
    """The server did not behave as the protocol says."""


def step(text: str) -> None:
    print(f"  ok  {text}", flush=True)


def expect(condition: bool, text: str) -> None:
    if not condition:
        raise Deviation(text)


# --- credentials ----------------------------------------------------------------------------


class _Forms(HTMLParser):
    """The inputs of a page's forms and the text of each <label for=...>."""

    def __init__(self) -> None:
        super().__init__()
        self.inputs: list[dict[str, str]] = []
        self.labels: dict[str, str] = {}
        self._label: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "input":
            self.inputs.append(values)
        elif tag == "label" and values.get("for"):
            self._label = values["for"]
            self.labels[self._label] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "label":
            self._label = None

    def handle_data(self, data: str) -> None:
        if self._label:
            self.labels[self._label] += data


def forms_of(html: str) -> _Forms:
    reader = _Forms()
    reader.feed(html)
    return reader


@dataclass
class HeadlessConsent:
    """Plays the person at the browser: signs in, picks the project, allows."""

    username: str
    password: str
    project: str
    cookies: httpx2.Cookies = field(default_factory=httpx2.Cookies)
    location: str = ""

    async def redirect_handler(self, authorization_url: str) -> None:
        async with httpx2.AsyncClient(timeout=30, cookies=self.cookies) as http:
            page = await http.get(authorization_url)
            if page.status_code == 302 and "/accounts/login/" in page.headers["location"]:
                login_url = urljoin(authorization_url, page.headers["location"])
                await self._sign_in(http, login_url)
                page = await http.get(authorization_url)
            expect(page.status_code == 200, f"consent page answered {page.status_code}")
            answer = await http.post(authorization_url, data=self._allow(page.text))
            self.cookies.update(http.cookies)
        self.location = answer.headers.get("location", "")
        expect("code=" in self.location, f"consent did not redirect with a code: {answer.text}")

    async def callback_handler(self) -> AuthorizationCodeResult:
        query = {k: v[0] for k, v in parse_qs(urlsplit(self.location).query).items()}
        return AuthorizationCodeResult(
            code=query["code"], state=query.get("state"), iss=query.get("iss")
        )

    async def _sign_in(self, http: httpx2.AsyncClient, login_url: str) -> None:
        page = await http.get(login_url)
        fields = {i["name"]: i.get("value", "") for i in forms_of(page.text).inputs if "name" in i}
        fields.update(username=self.username, password=self.password)
        answer = await http.post(login_url, data=fields)
        expect(answer.status_code == 302, f"sign-in as {self.username} failed")

    def _allow(self, html: str) -> dict[str, str]:
        forms = forms_of(html)
        fields = {i["name"]: i.get("value", "") for i in forms.inputs if i.get("type") == "hidden"}
        for radio in (i for i in forms.inputs if i.get("name") == "project"):
            if f"({self.project}," in forms.labels.get(radio.get("id", ""), ""):
                fields["project"] = radio["value"]
        expect("project" in fields, f"{self.username} may not choose project {self.project}")
        fields["allow"] = "Authorize"
        return fields


@dataclass
class MemoryStorage:
    tokens: OAuthToken | None = None
    client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


@dataclass
class Credential:
    """How one session authenticates: an API key, or its own OAuth client."""

    api_key: str | None = None
    oauth: OAuthClientProvider | None = None

    def http_client(self) -> httpx2.AsyncClient:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        return httpx2.AsyncClient(auth=self.oauth, headers=headers, timeout=60)


def oauth_credential(url: str, name: str, consent: HeadlessConsent) -> Credential:
    provider = OAuthClientProvider(
        server_url=f"{url}/mcp",
        client_metadata=OAuthClientMetadata(
            client_name=f"continuity smoke, {name}",
            redirect_uris=["http://127.0.0.1:8976/callback"],
            grant_types=["authorization_code", "refresh_token"],
            token_endpoint_auth_method="none",  # noqa: S106 (a public client: no secret)
        ),
        storage=MemoryStorage(),
        redirect_handler=consent.redirect_handler,
        callback_handler=consent.callback_handler,
    )
    return Credential(oauth=provider)


# --- the protocol ---------------------------------------------------------------------------


@asynccontextmanager
async def connect(url: str, credential: Credential, mode: str) -> AsyncIterator[Client]:
    async with (
        credential.http_client() as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http), mode=mode) as client,
    ):
        yield client


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A successful tool call's structured result (checked against its text copy)."""
    result = await client.call_tool(tool, arguments)
    content = result.structured_content or {}
    expect(not result.is_error, f"{tool} failed: {json.dumps(content)}")
    text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
    expect(json.loads(text) == content, f"{tool}: the text copy differs from structuredContent")
    return dict(content)


async def refused(client: Client, tool: str, arguments: dict[str, Any], code: str) -> None:
    result = await client.call_tool(tool, arguments)
    content = result.structured_content or {}
    got = content.get("error", {}).get("code")
    expect(result.is_error and got == code, f"{tool} should fail with {code}, got {content}")


async def check_identity(client: Client, url: str) -> dict[str, Any]:
    identity = await call(client, "server_identity", {})
    expect(identity["resource"] == f"{url}/mcp", f"unexpected resource {identity['resource']}")
    expect(
        identity["write_context"]["project"] == identity["project"]["id"],
        "write_context names another project",
    )
    step(
        f"server_identity: {identity['resource']}, instance {identity['instance']}, project "
        f"{identity['project']['slug']}, {identity['principal']['actor']} as "
        f"{identity['principal']['role']} ({identity['principal']['credential']})"
    )
    return identity


async def session_a(url: str, credential: Credential, mode: str, run: str) -> dict[str, Any]:
    print(f"Session A ({mode})", flush=True)
    async with connect(url, credential, mode) as client:
        wc = (await check_identity(client, url))["write_context"]
        writes = {
            "decision": (
                "memory_add",
                {
                    "write_context": wc,
                    "kind": "decision",
                    "title": f"Store continuity in PostgreSQL [{run}]",
                    "content": "Production keeps HeyAira's state in PostgreSQL.",
                    "rationale": "Transactions, row locks and full-text search in one store.",
                    "source": "continuity smoke test",
                    "idempotency_key": f"smoke-{run}-decision",
                },
            ),
            "note": (
                "memory_add",
                {
                    "write_context": wc,
                    "kind": "note",
                    "title": f"Where the runbook lives [{run}]",
                    "content": "The runbook is docs/operating.md.",
                    "idempotency_key": f"smoke-{run}-note",
                },
            ),
            "task": (
                "task_create",
                {
                    "write_context": wc,
                    "title": f"Finish the handoff check [{run}]",
                    "description": "Done when a second session completes it with a receipt.",
                    "next_step": "Claim it from another session.",
                    "idempotency_key": f"smoke-{run}-task",
                },
            ),
        }
        created = {name: await call(client, tool, args) for name, (tool, args) in writes.items()}
        step(
            f"recorded decision {created['decision']['id']}, note {created['note']['id']}, "
            f"task {created['task']['id']} (version {created['task']['version']})"
        )
        for name, (tool, args) in writes.items():
            again = await call(client, tool, args)
            expect(again == created[name], f"retrying the {name} did not replay its result")
        step("retried all three with the same keys: the original results, no duplicates")
        tool, args = writes["decision"]
        await refused(
            client,
            tool,
            {**args, "content": "A different decision under the same key."},
            "idempotency_conflict",
        )
        step("the same key with a changed payload: idempotency_conflict")
    step("session A closed")
    return {name: value["id"] for name, value in created.items()}


async def session_b(url: str, credential: Credential, mode: str, ids: dict[str, str]) -> None:
    print(f"Session B ({mode}, its own credential)", flush=True)
    async with connect(url, credential, mode) as client:
        wc = (await check_identity(client, url))["write_context"]
        context = await call(client, "continuity_context", {})
        memories = {m["id"]: m for m in context["memories"]}
        tasks = {t["id"]: t for t in context["tasks"]}
        expect(memories.get(ids["decision"], {}).get("kind") == "decision", "decision missing")
        expect(memories.get(ids["note"], {}).get("kind") == "note", "note missing from context")
        expect(ids["task"] in tasks, "the task is missing from continuity_context")
        step(
            f"continuity_context: {context['counts']['memories']} memories, "
            f"{context['counts']['open_tasks']} open tasks; the decision, note and task are there"
        )
        task = (await call(client, "task_get", {"task_id": ids["task"]}))["task"]
        expect(task["status"] == "todo" and task["version"] == 1, f"unexpected task {task}")
        step(f"task_get: {task['status']}, version {task['version']}, next: {task['next_step']}")
        base = {"write_context": wc, "task_id": ids["task"]}
        claimed = await call(
            client,
            "task_update",
            {
                **base,
                "expected_version": 1,
                "status": "in_progress",
                "next_step": "Complete it with a receipt.",
            },
        )
        expect(claimed["task"]["version"] == 2, "claiming did not move the version to 2")
        step("claimed with expected_version 1: in_progress, version 2")
        await refused(
            client,
            "task_update",
            {**base, "expected_version": 1, "status": "blocked"},
            "stale_version",
        )
        after_stale = (await call(client, "task_get", {"task_id": ids["task"]}))["task"]
        expect(
            (after_stale["status"], after_stale["version"]) == ("in_progress", 2),
            "a stale update changed the task",
        )
        step("a stale expected_version: stale_version, task unchanged")
        receipt = {
            "session_ref": f"smoke-session-b-{uuid.uuid4().hex[:8]}",
            "summary": "Completed the handoff check from a second session.",
            "tests": [{"name": "scripts/continuity_protocol_smoke.py", "result": "passed"}],
            "commits": ["0123456789abcdef0123456789abcdef01234567"],
        }
        finish = {**base, "expected_version": 2, "status": "done", "work_receipt": receipt}
        done = await call(client, "task_update", finish)
        expect(done["task"]["status"] == "done" and done["receipt"] is not None, "not completed")
        step(f"completed with receipt {done['receipt']['id']}: done, version 3")
        await refused(client, "task_update", finish, "duplicate_receipt")
        final = await call(client, "task_get", {"task_id": ids["task"]})
        expect(final["task"]["version"] == 3, "the receipt retry changed the task")
        expect(len(final["receipts"]) == 1, "the receipt retry added a receipt")
        step("the same receipt again: duplicate_receipt, task and receipts unchanged")
    step("session B closed")


async def session_a_again(url: str, credential: Credential, mode: str, ids: dict[str, str]) -> None:
    print(f"Session A again ({mode})", flush=True)
    async with connect(url, credential, mode) as client:
        await check_identity(client, url)
        task = await call(client, "task_get", {"task_id": ids["task"]})
        expect(task["task"]["status"] == "done", "session A does not see the task done")
        expect(len(task["receipts"]) == 1, "session A does not see the receipt")
        context = await call(client, "continuity_context", {})
        expect(ids["task"] not in {t["id"] for t in context["tasks"]}, "done task still open")
        receipts = {r["task_id"] for r in context["receipts"]}
        expect(ids["task"] in receipts, "the receipt is missing from continuity_context")
        step("sees the task done, its receipt, and no longer lists it as open")


async def main(options: argparse.Namespace) -> None:
    url = options.url.rstrip("/")
    if options.api_key:
        first = Credential(api_key=options.api_key)
        second = Credential(api_key=options.api_key_b)
    else:
        consent = HeadlessConsent(options.user, options.password, options.project)
        consent_b = HeadlessConsent(
            options.user_b or options.user,
            options.password_b or options.password,
            options.project,
        )
        first = oauth_credential(url, "session A", consent)
        second = oauth_credential(url, "session B", consent_b)
    run = uuid.uuid4().hex[:8]
    ids = await session_a(url, first, options.mode, run)
    await session_b(url, second, options.mode_b or options.mode, ids)
    await session_a_again(url, first, options.mode, ids)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="the server's public URL")
    parser.add_argument("--mode", default="auto", choices=["legacy", "auto"])
    parser.add_argument(
        "--mode-b", choices=["legacy", "auto"], help="session B's (default: --mode)"
    )
    parser.add_argument("--api-key", help="session A's API key (hak_...)")
    parser.add_argument("--api-key-b", help="session B's API key")
    parser.add_argument("--user", help="OAuth: the person who consents")
    parser.add_argument("--password", help="OAuth: their password")
    parser.add_argument("--project", help="OAuth: the project slug to grant")
    parser.add_argument("--user-b", help="OAuth: session B's person (default: --user)")
    parser.add_argument("--password-b", help="OAuth: session B's password")
    options = parser.parse_args(argv)
    if options.api_key:
        if not options.api_key_b or options.api_key_b == options.api_key:
            parser.error("--api-key needs --api-key-b, a different key for session B")
    elif not (options.user and options.password and options.project):
        parser.error("give --api-key and --api-key-b, or --user, --password and --project")
    return options


if __name__ == "__main__":
    try:
        asyncio.run(main(parse(sys.argv[1:])))
    except Deviation as deviation:
        print(f"FAIL  {deviation}", file=sys.stderr)
        sys.exit(1)
    print("The continuity protocol held end to end.")
