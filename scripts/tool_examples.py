#!/usr/bin/env python
"""Call every HeyAira tool once through the official MCP Python SDK and print what came back.

    .venv/bin/python scripts/tool_examples.py --url http://127.0.0.1:8000 --api-key hak_...
    .venv/bin/python scripts/tool_examples.py --url ... --api-key ... --update docs/tools.md

The key needs continuity:read and continuity:write on a project (it writes one decision, one
task with a receipt and one running summary there). The output is one JSON object: for each
example, the arguments sent and the structured result (a tool error's `error` included), and the
`resume` prompt's brief. `--update FILE` writes each example into FILE's ```json block after its
`<!-- example: NAME -->` marker, the brief into the ```markdown block after
`<!-- prompt: resume -->`, and what each result costs (compact JSON bytes, what a model reads of
it) into the table between `<!-- result-bytes -->` and `<!-- /result-bytes -->`, so the
documented results are real ones; tests/docs/test_tool_examples_doc.py checks that they still
have the keys a live server returns, and that the table is the examples' own figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

Examples = dict[str, dict[str, Any]]
MARKER = re.compile(r"(<!-- example: (\S+) -->\n```json\n)(.*?)(\n```)", re.DOTALL)
PROMPT = re.compile(r"(<!-- prompt: resume -->\n```markdown\n)(.*?)(^```)", re.DOTALL | re.M)
COSTS = re.compile(r"(<!-- result-bytes -->\n)(.*?)(<!-- /result-bytes -->)", re.DOTALL)
BRIEF = "prompt: resume"  # the key the brief goes under in the output
TOOLS_LIST = "tools/list"  # and what a model reads of tools/list
SUMMARY = """# Running summary

Goal: ship the quick start.
Done: make run serves the app; the README's commands are tested.
Pending: the reverse-proxy guide.
Preferences: small commits, tests first.
"""


async def collect(url: str, api_key: str) -> Examples:
    examples: Examples = {}
    headers = {"Authorization": f"Bearer {api_key}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
    ):

        async def call(example: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
            result = await client.call_tool(tool, arguments)
            content = dict(result.structured_content or {})
            examples[example] = {"tool": tool, "arguments": arguments, "result": content}
            return content

        run = uuid.uuid4().hex[:8]
        identity = await call("server_identity", "server_identity", {})
        wc = identity["write_context"]
        decision = await call(
            "memory_add",
            "memory_add",
            {
                "write_context": wc,
                "kind": "decision",
                "title": "Keep continuity state in PostgreSQL",
                "content": "Production keeps HeyAira's state in PostgreSQL; SQLite is for the "
                "quick start only.",
                "rationale": "Transactions, row locks and full-text search in one store.",
                "source": "design review",
                "idempotency_key": f"example-{run}-decision",
            },
        )
        await call(
            "memory_add_decision_without_source",
            "memory_add",
            {
                "write_context": wc,
                "kind": "decision",
                "content": "Serve the web UI from the same process.",
                "rationale": "One deployment unit.",
            },
        )
        await call("memory_get", "memory_get", {"memory_id": decision["id"]})
        await call("memory_search", "memory_search", {"query": "PostgreSQL", "limit": 5})
        task = await call(
            "task_create",
            "task_create",
            {
                "write_context": wc,
                "title": "Document the reverse proxy",
                "description": "Done when docs/operating.md has a working nginx example.",
                "next_step": "Write the nginx server block.",
                "idempotency_key": f"example-{run}-task",
            },
        )
        await call("task_list", "task_list", {"status": "todo", "limit": 10})
        base = {"write_context": wc, "task_id": task["id"]}
        await call(
            "task_update",
            "task_update",
            {
                **base,
                "expected_version": 1,
                "status": "in_progress",
                "next_step": "Test it.",
                "session_ref": f"example-session-{run}",
            },
        )
        await call(
            "task_update_nothing_to_update",
            "task_update",
            {**base, "expected_version": 2, "status": None, "next_step": None},
        )
        await call(
            "task_update_stale_version",
            "task_update",
            {**base, "expected_version": 1, "status": "blocked"},
        )
        receipt = {
            "session_ref": f"example-session-{run}",
            "summary": "Wrote the nginx example and checked it against a local proxy.",
            "tests": [{"name": "tests/docs/test_readme_commands.py", "result": "passed"}],
            "commits": ["0123456789abcdef0123456789abcdef01234567"],
        }
        await call(
            "task_update_with_receipt",
            "task_update",
            {**base, "expected_version": 2, "status": "done", "work_receipt": receipt},
        )
        await call("task_get", "task_get", {"task_id": task["id"]})
        await call(
            "state_put", "state_put", {"write_context": wc, "agent": "docs-agent", "body": SUMMARY}
        )
        await call("state_get", "state_get", {"agent": "docs-agent"})
        # Tasks left open, so that the recovery index below has some to show: one ready, and one
        # blocked by it until it is done.
        guide = (
            await client.call_tool(
                "task_create",
                {
                    "write_context": wc,
                    "title": "Write the upgrade guide",
                    "description": "Done when docs/operating.md says how to upgrade, backups "
                    "first.",
                    "next_step": "List the steps.",
                    "idempotency_key": f"example-{run}-open-task",
                },
            )
        ).structured_content or {}
        await call(
            "task_create_blocked_by",
            "task_create",
            {
                "write_context": wc,
                "title": "Announce the upgrade guide",
                "description": "Done when the release notes link to the upgrade guide.",
                "blocked_by": [guide.get("id")],
                "idempotency_key": f"example-{run}-blocked-task",
            },
        )
        await call("task_list_ready", "task_list", {"status": "ready", "limit": 3})
        await call("continuity_context", "continuity_context", {"memory_limit": 3, "task_limit": 3})
        await call(
            "task_claim_next",
            "task_claim_next",
            {
                "write_context": wc,
                "session_ref": f"example-claimer-{run}",
                "lease_seconds": 600,
                "idempotency_key": f"example-{run}-claim",
            },
        )
        claimed = examples["task_claim_next"]["result"].get("task") or {}
        await call(
            "task_heartbeat",
            "task_heartbeat",
            {
                "write_context": wc,
                "task_id": claimed.get("id"),
                "session_ref": f"example-claimer-{run}",
            },
        )
        prompt = await client.get_prompt("resume")
        text = "".join(m.content.text for m in prompt.messages if m.content.type == "text")
        examples[BRIEF] = {"prompt": "resume", "text": text}
        listed = await client.list_tools()
        tools = [
            tool.model_dump(by_alias=True, mode="json", exclude_none=True) for tool in listed.tools
        ]
        examples[TOOLS_LIST] = {"bytes": sum(model_visible(tool) for tool in tools)}
    return examples


def compact(value: Any) -> int:
    """Bytes of `value` as compact UTF-8 JSON: what a client hands a model of a result."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def model_visible(tool: dict[str, Any]) -> int:
    """Bytes a model reads of one tools/list entry: name, description, inputSchema, _meta."""
    return compact(
        {key: tool[key] for key in ("name", "description", "inputSchema", "_meta") if key in tool}
    )


def cost_table(examples: Examples) -> str:
    """One row per example result: the tool, and its bytes (structuredContent, compact)."""
    rows = ["| example | tool | bytes |", "| --- | --- | --: |"]
    for name, example in examples.items():
        if "tool" in example:
            rows.append(f"| `{name}` | `{example['tool']}` | {compact(example['result']):,} |")
    return "\n".join(rows) + "\n"


def update(document: Path, examples: Examples) -> list[str]:
    """Rewrite each marked block with its example; returns the markers that had none."""
    missing: list[str] = []

    def replace(match: re.Match[str]) -> str:
        name = match.group(2)
        if name not in examples:
            missing.append(name)
            return match.group(0)
        body = json.dumps(examples[name], indent=2, ensure_ascii=False)
        return f"{match.group(1)}{body}{match.group(4)}"

    text = MARKER.sub(replace, document.read_text())
    if BRIEF in examples:
        brief = examples[BRIEF]["text"].rstrip("\n") + "\n"
        text = PROMPT.sub(lambda m: f"{m.group(1)}{brief}{m.group(3)}", text)
    # In the page's order, from what the page now shows.
    tools = {m.group(2): json.loads(m.group(3)) for m in MARKER.finditer(text)}
    text = COSTS.sub(lambda m: f"{m.group(1)}{cost_table(tools)}{m.group(3)}", text)
    document.write_text(text)
    return missing


def documented(document: Path) -> Examples:
    """The examples a document holds, by marker name."""
    return {m.group(2): json.loads(m.group(3)) for m in MARKER.finditer(document.read_text())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="the server's public URL")
    parser.add_argument("--api-key", required=True, help="hak_... with read and write")
    parser.add_argument("--update", type=Path, help="write the examples into this Markdown file")
    options = parser.parse_args()
    examples = asyncio.run(collect(options.url.rstrip("/"), options.api_key))
    if options.update:
        missing = update(options.update, examples)
        if missing:
            sys.exit(f"no example for the markers {missing}")
    print(json.dumps(examples, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
