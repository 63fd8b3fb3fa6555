"""Latency of /mcp and of the REST API beside it, with an API key, at 1,000 and 100,000 memories.

Run by hand from the repository root (not by `make test`):

    .venv/bin/python bench/mcp_latency.py                      # PostgreSQL on 127.0.0.1:5432
    .venv/bin/python bench/mcp_latency.py --database sqlite
    .venv/bin/python bench/mcp_latency.py --sizes 200,2000 --calls 50

It creates a bench database (PostgreSQL: `heyaira_bench`, dropped at the end; SQLite: a
temporary file), migrates it, sets up a project with tasks, receipts, a running summary and an
API key through the services, bulk-loads memories (bench/fixtures.py), and starts the real
server (`uvicorn heyaira.asgi:application`, one worker, DEBUG off) on 127.0.0.1.

For each size it times `--calls` sequential calls of server_identity, continuity_context,
memory_add and task_update after `--warmup` untimed ones, with two clients:
- raw: JSON-RPC `tools/call` POSTs with httpx2 on one keep-alive connection (2025-11-25, no
  initialize: the endpoint is stateless). This measures the server.
- sdk: the official MCP SDK client (`mcp.Client`, legacy mode), which adds its own work
  (request and result validation) to each call.
- rest: the same operations over /api/v1/ with httpx2 on one keep-alive connection (GET
  identity, GET context, POST memories with Idempotency-Key, PATCH tasks/{id} with If-Match).
continuity_context's query count is measured inside Django (CaptureQueriesContext around the
authentication and the operation, in `manage.py shell` against the same database); its bytes
are those of structuredContent as received over HTTP (compact JSON, UTF-8).

The server inherits the environment: `DATABASE_CONN_MAX_AGE=60` measures persistent database
connections (the default, 0, opens one per unit of ORM work: two per MCP call, authentication
and the tool).

Every call must answer HTTP 200 with a result that is not isError; any failure makes the exit
status 1. The whole run is bounded by --time-limit.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import random
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import psycopg
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

REPO = Path(__file__).resolve().parent.parent
RESULT_MARKER = "@@BENCH@@"  # as in bench/fixtures.py
TOOLS = ("server_identity", "continuity_context", "memory_add", "task_update")
PROTOCOL_VERSION = "2025-11-25"
BENCH_SECRET_KEY = "bench-secret-key-not-for-production-0123456789abcdef"  # noqa: S105
BENCH_PEPPER = "bench-api-key-pepper-not-for-production-0123456789"
DB_NAME = re.compile(r"^heyaira_bench[a-z0-9_]*$")


class BenchFailed(Exception):
    pass


@dataclass
class Timings:
    size: int
    client: str
    tool: str
    seconds: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


@dataclass
class Fixture:
    api_key: str
    task_id: str
    task_version: int
    write_context: dict[str, str] = field(default_factory=dict)


@dataclass
class Server:
    url: str
    env: dict[str, str]
    process: subprocess.Popen[bytes] | None = None
    log: Path | None = None

    @property
    def mcp_url(self) -> str:
        return f"{self.url}/mcp"


# --- the database and the server --------------------------------------------------------------


@contextmanager
def bench_database(args: argparse.Namespace) -> Iterator[str]:
    """A fresh, empty database for this run; its DATABASE_URL. Dropped afterwards."""
    if args.database == "sqlite":
        with tempfile.TemporaryDirectory(prefix="heyaira_bench_") as folder:
            yield f"sqlite:///{Path(folder) / 'bench.sqlite3'}"
        return
    if not DB_NAME.match(args.db_name):
        raise BenchFailed(f"--db-name must match {DB_NAME.pattern}: it is dropped and recreated")
    base = args.postgres.rstrip("/")
    with psycopg.connect(f"{base}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{args.db_name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{args.db_name}"')
    try:
        yield f"{base}/{args.db_name}"
    finally:
        if not args.keep_database:
            with psycopg.connect(f"{base}/postgres", autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{args.db_name}" WITH (FORCE)')


def server_environment(database_url: str, port: int) -> dict[str, str]:
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST"))}
    for name in ("ALLOWED_HOSTS", "HEYAIRA_MCP_ALLOWED_ORIGINS"):
        inherited.pop(name, None)
    return {
        **inherited,
        "DJANGO_SETTINGS_MODULE": "heyaira.settings",
        "DEBUG": "false",
        "SECRET_KEY": BENCH_SECRET_KEY,
        "HEYAIRA_API_KEY_PEPPER": BENCH_PEPPER,
        "HEYAIRA_PUBLIC_URL": f"http://127.0.0.1:{port}",
        "HEYAIRA_INSTANCE": "bench",
        "DATABASE_URL": database_url,
        "LOG_LEVEL": "WARNING",
        "PYTHONUNBUFFERED": "1",
    }


def manage(env: dict[str, str], *args: str, timeout: float = 600) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise BenchFailed(f"manage.py {args[0]} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def in_django(env: dict[str, str], function: str, **kwargs: Any) -> Any:
    """Call bench.fixtures.<function>(**kwargs) in `manage.py shell`; its emitted JSON."""
    code = f"from bench.fixtures import {function}\n{function}(**{kwargs!r})"
    output = manage(env, "shell", "-c", code)
    marker = output.rindex(RESULT_MARKER)
    return json.loads(output[marker + len(RESULT_MARKER) :].splitlines()[0])


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(env: dict[str, str], port: int, log: Path) -> Server:
    server = Server(url=f"http://127.0.0.1:{port}", env=env, log=log)
    command = [sys.executable, "-m", "uvicorn", "heyaira.asgi:application"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--no-access-log"]
    command += ["--log-level", "warning"]
    with log.open("wb") as output:
        server.process = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=output, stderr=subprocess.STDOUT
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise BenchFailed(f"the server exited:\n{log.read_text(errors='replace')}")
        try:
            with urllib.request.urlopen(f"{server.url}/healthz", timeout=2) as answer:  # noqa: S310
                if answer.status == 200:
                    return server
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.2)
    raise BenchFailed("the server did not answer /healthz within 60 s")


def stop_server(server: Server) -> None:
    if server.process is not None and server.process.poll() is None:
        server.process.terminate()
        try:
            server.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait(timeout=5)


# --- the calls --------------------------------------------------------------------------------

CallTool = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


class Workload:
    """The arguments of each timed call; task_update follows the task's version."""

    def __init__(self, fixture: Fixture, size: int, client: str) -> None:
        self.fixture = fixture
        self.tag = f"{size}-{client}"
        self.rng = random.Random(f"{size}-{client}")
        self.count = 0

    def arguments(self, tool: str) -> dict[str, Any]:
        self.count += 1
        context = self.fixture.write_context
        if tool == "memory_add":
            length = int(min(4000, self.rng.lognormvariate(5.5, 0.8)))
            return {
                "write_context": context,
                "kind": "note",
                "title": f"Bench note {self.count}",
                "content": ("Observed during the latency bench. " * (length // 35 + 1))[:length],
                "idempotency_key": f"bench-{self.tag}-{self.count}",
            }
        if tool == "task_update":
            return {
                "write_context": context,
                "task_id": self.fixture.task_id,
                "expected_version": self.fixture.task_version,
                "next_step": f"Bench step {self.tag}-{self.count}",
            }
        return {}

    def observe(self, tool: str, result: dict[str, Any]) -> None:
        if tool == "task_update":
            self.fixture.task_version = int(result["task"]["version"])


async def time_tool(
    call: CallTool, workload: Workload, timings: Timings, *, warmup: int, calls: int
) -> None:
    for n in range(warmup + calls):
        arguments = workload.arguments(timings.tool)
        started = time.perf_counter()
        try:
            result = await call(timings.tool, arguments)
        except Exception as error:
            timings.failures.append(f"{type(error).__name__}: {error}"[:300])
            continue
        elapsed = time.perf_counter() - started
        workload.observe(timings.tool, result)
        if n >= warmup:
            timings.seconds.append(elapsed)


class RawClient:
    """JSON-RPC over plain HTTP POSTs: what the server costs, with little client work."""

    def __init__(self, server: Server, api_key: str) -> None:
        self.url = server.mcp_url
        self.http = httpx2.AsyncClient(
            timeout=30,
            headers={
                "Authorization": f"Bearer {api_key}",
                "Accept": "application/json, text/event-stream",
                "Content-Type": "application/json",
                "MCP-Protocol-Version": PROTOCOL_VERSION,
            },
        )
        self.next_id = 0
        self.last_body_bytes = 0

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        message = {
            "jsonrpc": "2.0",
            "id": self.next_id,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
        response = await self.http.post(self.url, content=json.dumps(message))
        if response.status_code != 200:
            raise BenchFailed(f"HTTP {response.status_code}: {response.text[:200]}")
        self.last_body_bytes = len(response.content)
        answer = response.json()
        if "result" not in answer:
            raise BenchFailed(f"JSON-RPC error: {answer.get('error')}")
        result = answer["result"]
        if result.get("isError"):
            raise BenchFailed(f"isError: {json.dumps(result.get('structuredContent'))[:200]}")
        return dict(result["structuredContent"])

    async def close(self) -> None:
        await self.http.aclose()


class RestClient:
    """The same operations over the REST API: what HTTP resources cost beside JSON-RPC."""

    def __init__(self, server: Server, api_key: str) -> None:
        self.http = httpx2.AsyncClient(
            base_url=f"{server.url}/api/v1/",
            timeout=30,
            headers={"Authorization": f"Bearer {api_key}"},
        )
        self.write_context: dict[str, str] = {}

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if not self.write_context:  # the REST resource's own, from GET identity
            self.write_context = (await self._send("GET", "identity"))["write_context"]
        body = {**arguments, "write_context": self.write_context}
        if tool == "server_identity":
            return await self._send("GET", "identity")
        if tool == "continuity_context":
            return await self._send("GET", "context")
        if tool == "memory_add":
            key = {"Idempotency-Key": body.pop("idempotency_key")}
            return await self._send("POST", "memories", body, key)
        if tool == "task_update":
            task, version = body.pop("task_id"), body.pop("expected_version")
            return await self._send("PATCH", f"tasks/{task}", body, {"If-Match": f'"{version}"'})
        raise BenchFailed(f"no REST route for {tool}")

    async def _send(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> dict[str, Any]:
        response = await self.http.request(method, path, json=body, headers=headers)
        if response.status_code not in (200, 201):
            raise BenchFailed(f"HTTP {response.status_code}: {response.text[:200]}")
        return dict(response.json())

    async def close(self) -> None:
        await self.http.aclose()


async def with_sdk_client(
    server: Server, api_key: str, body: Callable[[CallTool], Awaitable[None]]
) -> None:
    async with httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {api_key}"}, timeout=30
    ) as http:
        transport = streamable_http_client(server.mcp_url, http_client=http)
        async with Client(transport, mode="legacy") as client:

            async def call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
                result = await client.call_tool(tool, arguments)
                if result.is_error or result.structured_content is None:
                    raise BenchFailed(f"isError: {json.dumps(result.structured_content)[:200]}")
                return dict(result.structured_content)

            await body(call)


@dataclass
class ContextFigures:
    size: int
    memories: str  # as continuity_context reports it ("10,000+" once the count is capped)
    request_queries: int
    operation_queries: int
    structured_bytes: int
    body_bytes: int


async def measure_size(
    server: Server, fixture: Fixture, size: int, args: argparse.Namespace
) -> tuple[list[Timings], ContextFigures]:
    results: list[Timings] = []
    raw = RawClient(server, fixture.api_key)
    rest = RestClient(server, fixture.api_key)
    try:
        context = await raw.call("continuity_context", {})
        figures = in_django(server.env, "context_queries", api_key=fixture.api_key)
        numbers = ContextFigures(
            size=size,
            memories=f"{int(context['counts']['memories']):,}"
            + ("+" if "memories" in context["limits"].get("counts_capped", []) else ""),
            request_queries=figures["request_queries"],
            operation_queries=figures["operation_queries"],
            structured_bytes=len(
                json.dumps(context, ensure_ascii=False, separators=(",", ":")).encode()
            ),
            body_bytes=raw.last_body_bytes,
        )
        # Reads first, so that they see exactly `size` memories; then the writes.
        for tool in TOOLS:
            for client in args.clients:
                timings = Timings(size=size, client=client, tool=tool)
                results.append(timings)
                workload = Workload(fixture, size, client)
                if client in ("raw", "rest"):
                    call = raw.call if client == "raw" else rest.call
                    await time_tool(call, workload, timings, warmup=args.warmup, calls=args.calls)
                else:

                    async def run(
                        call: CallTool, w: Workload = workload, t: Timings = timings
                    ) -> None:
                        await time_tool(call, w, t, warmup=args.warmup, calls=args.calls)

                    await with_sdk_client(server, fixture.api_key, run)
    finally:
        await raw.close()
        await rest.close()
    return results, numbers


# --- the report -------------------------------------------------------------------------------


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def print_report(
    args: argparse.Namespace, timings: list[Timings], figures: list[ContextFigures]
) -> None:
    print()
    print(
        f"{'memories':>9}  {'client':<6} {'tool':<19} {'n':>4} {'p50 ms':>8} {'p95 ms':>8} "
        f"{'max ms':>8} {'failed':>6}"
    )
    print("-" * 78)
    for t in timings:
        if t.seconds:
            p50, p95, top = (
                percentile(t.seconds, 50) * 1000,
                percentile(t.seconds, 95) * 1000,
                max(t.seconds) * 1000,
            )
            line = f"{p50:8.1f} {p95:8.1f} {top:8.1f}"
        else:
            line = f"{'-':>8} {'-':>8} {'-':>8}"
        print(
            f"{t.size:>9,}  {t.client:<6} {t.tool:<19} {len(t.seconds):>4} {line} "
            f"{len(t.failures):>6}"
        )
    print()
    print("continuity_context (default limits), queries counted inside Django:")
    print(
        f"{'memories':>9}  {'counted':>10}  {'queries: request':>16}  {'operation':>9}  "
        f"{'structuredContent B':>19}  {'HTTP body B':>11}"
    )
    for f in figures:
        print(
            f"{f.size:>9,}  {f.memories:>10}  {f.request_queries:>16}  {f.operation_queries:>9}  "
            f"{f.structured_bytes:>19,}  {f.body_bytes:>11,}"
        )


def print_header(args: argparse.Namespace) -> None:
    print(
        f"HeyAira MCP latency bench: {args.database}, uvicorn (1 worker, DEBUG off), "
        f"{args.calls} timed calls per tool after {args.warmup} warm-up, sequential"
    )
    print(
        f"python {platform.python_version()}, {os.cpu_count()} CPUs (load average "
        f"{os.getloadavg()[0]:.1f} at the start), clients: "
        f"{', '.join(args.clients)} (raw = httpx2 JSON-RPC POSTs; sdk = mcp.Client, legacy "
        "mode; rest = httpx2 on /api/v1/)"
    )


# --- main -------------------------------------------------------------------------------------


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--database", choices=("postgres", "sqlite"), default="postgres")
    parser.add_argument(
        "--postgres",
        default="postgres://postgres@127.0.0.1:5432",
        help="PostgreSQL server URL, without a database name",
    )
    parser.add_argument("--db-name", default="heyaira_bench", help="created, then dropped")
    parser.add_argument("--keep-database", action="store_true")
    parser.add_argument("--sizes", default="1000,100000", help="memories, comma-separated")
    parser.add_argument("--calls", type=int, default=100, help="timed calls per tool and client")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--clients", default="raw,sdk,rest", help="raw, sdk, rest, or a list")
    parser.add_argument("--time-limit", type=float, default=600, help="seconds for the whole run")
    args = parser.parse_args(argv)
    args.sizes = sorted(int(size) for size in args.sizes.split(","))
    args.clients = [c for c in args.clients.split(",") if c]
    if not set(args.clients) <= {"raw", "sdk", "rest"} or not args.clients:
        parser.error("--clients takes raw, sdk, rest or a comma-separated list of them")
    if args.calls < 1 or args.warmup < 0:
        parser.error("--calls must be at least 1 and --warmup at least 0")
    return args


async def run(args: argparse.Namespace, server: Server, fixture: Fixture) -> tuple[Any, Any]:
    identity_client = RawClient(server, fixture.api_key)
    try:
        identity = await identity_client.call("server_identity", {})
    finally:
        await identity_client.close()
    fixture.write_context = dict(identity["write_context"])
    timings: list[Timings] = []
    figures: list[ContextFigures] = []
    for size in args.sizes:
        # One COPY of up to a million rows: no statement timeout for the loader (the server
        # keeps its own).
        loader = {**server.env, "DATABASE_STATEMENT_TIMEOUT_MS": "0"}
        loaded = in_django(loader, "load_memories", slug="bench", target=size)
        print(
            f"loaded {loaded['added']:,} memories in {loaded['seconds']} s "
            f"({loaded['memories']:,} in the project)",
            flush=True,
        )
        started = time.monotonic()
        size_timings, numbers = await measure_size(server, fixture, size, args)
        timings += size_timings
        figures.append(numbers)
        print(f"timed {size:,} memories in {time.monotonic() - started:.0f} s", flush=True)
    return timings, figures


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    print_header(args)
    started = time.monotonic()
    with bench_database(args) as database_url, tempfile.TemporaryDirectory() as folder:
        port = free_port()
        env = server_environment(database_url, port)
        manage(env, "migrate", "--noinput")
        made = in_django(env, "setup", username="bench", slug="bench")
        fixture = Fixture(made["api_key"], made["task_id"], made["task_version"])
        print(f"database ready in {time.monotonic() - started:.0f} s", flush=True)
        server = start_server(env, port, Path(folder) / "server.log")
        try:
            timings, figures = asyncio.run(
                asyncio.wait_for(run(args, server, fixture), args.time_limit)
            )
        except TimeoutError:
            print(f"FAILED: the run passed --time-limit ({args.time_limit:.0f} s)")
            return 1
        finally:
            stop_server(server)
            server_log = (Path(folder) / "server.log").read_text(errors="replace")
    print_report(args, timings, figures)
    failures = [(t, message) for t in timings for message in t.failures]
    print(
        f"\ntotal {time.monotonic() - started:.0f} s (load average {os.getloadavg()[0]:.1f} at "
        f"the end); {len(failures)} failed calls"
    )
    for t, message in failures[:10]:
        print(f"  {t.size:,} {t.client} {t.tool}: {message}")
    if failures and server_log.strip():
        print("server log (tail):\n" + server_log[-3000:])
    return 1 if failures else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchFailed as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
        sys.exit(1)
