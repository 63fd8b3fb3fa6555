"""docs/tools.md shows real results: scripts/tool_examples.py, run against a live server, returns
results with exactly the keys the page shows, for every tool, and the `resume` prompt's brief;
the page's table of what each result costs is its examples' own figures."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from scripts.tool_examples import BRIEF, COSTS, PROMPT, cost_table, documented
from tests.live import REPO, LiveServer

TOOLS = {
    "server_identity",
    "continuity_context",
    "memory_add",
    "memory_get",
    "memory_search",
    "task_create",
    "task_get",
    "task_list",
    "task_update",
    "task_claim_next",
    "task_heartbeat",
    "state_put",
    "state_get",
}


def keys(value: Any) -> Any:
    """The shape that must match: dict keys all the way down, lists by their first item."""
    if isinstance(value, dict):
        return {name: keys(item) for name, item in value.items()}
    if isinstance(value, list):
        return [keys(value[0])] if value else []
    return None


def _same_keys(documented_value: Any, live_value: Any, where: str) -> list[str]:
    if isinstance(documented_value, dict) and isinstance(live_value, dict):
        problems = []
        if set(documented_value) != set(live_value):
            problems.append(
                f"{where}: the page has {sorted(documented_value)}, the server {sorted(live_value)}"
            )
        for name in set(documented_value) & set(live_value):
            problems += _same_keys(documented_value[name], live_value[name], f"{where}.{name}")
        return problems
    if isinstance(documented_value, list) and isinstance(live_value, list):
        if documented_value and live_value:
            return _same_keys(documented_value[0], live_value[0], f"{where}[0]")
        return []
    if isinstance(documented_value, dict | list) != isinstance(live_value, dict | list):
        return [f"{where}: the page shows {documented_value!r}, the server {live_value!r}"]
    return []


def test_the_page_shows_an_example_of_every_tool():
    page = documented(REPO / "docs" / "tools.md")
    assert {example["tool"] for example in page.values()} == TOOLS


def test_the_cost_table_gives_each_documented_result_its_bytes():
    text = (REPO / "docs" / "tools.md").read_text()
    table = COSTS.search(text)
    assert table is not None, "docs/tools.md has no <!-- result-bytes --> table"
    assert table.group(2) == cost_table(documented(REPO / "docs" / "tools.md"))


def test_the_page_shows_the_brief_of_the_resume_prompt():
    brief = PROMPT.search((REPO / "docs" / "tools.md").read_text())
    assert brief is not None
    assert brief.group(2).startswith("# HeyAira: Demo (demo)\n")
    assert "\n## Open tasks (" in brief.group(2)


def test_the_documented_results_have_the_keys_a_live_server_returns(asgi_server: LiveServer):
    asgi_server.add_person("owner", "a-long-password-1234", "demo", "owner")
    key = asgi_server.manage("create_api_key", "demo", "--user", "owner").strip().splitlines()[-1]
    done = subprocess.run(
        [sys.executable, "scripts/tool_examples.py", "--url", asgi_server.url, "--api-key", key],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    live = json.loads(done.stdout)
    page = documented(REPO / "docs" / "tools.md")
    assert set(page) <= set(live), f"examples the script no longer makes: {set(page) - set(live)}"
    problems = []
    for name, example in page.items():
        problems += _same_keys(example, live[name], name)
    assert not problems, "\n".join(problems)
    stale = live["task_update_stale_version"]["result"]["error"]
    assert stale["code"] == "stale_version"
    assert stale["current_version"] == 2
    assert live[BRIEF]["text"].startswith("# HeyAira: Demo (demo)\n")
