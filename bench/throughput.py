"""Throughput: the raw-psycopg floor and HeyAira under gunicorn, measured in one run.

Run by hand from the repository root (not by `make test`; a few minutes):

    .venv/bin/python -m bench.throughput                       # 2 workers, 8 and 32 clients
    .venv/bin/python -m bench.throughput --workers 4 --clients 8,32 --seconds 8
    .venv/bin/python -m bench.throughput --worker-class uvicorn_worker.UvicornWorker  # stock

It creates a PostgreSQL bench database (dropped at the end), sets up a project and an API key
through the services (bench/fixtures.py) and then, in this order:

- per operation, the floor first: `--floor-processes` processes, each on its own psycopg
  connection, run the same transactions HeyAira runs for `task_update` with a work receipt and
  for `memory_add` with an idempotency key, statement for statement (bench/floor.py), for
  `--seconds` each; the best of them is that operation's floor;
- then HeyAira: gunicorn with `--workers` workers of `--worker-class` (runtime.workers: each new
  connection to the worker holding the fewest) and DEBUG off; for each transport (MCP JSON-RPC
  POSTs to /mcp, REST on /api/v1/), operation and client count, that many keep-alive
  connections from this process (a minimal asyncio HTTP/1.1 client, so that the load generator
  costs little) run back to back for `--seconds` after a second of warm-up; each client
  updates its own task.

It prints tx/s, p50/p95/p99 latency, the ratio to the best floor of the same operation, the CPU
each gunicorn worker used (its share of the load) and the server's CPU per request. Every
request must succeed (HTTP 200/201, no tool error): any failure makes the exit status 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import floor
from bench.mcp_latency import (
    REPO,
    BenchFailed,
    bench_database,
    free_port,
    in_django,
    manage,
    percentile,
    server_environment,
)

OPERATIONS = ("task_update", "memory_add")
TRANSPORTS = ("mcp", "rest")
PROTOCOL_VERSION = "2025-11-25"
TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class Phase:
    name: str
    operation: str
    clients: int
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    worker_cpu: dict[int, float] = field(default_factory=dict)  # pid -> CPU seconds
    loadgen_cpu: float = 0.0

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.seconds if self.seconds else 0.0


# --- the server -------------------------------------------------------------------------------


@dataclass
class Gunicorn:
    process: subprocess.Popen[bytes]
    port: int
    log: Path

    def worker_pids(self) -> list[int]:
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        return sorted(int(pid) for pid in children.read_text().split())


def start_gunicorn(env: dict[str, str], args: argparse.Namespace, log: Path) -> Gunicorn:
    port = int(env["HEYAIRA_PUBLIC_URL"].rsplit(":", 1)[1])
    command = [sys.executable, "-m", "gunicorn", "heyaira.asgi:application"]
    command += ["--worker-class", args.worker_class, "--workers", str(args.workers)]
    command += ["--bind", f"127.0.0.1:{port}", "--keep-alive", "75", "--log-level", "warning"]
    with log.open("wb") as output:
        process = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=output, stderr=subprocess.STDOUT
        )
    server = Gunicorn(process, port, log)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise BenchFailed(f"gunicorn exited:\n{log.read_text(errors='replace')}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as answer:
                if answer.status == 200 and len(server.worker_pids()) == args.workers:
                    time.sleep(1)  # every worker has bound its listener
                    return server
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.3)
    raise BenchFailed("gunicorn did not become ready within 90 s")


def stop_gunicorn(server: Gunicorn) -> None:
    if server.process.poll() is None:
        server.process.terminate()
        try:
            server.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait(timeout=5)


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far (/proc/PID/stat fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


# --- a small keep-alive HTTP/1.1 client ---------------------------------------------------------


class Connection:
    """One keep-alive connection; requests are prebuilt bytes, responses parsed minimally."""

    def __init__(self, port: int, api_key: str) -> None:
        self.port = port
        self.auth = f"Bearer {api_key}"
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)

    async def request(
        self, method: str, path: str, body: Any, headers: dict[str, str]
    ) -> tuple[int, bytes]:
        assert self.reader is not None
        assert self.writer is not None
        payload = json.dumps(body).encode() if body is not None else b""
        lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{self.port}"]
        lines += [f"Authorization: {self.auth}", f"Content-Length: {len(payload)}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + payload)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        match = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
        if match is None:
            raise BenchFailed(f"a response without Content-Length: {head[:200]!r}")
        return status, await self.reader.readexactly(int(match.group(1)))

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


MCP_HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": PROTOCOL_VERSION,
}
REST_HEADERS = {"Content-Type": "application/json"}


class Client:
    """One simulated agent: its own connection and its own task."""

    def __init__(self, transport: str, connection: Connection, context: dict[str, str]) -> None:
        self.transport = transport
        self.connection = connection
        self.context = context
        self.tag = uuid.uuid4().hex[:12]
        self.count = 0
        self.task_id = ""
        self.version = 0
        self.next_id = 0

    async def call(self, operation: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if self.transport == "mcp":
            return await self._mcp(operation, arguments)
        return await self._rest(operation, arguments)

    async def _mcp(self, operation: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        message = {
            "jsonrpc": "2.0",
            "id": self.next_id,
            "method": "tools/call",
            "params": {
                "name": operation,
                "arguments": {"write_context": self.context, **arguments},
            },
        }
        status, body = await self.connection.request("POST", "/mcp", message, MCP_HEADERS)
        answer = json.loads(body)
        result = answer.get("result") or {}
        if status != 200 or result.get("isError") or "structuredContent" not in result:
            raise BenchFailed(f"MCP {operation}: HTTP {status} {body[:200]!r}")
        return dict(result["structuredContent"])

    async def _rest(self, operation: str, arguments: dict[str, Any]) -> dict[str, Any]:
        body = {"write_context": self.context, **arguments}
        headers = dict(REST_HEADERS)
        if operation == "task_update":
            path = f"/api/v1/tasks/{body.pop('task_id')}"
            headers["If-Match"] = f'"{body.pop("expected_version")}"'
            method = "PATCH"
        elif operation == "memory_add":
            headers["Idempotency-Key"] = body.pop("idempotency_key")
            path, method = "/api/v1/memories", "POST"
        else:
            body.pop("idempotency_key", None)
            path, method = "/api/v1/tasks", "POST"
        status, answer = await self.connection.request(method, path, body, headers)
        if status not in (200, 201):
            raise BenchFailed(f"REST {operation}: HTTP {status} {answer[:200]!r}")
        return dict(json.loads(answer))

    async def create_task(self) -> None:
        result = await self.call(
            "task_create",
            {
                "title": f"Throughput task {self.tag}",
                "description": "The task one bench client updates.",
                "idempotency_key": f"tp-task-{self.tag}",
            },
        )
        self.task_id, self.version = result["id"], int(result["version"])

    def arguments(self, operation: str) -> dict[str, Any]:
        self.count += 1
        if operation == "memory_add":
            return {
                "kind": "note",
                "title": f"Throughput note {self.count}",
                "content": "Observed during the throughput bench; " * 8,
                "idempotency_key": f"tp-{self.tag}-{self.count}",
            }
        return {
            "task_id": self.task_id,
            "expected_version": self.version,
            "next_step": f"Step {self.count}",
            "work_receipt": {
                "session_ref": f"tp-{self.tag}-{self.count}",
                "summary": "One step of the throughput bench, with its receipt.",
                "tests": [{"name": "make test", "result": "passed"}],
            },
        }

    def observe(self, operation: str, result: dict[str, Any]) -> None:
        if operation == "task_update":
            self.version = int(result["task"]["version"])


async def drive(
    phase: Phase, transport: str, server: Gunicorn, fixture: dict[str, Any], seconds: float
) -> None:
    clients: list[Client] = []
    resource = "mcp" if transport == "mcp" else "api"
    context = {**fixture["write_context"], "resource": f"http://127.0.0.1:{server.port}/{resource}"}
    for _ in range(phase.clients):
        connection = Connection(server.port, fixture["api_key"])
        await connection.open()
        clients.append(Client(transport, connection, context))
    try:
        await asyncio.gather(*(client.create_task() for client in clients))
        warm_until = time.monotonic() + 1.0
        await asyncio.gather(*(_loop(c, phase, warm_until, timed=False) for c in clients))
        pids = server.worker_pids()
        before = {pid: cpu_seconds(pid) for pid in pids}
        mine = time.process_time()
        started = time.monotonic()
        until = started + seconds
        await asyncio.gather(*(_loop(c, phase, until, timed=True) for c in clients))
        phase.seconds = time.monotonic() - started
        phase.loadgen_cpu = time.process_time() - mine
        phase.worker_cpu = {pid: cpu_seconds(pid) - before[pid] for pid in pids}
    finally:
        for client in clients:
            await client.connection.close()


async def _loop(client: Client, phase: Phase, until: float, *, timed: bool) -> None:
    while time.monotonic() < until:
        arguments = client.arguments(phase.operation)
        started = time.perf_counter()
        try:
            result = await client.call(phase.operation, arguments)
        except (BenchFailed, OSError, asyncio.IncompleteReadError, ValueError) as error:
            phase.failures.append(f"{type(error).__name__}: {error}"[:300])
            return  # the connection may be unusable now
        if timed:
            phase.latencies.append(time.perf_counter() - started)
        client.observe(phase.operation, result)


# --- the report -------------------------------------------------------------------------------


def print_phase(phase: Phase, floors: dict[str, float]) -> None:
    if phase.latencies:
        p50 = percentile(phase.latencies, 50) * 1000
        p95 = percentile(phase.latencies, 95) * 1000
        p99 = percentile(phase.latencies, 99) * 1000
        timing = f"{phase.rate:8.0f} {p50:8.1f} {p95:8.1f} {p99:8.1f}"
    else:
        timing = f"{'-':>8} {'-':>8} {'-':>8} {'-':>8}"
    best = floors.get(phase.operation, 0.0)
    ratio = f"{phase.rate / best * 100:6.1f}%" if best and phase.latencies else f"{'-':>7}"
    cpu = ""
    if phase.worker_cpu:
        total = sum(phase.worker_cpu.values())
        shares = " ".join(
            f"{seconds / phase.seconds * 100:3.0f}%" for seconds in phase.worker_cpu.values()
        )
        per_request = total / len(phase.latencies) * 1000 if phase.latencies else 0.0
        loadgen = phase.loadgen_cpu / len(phase.latencies) * 1000 if phase.latencies else 0.0
        cpu = f"  [{shares}]  {per_request:5.2f} ms  {loadgen:5.2f} ms"
    print(
        f"{phase.name:<8} {phase.operation:<12} {phase.clients:>7} {timing} {ratio} "
        f"{len(phase.failures):>6}{cpu}",
        flush=True,
    )


def print_header(args: argparse.Namespace) -> None:
    print(
        f"HeyAira throughput bench: PostgreSQL, gunicorn {args.workers} x {args.worker_class}, "
        f"clients {','.join(map(str, args.clients))}, {args.seconds:.0f} s per phase"
    )
    print(
        f"python {platform.python_version()}, {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.1f} at the start; floor: {args.floor_processes} psycopg processes; "
        f"DATABASE_POOL_SIZE {os.environ.get('DATABASE_POOL_SIZE', 'default')}"
    )
    print()
    print(
        f"{'what':<8} {'operation':<12} {'clients':>7} {'tx/s':>8} {'p50 ms':>8} {'p95 ms':>8} "
        f"{'p99 ms':>8} {'floor':>7} {'failed':>6}  [CPU per worker]  server CPU/req  "
        "loadgen CPU/req"
    )
    print("-" * 127)


# --- main -------------------------------------------------------------------------------------


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--db-name", default="heyaira_bench_throughput")
    parser.add_argument("--keep-database", action="store_true")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--worker-class", default="runtime.workers.BalancedUvicornWorker")
    parser.add_argument("--clients", default="8,32")
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--floor-processes", default="2,8")
    parser.add_argument("--transports", default="mcp,rest")
    parser.add_argument("--operations", default=",".join(OPERATIONS))
    parser.add_argument("--time-limit", type=float, default=420)
    args = parser.parse_args(argv)
    args.clients = [int(n) for n in args.clients.split(",") if n]
    args.floor_processes = [int(n) for n in args.floor_processes.split(",") if n]
    args.transports = [t for t in args.transports.split(",") if t]
    args.operations = [o for o in args.operations.split(",") if o]
    args.database = "postgres"
    if not set(args.transports) <= set(TRANSPORTS) or not set(args.operations) <= set(OPERATIONS):
        parser.error(f"--transports takes {TRANSPORTS}, --operations {OPERATIONS}")
    return args


def run_floor(
    args: argparse.Namespace, database_url: str, fixture: dict[str, Any], operation: str
) -> list[Phase]:
    phases = []
    for processes in args.floor_processes:
        phase = Phase("floor", operation, processes)
        result = floor.run(database_url, fixture, operation, processes, args.seconds)
        phase.seconds, phase.latencies, phase.failures = result
        phases.append(phase)
        print_phase(phase, {})
    return phases


async def run_server(
    args: argparse.Namespace,
    server: Gunicorn,
    fixture: dict[str, Any],
    operation: str,
    floors: dict[str, float],
) -> list[Phase]:
    phases = []
    for transport in args.transports:
        for clients in args.clients:
            phase = Phase(transport, operation, clients)
            await drive(phase, transport, server, fixture, args.seconds)
            phases.append(phase)
            print_phase(phase, floors)
    return phases


async def run_all(
    args: argparse.Namespace, server: Gunicorn, database_url: str, fixture: dict[str, Any]
) -> list[Phase]:
    """Per operation, the floor and then HeyAira right after it: on a machine shared with other
    work, the two see the same neighbours."""
    phases: list[Phase] = []
    for operation in args.operations:
        measured = await asyncio.to_thread(run_floor, args, database_url, fixture, operation)
        floors = {operation: max(phase.rate for phase in measured)}
        phases += measured
        phases += await run_server(args, server, fixture, operation, floors)
    return phases


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    print_header(args)
    started = time.monotonic()
    with bench_database(args) as database_url, tempfile.TemporaryDirectory() as folder:
        port = free_port()
        env = server_environment(database_url, port)
        manage(env, "migrate", "--noinput")
        made = in_django(env, "setup", username="bench", slug="bench", tasks=3, receipts=1)
        fixture = {"api_key": made["api_key"], **in_django(env, "floor_fixture", slug="bench")}
        server = start_gunicorn(env, args, Path(folder) / "gunicorn.log")
        phases: list[Phase] = []
        try:
            phases = asyncio.run(
                asyncio.wait_for(run_all(args, server, database_url, fixture), args.time_limit)
            )
        except TimeoutError:
            print(f"FAILED: the run passed --time-limit ({args.time_limit:.0f} s)")
            return 1
        finally:
            stop_gunicorn(server)
            log = (Path(folder) / "gunicorn.log").read_text(errors="replace")
    failures = [message for phase in phases for message in phase.failures]
    print(
        f"\ntotal {time.monotonic() - started:.0f} s (load average {os.getloadavg()[0]:.1f} at "
        f"the end); {len(failures)} failed requests"
    )
    for message in failures[:10]:
        print(f"  {message}")
    if failures and log.strip():
        print("gunicorn log (tail):\n" + log[-3000:])
    return 1 if failures else 0


if __name__ == "__main__":
    multiprocessing.set_start_method("spawn")
    try:
        sys.exit(main())
    except BenchFailed as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
        sys.exit(1)
