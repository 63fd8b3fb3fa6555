#!/usr/bin/env python
"""The continuity protocol, end to end, against a running HeyAira server, on the client SDK.

Two sessions, each with its own credential, are played with heyaira-client (client/), which
runs on the official MCP SDK. Each session pins an identity profile (resource, instance,
project), so every write goes through the SDK's checks:

  A profile that pins another instance is refused before anything is written.
  Session A verifies the server's identity, records a decision and a note and creates a task
  (each with an idempotency key, journaled before it is sent), retries all three with the same
  keys (the server replays them: no duplicates), retries one with a changed payload
  (idempotency_conflict), and closes.
  Session B recovers everything with recover() (server_identity checked, then one
  continuity_context), reads the task, claims it with expected_version, tries a stale version
  (stale_version, nothing changed), completes the task with a work receipt, retries the receipt
  (duplicate_receipt, nothing changed), and stores its running summary.
  Session A, connecting again, sees the new state and B's running summary.

Credentials: `--api-key KEY_A --api-key-b KEY_B`, or OAuth with the SDK's OAuthClientProvider
(discovery, dynamic registration, PKCE, resource) and headless consent for a named person:
`--user NAME --password PASSWORD` (each session registers its own client). `--project SLUG`
and `--instance ID` are what the profiles pin (the quick start's `demo` and `local`).

Each step is printed; any deviation exits with status 1.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import sys
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

# The client package, from the source tree when it is not installed (`pip install ./client`).
sys.path.insert(1, str(Path(__file__).resolve().parent.parent / "client" / "src"))

from heyaira_client import (
    HeyAira,
    Journal,
    NotVerified,
    Profile,
    ProfileMismatch,
    RunningSummary,
    SummaryRequest,
    ToolError,
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
class Session:
    """One agent session: its pinned profile, its credential, its own journal."""

    profile: Profile
    journal: Journal
    auth: OAuthClientProvider | None = None

    def connect(self) -> HeyAira:
        return HeyAira(self.profile, journal=self.journal, auth=self.auth)


def oauth_provider(url: str, name: str, consent: HeadlessConsent) -> OAuthClientProvider:
    return OAuthClientProvider(
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


async def refused(code: str, write: Any) -> None:
    try:
        await write
    except ToolError as error:
        expect(error.code == code, f"expected {code}, got {error.code}: {error.message}")
        return
    raise Deviation(f"expected {code}, the write succeeded")


def describe(heyaira: HeyAira) -> str:
    identity = heyaira.identity
    assert identity is not None
    p = identity.principal
    return (
        f"server_identity matches the profile: {identity.resource}, instance "
        f"{identity.instance}, project {identity.project.slug}, {p.actor} as {p.role} "
        f"({p.credential})"
    )


# --- the protocol ---------------------------------------------------------------------------


async def wrong_instance(session: Session) -> None:
    print("A profile pinning another instance", flush=True)
    profile = dataclasses.replace(session.profile, instance="some-other-instance")
    async with HeyAira(profile, journal=session.journal, auth=session.auth) as heyaira:
        try:
            await heyaira.verify()
        except ProfileMismatch as mismatch:
            expect(mismatch.field == "instance", f"mismatch on {mismatch.field}")
        else:
            raise Deviation("a profile pinning another instance was accepted")
        try:
            await heyaira.note("This note must never be written.")
        except NotVerified:
            step("ProfileMismatch on instance; the note was refused before it was sent")
            return
    raise Deviation("a write went through an unverified connection")


async def session_a(session: Session, run: str) -> dict[str, str]:
    print(f"Session A ({session.profile.mode})", flush=True)
    async with session.connect() as heyaira:
        await heyaira.verify()
        step(describe(heyaira))

        def decision(content: str = "Production keeps HeyAira's state in PostgreSQL.") -> Any:
            return heyaira.memory_add(
                kind="decision",
                title=f"Store continuity in PostgreSQL [{run}]",
                content=content,
                rationale="Transactions, row locks and full-text search in one store.",
                source="continuity smoke test",
                idempotency_key=f"smoke-{run}-decision",
            )

        writes: dict[str, Callable[[], Any]] = {
            "decision": decision,
            "note": lambda: heyaira.memory_add(
                kind="note",
                title=f"Where the runbook lives [{run}]",
                content="The runbook is docs/operating.md.",
                idempotency_key=f"smoke-{run}-note",
            ),
            "task": lambda: heyaira.task_create(
                title=f"Finish the handoff check [{run}]",
                description="Done when a second session completes it with a receipt.",
                next_step="Claim it from another session.",
                idempotency_key=f"smoke-{run}-task",
            ),
        }
        created = {name: await write() for name, write in writes.items()}
        step(
            f"recorded decision {created['decision'].id}, note {created['note'].id}, "
            f"task {created['task'].id} (version {created['task'].raw['version']})"
        )
        for name, write in writes.items():
            again = await write()
            expect(again.raw == created[name].raw, f"retrying the {name} did not replay it")
        step("retried all three with the same keys: the original results, no duplicates")
        await refused("idempotency_conflict", decision("A different decision under the same key."))
        step("the same key with a changed payload: idempotency_conflict")
    step("session A closed")
    return {name: value.id for name, value in created.items()}


def summarizer(request: SummaryRequest) -> str:
    return (
        "# Running summary\n\n- Goal: finish the handoff check.\n"
        f"- Done: {len(request.turns)} turns, the task completed with a receipt.\n"
        "- Pending: nothing.\n\nLet me know if you need anything else!"
    )


async def session_b(session: Session, ids: dict[str, str]) -> None:
    print(f"Session B ({session.profile.mode}, its own credential)", flush=True)
    async with session.connect() as heyaira:
        recovery = await heyaira.recover()
        step(describe(heyaira))
        context = recovery.context
        memories = {m.id: m for m in context.memories}
        expect(memories.get(ids["decision"]) is not None, "the decision is missing")
        expect(memories[ids["decision"]].kind == "decision", "the decision is not a decision")
        expect(ids["note"] in memories, "the note is missing from continuity_context")
        expect(ids["task"] in {t.id for t in context.tasks}, "the task is missing")
        step(
            f"recover(): {context.counts['memories']} memories, {context.counts['open_tasks']} "
            "open tasks; the decision, note and task are there"
        )
        task = (await heyaira.task_get(ids["task"])).task
        expect((task.status, task.version) == ("todo", 1), f"unexpected task {task}")
        step(f"task_get: {task.status}, version {task.version}, next: {task.next_step}")
        claimed = await heyaira.task_update(
            task.id,
            expected_version=1,
            status="in_progress",
            next_step="Complete it with a receipt.",
        )
        expect(claimed.task.version == 2, "claiming did not move the version to 2")
        step("claimed with expected_version 1: in_progress, version 2")
        await refused(
            "stale_version", heyaira.task_update(task.id, expected_version=1, status="blocked")
        )
        after = (await heyaira.task_get(task.id)).task
        expect((after.status, after.version) == ("in_progress", 2), "a stale update changed it")
        step("a stale expected_version: stale_version, task unchanged")
        receipt = {
            "session_ref": f"smoke-session-b-{uuid.uuid4().hex[:8]}",
            "summary": "Completed the handoff check from a second session.",
            "tests": [{"name": "scripts/continuity_protocol_smoke.py", "result": "passed"}],
            "commits": ["0123456789abcdef0123456789abcdef01234567"],
        }

        def finish() -> Any:
            return heyaira.task_update(
                task.id, expected_version=2, status="done", work_receipt=receipt
            )

        done = await finish()
        expect(done.task.status == "done" and done.receipt is not None, "not completed")
        step(f"completed with receipt {done.receipt.id}: done, version 3")
        await refused("duplicate_receipt", finish())
        final = await heyaira.task_get(task.id)
        expect(final.task.version == 3, "the receipt retry changed the task")
        expect(len(final.receipts) == 1, "the receipt retry added a receipt")
        step("the same receipt again: duplicate_receipt, task and receipts unchanged")
    summary = RunningSummary(
        session.profile,
        summarizer,
        connect=session.connect,
        lock_dir=session.journal.path.parent / "locks",
    )
    expect(summary.after_turn([], force=True), "the running summary update did not start")
    summary.wait(60)
    expect(summary.last_error is None, f"the running summary failed: {summary.last_error}")
    step("stored the running summary in the background (closing chatter cut)")
    step("session B closed")


async def session_a_again(session: Session, ids: dict[str, str]) -> None:
    print(f"Session A again ({session.profile.mode})", flush=True)
    async with session.connect() as heyaira:
        recovery = await heyaira.recover(agent="smoke-session-b")
        detail = await heyaira.task_get(ids["task"])
        expect(detail.task.status == "done", "session A does not see the task done")
        expect(len(detail.receipts) == 1, "session A does not see the receipt")
        context = recovery.context
        expect(ids["task"] not in {t.id for t in context.tasks}, "the done task is still open")
        expect(ids["task"] in {r.task_id for r in context.receipts}, "the receipt is missing")
        state = context.state
        expect(state is not None and state.agent == "smoke-session-b", "no running summary")
        assert state is not None
        expect(state.preview.startswith("# Running summary"), "the running summary is wrong")
        expect("Let me know" not in state.preview, "the closing chatter was stored")
        step("sees the task done, its receipt, B's running summary, and no open task for it")


def profile(options: argparse.Namespace, name: str, mode: str, credential: str) -> Profile:
    return Profile(
        name=name,
        url=f"{options.url.rstrip('/')}/mcp",
        instance=options.instance,
        project=options.project,
        credential=credential,
        agent=name,
        mode=mode,  # type: ignore[arg-type]
    )


async def main(options: argparse.Namespace, journal_dir: Path) -> None:
    url = options.url.rstrip("/")
    mode_b = options.mode_b or options.mode
    journal = Journal(journal_dir / "journal.sqlite3")  # a scratch journal, not ~/.local/state
    if options.api_key:
        first = Session(profile(options, "smoke-session-a", options.mode, "env:SMOKE_A"), journal)
        second = Session(profile(options, "smoke-session-b", mode_b, "env:SMOKE_B"), journal)
    else:
        consent = HeadlessConsent(options.user, options.password, options.project)
        consent_b = HeadlessConsent(
            options.user_b or options.user, options.password_b or options.password, options.project
        )
        first = Session(
            profile(options, "smoke-session-a", options.mode, "oauth"),
            journal,
            oauth_provider(url, "session A", consent),
        )
        second = Session(
            profile(options, "smoke-session-b", mode_b, "oauth"),
            journal,
            oauth_provider(url, "session B", consent_b),
        )
    run = uuid.uuid4().hex[:8]
    await wrong_instance(first)
    ids = await session_a(first, run)
    await session_b(second, ids)
    await session_a_again(first, ids)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="the server's public URL")
    parser.add_argument("--mode", default="auto", choices=["legacy", "auto"])
    parser.add_argument(
        "--mode-b", choices=["legacy", "auto"], help="session B's (default: --mode)"
    )
    parser.add_argument("--instance", default="local", help="the instance the profiles pin")
    parser.add_argument("--project", default="demo", help="the project slug the profiles pin")
    parser.add_argument("--api-key", help="session A's API key (hak_...)")
    parser.add_argument("--api-key-b", help="session B's API key")
    parser.add_argument("--user", help="OAuth: the person who consents")
    parser.add_argument("--password", help="OAuth: their password")
    parser.add_argument("--user-b", help="OAuth: session B's person (default: --user)")
    parser.add_argument("--password-b", help="OAuth: session B's password")
    options = parser.parse_args(argv)
    if options.api_key:
        if not options.api_key_b or options.api_key_b == options.api_key:
            parser.error("--api-key needs --api-key-b, a different key for session B")
    elif not (options.user and options.password):
        parser.error("give --api-key and --api-key-b, or --user and --password")
    return options


if __name__ == "__main__":
    arguments = parse(sys.argv[1:])
    if arguments.api_key:
        # The profiles read their credentials from the environment, as a harness's would.
        os.environ["SMOKE_A"], os.environ["SMOKE_B"] = arguments.api_key, arguments.api_key_b
    try:
        with tempfile.TemporaryDirectory(prefix="heyaira-smoke-journal-") as scratch:
            asyncio.run(main(arguments, Path(scratch)))
    except Deviation as deviation:
        print(f"FAIL  {deviation}", file=sys.stderr)
        sys.exit(1)
    print("The continuity protocol held end to end.")
