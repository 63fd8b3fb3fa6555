"""Fuzz /mcp over HTTP at scale: the generators of tests/continuity/mcp/fuzzing.py, 10,000+
requests.

Run by hand from the repository root (not by `make test`):

    .venv/bin/python bench/mcp_fuzz.py                         # its own server, SQLite
    .venv/bin/python bench/mcp_fuzz.py --database postgres     # PostgreSQL on 127.0.0.1:5432
    .venv/bin/python bench/mcp_fuzz.py --url http://127.0.0.1:8000/mcp --api-key hak_...

Without --url it creates a bench database (PostgreSQL: `heyaira_bench_fuzz`, dropped at the
end; SQLite: a temporary file), sets up a project and an API key through the services
(bench/fixtures.py) and starts the real server (`uvicorn heyaira.asgi:application`, DEBUG off)
on 127.0.0.1, as bench/mcp_latency.py does. With --url it fuzzes that server with that key
(it must serve the Host of the URL; point it only at a server you own: it sends writes).

Requests go one at a time over one keep-alive connection. It prints the count of each answer
class (tests/continuity/mcp/fuzzing.py defines them) and the time; the exit status is 1 when any
answer is `unexpected` (a 5xx, a -32603, a plain-text refusal, a 202 owed an answer...). Bounded
by --requests and --time-limit (requests past the limit are generated but not sent).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx2

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # run as a script: bench/ and tests/ are packages of the repo

from bench.mcp_latency import (  # noqa: E402
    BenchFailed,
    bench_database,
    free_port,
    in_django,
    manage,
    server_environment,
    start_server,
    stop_server,
)
from tests.continuity.mcp import fuzzing  # noqa: E402

PROTOCOL_VERSION = "2025-11-25"


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--url", help="fuzz this /mcp URL instead of starting a server")
    parser.add_argument("--api-key", help="the API key for --url (owner or contributor)")
    parser.add_argument("--database", choices=("postgres", "sqlite"), default="sqlite")
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--db-name", default="heyaira_bench_fuzz", help="created, then dropped")
    parser.add_argument("--keep-database", action="store_true")
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0, help="same seed, same requests")
    parser.add_argument("--time-limit", type=float, default=900, help="seconds of fuzzing")
    args = parser.parse_args(argv)
    if bool(args.url) != bool(args.api_key):
        parser.error("--url and --api-key go together")
    if args.requests < 1:
        parser.error("--requests must be at least 1")
    return args


class HttpSender:
    """Sends a FuzzRequest as it is: exactly its headers, its method and its bytes."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.http = httpx2.Client(timeout=60)

    def send(self, request: fuzzing.FuzzRequest) -> fuzzing.Answer:
        built = self.http.build_request(
            request.method, self.url, content=request.body, headers=list(request.headers)
        )
        sent = {name.lower() for name, _ in request.headers}
        for default in (b"accept", b"accept-encoding", b"user-agent"):
            if default not in sent and default.decode() in built.headers:
                del built.headers[default.decode()]
        try:
            response = self.http.send(built)
        except httpx2.HTTPError as error:
            # The server closed the connection or never answered: that is a failure too.
            self.http.close()
            self.http = httpx2.Client(timeout=60)
            body = f"{type(error).__name__}: {error}".encode()
            return fuzzing.Answer(status=599, content_type="", body=body)
        return fuzzing.Answer(
            status=response.status_code,
            content_type=response.headers.get("content-type", ""),
            body=response.content,
        )

    def post(self, message: dict, api_key: str) -> dict:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": PROTOCOL_VERSION,
            "Authorization": f"Bearer {api_key}",
        }
        response = self.http.post(self.url, json=message, headers=headers)
        if response.status_code != 200:
            raise BenchFailed(f"{message['method']}: HTTP {response.status_code} {response.text}")
        return dict(response.json()["result"])


def target_of(sender: HttpSender, api_key: str) -> fuzzing.Target:
    tools = sender.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, api_key)
    call = {"name": "server_identity", "arguments": {}}
    identity = sender.post(
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}, api_key
    )
    parts = urlsplit(sender.url)
    return fuzzing.Target(
        host=parts.netloc,
        origin=f"{parts.scheme}://{parts.netloc}",
        api_key=api_key,
        tools=fuzzing.tools_from_list(tools),
        write_context=identity["structuredContent"]["write_context"],
    )


def fuzz(url: str, api_key: str, args: argparse.Namespace) -> int:
    sender = HttpSender(url)
    target = target_of(sender, api_key)
    started = time.monotonic()
    tally = fuzzing.run(
        sender.send,
        target,
        examples=args.requests,
        seed_value=args.seed,
        time_limit=args.time_limit,
    )
    elapsed = time.monotonic() - started
    rate = tally.total / elapsed if elapsed else 0.0
    print(f"{tally.total:,} requests in {elapsed:.1f} s ({rate:.0f}/s), {tally.skipped} skipped")
    print(tally.report())
    print(f"{tally.failures} unexpected")
    return 1 if tally.failures else 0


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    print(f"HeyAira /mcp fuzz: {args.requests:,} requests, seed {args.seed}")
    if args.url:
        return fuzz(args.url, args.api_key, args)
    with bench_database(args) as database_url, tempfile.TemporaryDirectory() as folder:
        port = free_port()
        env = server_environment(database_url, port)
        manage(env, "migrate", "--noinput")
        made = in_django(env, "setup", username="fuzz", slug="fuzz", tasks=3, receipts=1)
        server = start_server(env, port, Path(folder) / "server.log")
        try:
            status = fuzz(server.mcp_url, made["api_key"], args)
        finally:
            stop_server(server)
        log = (Path(folder) / "server.log").read_text(errors="replace")
        if status and log.strip():
            print("server log (tail):\n" + log[-3000:])
        return status


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchFailed as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
        sys.exit(1)
