"""memory_search at size: p50/p95 over REST and MCP for common words, rare words, no match,
negations, phrases and hostile strings, and the plan PostgreSQL runs (the GIN index).

Run by hand from the repository root (not by `make test`):

    .venv/bin/python bench/search.py                        # PostgreSQL: 10,000 x 16,000 chars,
                                                            # then 1,000,000 x ~400 chars
    .venv/bin/python bench/search.py --database sqlite      # SQLite: 100,000 x ~400 chars
    .venv/bin/python bench/search.py --sizes 2000:16000,50000:400 --calls 10
    .venv/bin/python bench/search.py --keep-database      # then, without loading again:
    .venv/bin/python bench/search.py --reuse

Each size is COUNT:CHARACTERS (memories, and their length before a +-25% variation, at most
16,000). It creates a bench database (PostgreSQL: `heyaira_bench_search`, dropped at the end
unless --keep-database; SQLite: a temporary file), migrates it, sets up a project and an API
key through the services (bench/fixtures.py), loads the memories (bench/search_fixtures.py:
one INSERT ... SELECT over generate_series on PostgreSQL, executemany on SQLite; each size's
memories written evenly over the last three years, since the search reads the newest days,
months and years first) and starts the real server (uvicorn, one worker, DEBUG off) on
127.0.0.1. For each size and query it times --calls sequential calls after two untimed ones:
GET /api/v1/memories/search and a JSON-RPC tools/call on /mcp, each on one keep-alive
connection. Sizes are loaded cumulatively (the second size tops the project up). Every call
must answer 200 without an error; timing one size stops at --time-limit. --reuse times the
memories a kept PostgreSQL database holds, without creating or loading anything.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


from bench.mcp_latency import (
    PROTOCOL_VERSION,
    RESULT_MARKER,
    BenchFailed,
    Server,
    bench_database,
    free_port,
    in_django,
    manage,
    percentile,
    server_environment,
    start_server,
    stop_server,
)
from bench.search_words import vocabulary

# name -> query; the vocabulary's words are made up (bench/search_fixtures.py), so the common
# ones are named by their rank there.
QUERIES = {
    "common word": "{w0}",
    "two common words": "{w0} {w1}",
    "common, never together": "ipsum dolor",
    "common minus common": "{w0} -{w1}",
    "phrase never written": '"dolor ipsum"',
    "rare word": "kestrel",
    "mid-frequency word": "{w2000}",
    "no match": "osprey",
    "exclusion only": "-{w0}",
    "hostile syntax": "{w0}\" & | ! : * ( ) ' ; -- NEAR(x) col:{w1}",
    "200 characters": "",  # filled below: common words up to the longest query
    "unicode": "ñandú 🦅 ナンドゥ {w3}",
}


def queries() -> dict[str, str]:
    words = vocabulary()
    named = {f"w{rank}": words[rank] for rank in (0, 1, 2, 3, 2000)}
    filled = {name: text.format(**named) for name, text in QUERIES.items()}
    long_query = " ".join(words[:60])[:200]
    filled["200 characters"] = long_query
    return filled


class Clients:
    """REST and MCP, each on one keep-alive connection, with the bench's API key."""

    def __init__(self, server: Server, api_key: str) -> None:
        auth = {"Authorization": f"Bearer {api_key}"}
        self.rest = httpx2.Client(base_url=f"{server.url}/api/v1/", timeout=60, headers=auth)
        self.mcp = httpx2.Client(
            timeout=60,
            headers={
                **auth,
                "Accept": "application/json, text/event-stream",
                "Content-Type": "application/json",
                "MCP-Protocol-Version": PROTOCOL_VERSION,
            },
        )
        self.mcp_url = server.mcp_url

    def rest_search(self, query: str) -> int:
        response = self.rest.get("memories/search", params={"query": query, "limit": 10})
        if response.status_code != 200:
            raise BenchFailed(f"REST {response.status_code}: {response.text[:200]}")
        return len(response.json()["results"])

    def mcp_search(self, query: str) -> int:
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "memory_search", "arguments": {"query": query, "limit": 10}},
        }
        response = self.mcp.post(self.mcp_url, content=json.dumps(message))
        answer = response.json() if response.status_code == 200 else {}
        result = answer.get("result", {})
        if response.status_code != 200 or result.get("isError", True):
            raise BenchFailed(f"MCP {response.status_code}: {response.text[:200]}")
        return len(result["structuredContent"]["results"])

    def close(self) -> None:
        self.rest.close()
        self.mcp.close()


def time_queries(clients: Clients, calls: int, deadline: float) -> list[dict[str, Any]]:
    rows = []
    for name, query in queries().items():
        row: dict[str, Any] = {"query": name}
        for transport, call in (("rest", clients.rest_search), ("mcp", clients.mcp_search)):
            found = call(query)
            call(query)
            seconds = []
            for _ in range(calls):
                started = time.perf_counter()
                call(query)
                seconds.append(time.perf_counter() - started)
            row[transport] = (statistics.median(seconds), percentile(seconds, 95))
            row["found"] = found
        rows.append(row)
        if time.monotonic() > deadline:
            raise BenchFailed("--time-limit reached")
    return rows


def print_rows(label: str, rows: list[dict[str, Any]]) -> None:
    print(f"\n{label}")
    print(f"  {'query':<26} {'found':>5}   REST p50 / p95 ms     MCP p50 / p95 ms")
    for row in rows:
        (rest50, rest95), (mcp50, mcp95) = row["rest"], row["mcp"]
        print(
            f"  {row['query']:<26} {row['found']:>5}   {1000 * rest50:7.1f} / {1000 * rest95:7.1f}"
            f"     {1000 * mcp50:7.1f} / {1000 * mcp95:7.1f}"
        )


def in_search_django(env: dict[str, str], function: str, **kwargs: Any) -> Any:
    """Call bench.search_fixtures.<function>(**kwargs) in `manage.py shell`; its JSON."""
    code = f"from bench.search_fixtures import {function}\n{function}(**{kwargs!r})"
    output = manage(env, "shell", "-c", code, timeout=3600)
    marker = output.rindex(RESULT_MARKER)
    return json.loads(output[marker + len(RESULT_MARKER) :].splitlines()[0])


def print_plan(env: dict[str, str], query: str) -> None:
    plans = in_search_django(env, "explain", slug="bench", query=query)["plans"]
    print(f"\n  the plans PostgreSQL ran for {query!r} (auto_explain, ANALYZE, BUFFERS):")
    for plan in plans:
        for line in plan.splitlines():
            print(f"    {line}")


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database", choices=("postgresql", "sqlite"), default="postgresql")
    parser.add_argument("--sizes", help="COUNT:CHARACTERS,...")
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--time-limit", type=float, default=3600, help="seconds of timing per size")
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--db-name", default="heyaira_bench_search")
    parser.add_argument("--keep-database", action="store_true")
    parser.add_argument(
        "--reuse", action="store_true", help="time the kept PostgreSQL database as it is"
    )
    args = parser.parse_args(argv)
    if args.reuse and args.database != "postgresql":
        parser.error("--reuse needs --database postgresql")
    if args.sizes is None:
        args.sizes = "10000:16000,1000000:400" if args.database == "postgresql" else "100000:400"
    return args


def measure(
    env: dict[str, str], api_key: str, label: str, args: argparse.Namespace, folder: str
) -> None:
    port = int(env["HEYAIRA_PUBLIC_URL"].rsplit(":", 1)[1])
    server = start_server(env, port, Path(folder) / "server.log")
    clients = Clients(server, api_key)
    try:
        rows = time_queries(clients, args.calls, time.monotonic() + args.time_limit)
    finally:
        clients.close()
        stop_server(server)
    print_rows(f"{label} (load average {load_average()})", rows)
    if args.database == "postgresql":
        print_plan(env, queries()["common word"])
        print_plan(env, queries()["rare word"])


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


@contextmanager
def kept_database(args: argparse.Namespace) -> Iterator[str]:
    yield f"{args.postgres.rstrip('/')}/{args.db_name}"


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    sizes = [tuple(int(part) for part in size.split(":")) for size in args.sizes.split(",")]
    print(
        f"HeyAira search bench: {args.database}, uvicorn (1 worker, DEBUG off), {args.calls} calls"
    )
    database = kept_database(args) if args.reuse else bench_database(args)
    with database as database_url, tempfile.TemporaryDirectory() as folder:
        env = server_environment(database_url, free_port())
        manage(env, "migrate", "--verbosity", "0")
        if args.reuse:
            issued = in_search_django(env, "issue_api_key", slug="bench", username="bench")
            label = f"{issued['memories']:,} memories (reused database)"
            measure(env, issued["api_key"], label, args, folder)
            return 0
        api_key = in_django(env, "setup", username="bench", slug="bench", tasks=3, receipts=1)[
            "api_key"
        ]
        loaded = 0
        for count, characters in sizes:
            done = in_search_django(
                env, "load", slug="bench", count=count - loaded, characters=characters
            )
            loaded = count
            print(
                f"\nloaded {done['memories']:,} more memories (~{characters:,} characters, "
                f"written evenly over the last 3 years) in {done['seconds']} s"
            )
            measure(env, api_key, f"{count:,} memories", args, folder)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchFailed as failure:
        print(f"bench failed: {failure}", file=sys.stderr)
        sys.exit(1)
